//! Invariant checks (run by tests and under `verify`):
//! * every virtual page is exactly one of: never touched (or the zero page), resident (its PTE maps a
//!   frame that maps it back), or swapped (its PTE holds a slot with swap count 1 owned by it) — and
//!   a swapped page may additionally sit in the swap cache, unmapped, but never in two frames;
//! * every in-use frame is on exactly one LRU list of its cgroup (kernel pages on none), list links
//!   and lengths agree, an anonymous frame not mapped is in the swap cache, a file frame is indexed;
//! * swap: a slot is used iff it has a swap count, the swap-cache bit or is parked in a slot cache;
//!   the swap cache maps slot → frame ↔ frame → slot; `used` and the allocator's cluster counts agree;
//! * cgroup usage = frames + page-table pages charged to it; free + used frames = RAM.

use nandstack_core::{Error, Result};

use super::Host;
use crate::swap::{map_count, MAP_BAD, MAP_CACHE};
use crate::vm::page::*;
use crate::vm::workingset::is_shadow;

fn bad(msg: String) -> Error {
    Error::Invariant(msg)
}

impl Host {
    pub fn check_invariants(&self) -> Result<()> {
        self.check_ptes()?;
        self.check_frames()?;
        self.check_swap()?;
        self.cswap_check()?;
        Ok(())
    }

    fn check_ptes(&self) -> Result<()> {
        let vm = &self.vm;
        for (vpn, &pte) in vm.ptes.iter().enumerate() {
            let vpn = vpn as u32;
            if is_present(pte) {
                let f = pte_frame(pte);
                let fr = vm
                    .frames
                    .get(f as usize)
                    .ok_or_else(|| bad(format!("vpn {vpn}: PTE maps frame {f} beyond RAM")))?;
                if !fr.has(F_INUSE) || fr.has(F_KERNEL) || !fr.has(F_MAPPED) || fr.vpn != vpn {
                    return Err(bad(format!(
                        "vpn {vpn}: PTE maps frame {f} which does not map it back (flags {:#x}, vpn {})",
                        fr.flags, fr.vpn
                    )));
                }
                if fr.has(F_SWAPCACHE) && map_count(self.swap.map[fr.key as usize]) != 0 {
                    return Err(bad(format!(
                        "vpn {vpn}: resident and still counted on slot {}",
                        fr.key
                    )));
                }
            } else if is_swap(pte) {
                let s = pte_slot(pte);
                if s == 0 || s >= self.swap.nslots {
                    return Err(bad(format!("vpn {vpn}: swap entry {s} outside the area")));
                }
                if map_count(self.swap.map[s as usize]) != 1 || self.swap.owner[s as usize] != vpn {
                    return Err(bad(format!(
                        "vpn {vpn}: slot {s} has count {} owner {}",
                        map_count(self.swap.map[s as usize]),
                        self.swap.owner[s as usize]
                    )));
                }
                let c = self.swap.cache[s as usize];
                if c != NONE && !is_shadow(c) {
                    let fr = &vm.frames[c as usize];
                    if !fr.has(F_SWAPCACHE) || fr.key != s || fr.has(F_MAPPED) || fr.vpn != vpn {
                        return Err(bad(format!(
                            "vpn {vpn}: swap cache frame {c} of slot {s} inconsistent"
                        )));
                    }
                }
            } else if pte != PTE_NONE && pte != PTE_ZERO {
                return Err(bad(format!("vpn {vpn}: malformed PTE {pte:#x}")));
            }
        }
        Ok(())
    }

    fn check_frames(&self) -> Result<()> {
        let vm = &self.vm;
        let mut charged = vec![0u64; vm.memcgs.len()];
        let mut on_list = vec![[0u64; NR_LRU]; vm.memcgs.len()];
        let mut in_use = 0u64;
        for (f, fr) in vm.frames.iter().enumerate() {
            let f = f as u32;
            if (fr.list as usize) >= NR_LRU && vm.links[f as usize] != Link::NONE {
                return Err(bad(format!("frame {f} is on no list but keeps LRU links")));
            }
            if !fr.has(F_INUSE) {
                continue;
            }
            in_use += 1;
            charged[fr.memcg as usize] += 1;
            if fr.has(F_KERNEL) {
                if fr.list != LIST_NONE {
                    return Err(bad(format!("kernel frame {f} on an LRU list")));
                }
                continue;
            }
            if (fr.list as usize) >= NR_LRU {
                return Err(bad(format!("frame {f} is on no LRU list ({})", fr.list)));
            }
            if fr.list != fr.lru_for() {
                return Err(bad(format!(
                    "frame {f} on list {} but belongs on {}",
                    fr.list,
                    fr.lru_for()
                )));
            }
            on_list[fr.memcg as usize][fr.list as usize] += 1;
            if fr.has(F_ANON) == fr.is_file() {
                return Err(bad(format!("frame {f} is not exactly one of anon/file")));
            }
            if fr.has(F_SWAPCACHE) {
                let s = fr.key as usize;
                if self.swap.cache[s] != f || self.swap.map[s] & MAP_CACHE == 0 {
                    return Err(bad(format!(
                        "frame {f} in swap cache but slot {s} disagrees"
                    )));
                }
            }
            if fr.has(F_MAPPED) {
                let pte = vm.ptes[fr.vpn as usize];
                if !is_present(pte) || pte_frame(pte) != f {
                    return Err(bad(format!(
                        "frame {f} says it maps vpn {} which disagrees",
                        fr.vpn
                    )));
                }
            } else if fr.has(F_ANON) && !fr.has(F_SWAPCACHE) {
                return Err(bad(format!(
                    "anonymous frame {f} is neither mapped nor in the swap cache"
                )));
            }
            if fr.is_file() && self.pc.index[fr.key as usize] != f {
                return Err(bad(format!(
                    "file frame {f} not indexed at page {}",
                    fr.key
                )));
            }
        }
        if in_use + vm.free.len() as u64 != vm.frames.len() as u64 {
            return Err(bad(format!(
                "frames: {in_use} used + {} free ≠ {}",
                vm.free.len(),
                vm.frames.len()
            )));
        }
        for (m, mc) in vm.memcgs.iter().enumerate() {
            if mc.usage != charged[m] {
                return Err(bad(format!(
                    "cgroup `{}`: usage {} but {} frames charged",
                    mc.name, mc.usage, charged[m]
                )));
            }
            for (l, (head, &counted)) in mc.lru.iter().zip(&on_list[m]).enumerate() {
                if head.len != counted {
                    return Err(bad(format!(
                        "cgroup `{}` list {l}: length {} but {counted} frames",
                        mc.name, head.len
                    )));
                }
                let (mut n, mut prev, mut cur) = (0u64, NONE, head.head);
                while cur != NONE {
                    let (fr, link) = (&vm.frames[cur as usize], vm.links[cur as usize]);
                    if link.prev != prev || fr.list as usize != l || fr.memcg as usize != m {
                        return Err(bad(format!(
                            "cgroup `{}` list {l}: broken link at {cur}",
                            mc.name
                        )));
                    }
                    n += 1;
                    if n > head.len {
                        return Err(bad(format!("cgroup `{}` list {l}: cycle", mc.name)));
                    }
                    prev = cur;
                    cur = link.next;
                }
                if prev != head.tail || n != head.len {
                    return Err(bad(format!("cgroup `{}` list {l}: tail/length", mc.name)));
                }
            }
        }
        for (id, &c) in self.pc.index.iter().enumerate() {
            if c != NONE && !is_shadow(c) {
                let fr = &vm.frames[c as usize];
                if !fr.is_file() || fr.key != id as u32 {
                    return Err(bad(format!("page cache entry {id} → frame {c} disagrees")));
                }
                if fr.has(F_DIRTY) && !self.pc.may_be_dirty(id as u32) {
                    return Err(bad(format!(
                        "dirty page cache entry {id} missing from maybe_dirty"
                    )));
                }
            }
        }
        Ok(())
    }

    fn check_swap(&self) -> Result<()> {
        let sw = &self.swap;
        let mut parked = vec![false; sw.map.len()];
        for s in sw.parked() {
            parked[s as usize] = true;
        }
        let mut used = 0u64;
        for (s, (&m, &c)) in sw.map.iter().zip(&sw.cache).enumerate() {
            if m == MAP_BAD {
                continue;
            }
            if m != 0 {
                used += 1;
            } else if c != NONE {
                return Err(bad(format!("free slot {s} still has a cache entry")));
            }
            let cached = c != NONE && !is_shadow(c);
            if (m & MAP_CACHE != 0) != (cached || parked[s]) {
                return Err(bad(format!(
                    "slot {s}: HAS_CACHE {} but cache entry {c:#x} (parked {})",
                    m & MAP_CACHE != 0,
                    parked[s]
                )));
            }
            if map_count(m) > 1 {
                return Err(bad(format!("slot {s}: swap count {}", map_count(m))));
            }
        }
        if used != sw.used {
            return Err(bad(format!(
                "swap: {} slots in use but used = {}",
                used, sw.used
            )));
        }
        sw.verify_allocator().map_err(bad)?;
        self.store.backend.check(&sw.map)
    }
}
