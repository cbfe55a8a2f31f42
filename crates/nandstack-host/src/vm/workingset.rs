//! Workingset detection (`mm/workingset.c`): an evicted page leaves a shadow entry recording the
//! cgroup's nonresident age at eviction and whether the page was in the workingset; when it refaults,
//! the refault distance (evictions and activations since) is compared with the size of the workingset
//! it competes with, and a page that would have stayed resident with that much memory is activated.
//!
//! Shadow encoding (`u32`): bit 31 marks a shadow, bit 30 PG_workingset, bits 0–29 the age modulo 2^30.

use super::memcg::Memcg;
use super::page::{LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE, NR_LRU};
use super::Vm;

pub const SHADOW: u32 = 1 << 31;
const SHADOW_WS: u32 = 1 << 30;
const AGE_MASK: u64 = (1 << 30) - 1;

#[inline]
pub fn is_shadow(v: u32) -> bool {
    v != u32::MAX && v & SHADOW != 0
}

/// `workingset_eviction`: the shadow to store, and advance the cgroup's nonresident age.
pub fn eviction(m: &mut Memcg, workingset: bool) -> u32 {
    let age = m.nonresident_age & AGE_MASK;
    m.nonresident_age += 1;
    SHADOW | if workingset { SHADOW_WS } else { 0 } | age as u32
}

/// Outcome of a refault check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refault {
    /// Activate the refaulting page (its refault distance fits in the workingset).
    pub activate: bool,
    /// The page was in the workingset when evicted (set PG_workingset, count a restore).
    pub restore: bool,
}

/// `workingset_refault` for a page of type `file` in cgroup `m`, whose LRU sizes read `lru` (as
/// flushed: `workingset_test_recent` reads `lruvec_page_state`), with `swap_free` telling whether swap
/// space is left (anon competes only then).
pub fn refault(
    m: &mut Memcg,
    shadow: u32,
    file: bool,
    lru: [u64; NR_LRU],
    swap_free: bool,
) -> Refault {
    debug_assert!(is_shadow(shadow));
    let eviction = (shadow & !(SHADOW | SHADOW_WS)) as u64;
    let workingset = shadow & SHADOW_WS != 0;
    let now = m.nonresident_age & AGE_MASK;
    let distance = now.wrapping_sub(eviction) & AGE_MASK;
    if file {
        m.stats.workingset_refault_file += 1;
    } else {
        m.stats.workingset_refault_anon += 1;
    }
    let len = |l: u8| lru[l as usize];
    let mut ws = len(LRU_ACTIVE_FILE);
    if !file {
        ws += len(LRU_INACTIVE_FILE);
    }
    if swap_free {
        ws += len(LRU_ACTIVE_ANON);
        if file {
            ws += len(LRU_INACTIVE_ANON);
        }
    }
    if distance > ws {
        return Refault {
            activate: false,
            restore: false,
        };
    }
    // Activation ages the workingset clock too.
    m.nonresident_age += 1;
    if file {
        m.stats.workingset_activate_file += 1;
    } else {
        m.stats.workingset_activate_anon += 1;
    }
    if workingset {
        if file {
            m.stats.workingset_restore_file += 1;
        } else {
            m.stats.workingset_restore_anon += 1;
        }
    }
    Refault {
        activate: true,
        restore: workingset,
    }
}

impl Vm {
    /// `workingset_refault` of a page of cgroup `m` read back with `shadow`; a restored workingset
    /// page costs its LRU type one I/O (`lru_note_cost_refault`).
    pub fn workingset_refault(
        &mut self,
        m: u16,
        shadow: u32,
        file: bool,
        swap_free: bool,
        scm: u64,
    ) -> Refault {
        let lru = self.lruvec_stats(m).lru;
        let r = refault(&mut self.memcgs[m as usize], shadow, file, lru, swap_free);
        if r.restore {
            self.lru_note_cost(m, file, 1, 0, scm);
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lru(m: &Memcg) -> [u64; NR_LRU] {
        std::array::from_fn(|l| m.lru_len(l as u8))
    }

    #[test]
    fn refault_within_workingset_activates() {
        let mut m = Memcg::new("t", u64::MAX, 60);
        m.lru[LRU_ACTIVE_ANON as usize].len = 10;
        let s = eviction(&mut m, true);
        for _ in 0..5 {
            eviction(&mut m, false);
        }
        let sizes = lru(&m);
        let r = refault(&mut m, s, false, sizes, true);
        assert!(r.activate && r.restore);
        assert_eq!(m.stats.workingset_activate_anon, 1);
        // Far refault: distance 20 > workingset 10.
        let s = eviction(&mut m, false);
        for _ in 0..20 {
            eviction(&mut m, false);
        }
        let sizes = lru(&m);
        let r = refault(&mut m, s, false, sizes, true);
        assert!(!r.activate);
        // Without free swap, active anon does not count for an anon refault.
        let s = eviction(&mut m, false);
        eviction(&mut m, false);
        let sizes = lru(&m);
        let r = refault(&mut m, s, false, sizes, false);
        assert!(!r.activate);
        assert_eq!(m.lru_len(LRU_INACTIVE_ANON), 0);
    }
}
