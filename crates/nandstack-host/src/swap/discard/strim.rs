//! STRIM (the DISS paper's "swap TRIM"): the OS TRIMs swapped-in data, in aligned groups of
//! `strim_slots` slots (512 = 2 MiB): a group is TRIMmed as soon as none of its slots holds data the
//! host will read again and at least one of them lost its data to a swap-in since the group's last
//! TRIM. A slot holds such data from the submission of its write until it is read (swapped in: with
//! CDH the page in memory is dirty and is written again if evicted) or freed. Freed slots are also
//! TRIMmed in the device's idle time, as iTRIM does ([`IdleTrim`]); a group TRIM takes its slots off
//! that queue.
//!
//! Without CDH a page swapped in and evicted clean (*swap-in-and-in*) keeps pointing at a slot STRIM
//! has trimmed; its next swap-in reads no data — the crash the paper describes, reported by the block
//! layer as lost host data.

use serde_json::json;

use super::{DiscardPolicy, IdleTrim};
use crate::config::IdleTrimConfig;
use crate::swap::MAP_BAD;

pub struct SwapInTrim {
    group: u32,
    idle: IdleTrim,
    /// Per slot: the device copy holds data the host will read (bitset).
    live: Vec<u64>,
    /// Per group: live slots.
    live_count: Vec<u32>,
    /// Per group: a swap-in killed data in it since its last TRIM.
    swapped_in: Vec<bool>,
    group_trims: u64,
    swapin_dead_slots: u64,
}

impl SwapInTrim {
    /// STRIM over `slots` slots (the padded map) in groups of `group`.
    pub fn new(slots: u32, group: u32, idle: &IdleTrimConfig) -> SwapInTrim {
        let group = group.max(1);
        let groups = slots.div_ceil(group) as usize;
        SwapInTrim {
            group,
            idle: IdleTrim::new(idle),
            live: vec![0; (slots as usize).div_ceil(64)],
            live_count: vec![0; groups],
            swapped_in: vec![false; groups],
            group_trims: 0,
            swapin_dead_slots: 0,
        }
    }

    #[inline]
    fn is_live(&self, slot: u32) -> bool {
        self.live[slot as usize / 64] & (1 << (slot % 64)) != 0
    }

    /// The device copy of `slot` is dead; true if it was live.
    fn kill(&mut self, slot: u32) -> bool {
        if !self.is_live(slot) {
            return false;
        }
        self.live[slot as usize / 64] &= !(1 << (slot % 64));
        self.live_count[(slot / self.group) as usize] -= 1;
        true
    }

    /// TRIM `slot`'s group if nothing in it is live and a swap-in killed data in it.
    fn maybe_trim(&mut self, slot: u32, map: &[u8], out: &mut Vec<(u32, u32)>) {
        let g = (slot / self.group) as usize;
        if self.live_count[g] > 0 || !self.swapped_in[g] {
            return;
        }
        self.swapped_in[g] = false;
        let first = g as u32 * self.group;
        let n = self.group.min(map.len() as u32 - first);
        self.idle.forget(first, n);
        self.group_trims += 1;
        out.push((first, n));
    }
}

impl DiscardPolicy for SwapInTrim {
    fn name(&self) -> &'static str {
        "strim"
    }
    fn whole_clusters(&self) -> bool {
        false
    }
    fn slot_freed(&mut self, slot: u32, map: &[u8], out: &mut Vec<(u32, u32)>) {
        self.idle.queue(slot);
        if self.kill(slot) {
            self.maybe_trim(slot, map, out);
        }
    }
    fn slot_read(&mut self, slot: u32, map: &[u8], out: &mut Vec<(u32, u32)>) {
        if self.kill(slot) {
            self.swapin_dead_slots += 1;
            self.swapped_in[(slot / self.group) as usize] = true;
            self.maybe_trim(slot, map, out);
        }
    }
    fn slot_written(&mut self, slot: u32) {
        if !self.is_live(slot) {
            self.live[slot as usize / 64] |= 1 << (slot % 64);
            self.live_count[(slot / self.group) as usize] += 1;
        }
    }
    fn discardable(&self, slot: u32, map: &[u8]) -> bool {
        map[slot as usize] != MAP_BAD && !self.is_live(slot)
    }
    fn next_deferred(&mut self, idle_from: u64, now: u64, map: &[u8]) -> Option<(u64, u32, u32)> {
        self.idle.next_deferred(idle_from, now, map)
    }
    fn report(&self) -> serde_json::Value {
        let mut r = self.idle.report();
        r["strim_group_trims"] = json!(self.group_trims);
        r["strim_swapped_in_slots"] = json!(self.swapin_dead_slots);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_is_trimmed_once_every_written_slot_is_swapped_in_or_freed() {
        let mut map = vec![0u8; 32];
        map[0] = MAP_BAD;
        let mut p = SwapInTrim::new(32, 8, &IdleTrimConfig::default());
        let mut out = Vec::new();
        for s in 9..13 {
            map[s] = 0x80;
            p.slot_written(s as u32);
        }
        // Three swap-ins: slot 12 still holds data.
        for s in 9..12 {
            p.slot_read(s, &map, &mut out);
        }
        assert!(out.is_empty());
        assert!(!p.discardable(12, &map) && p.discardable(9, &map));
        // Freeing slot 12 completes the group: one TRIM of the whole 8-slot group.
        map[12] = 0;
        p.slot_freed(12, &map, &mut out);
        assert_eq!(out, vec![(8, 8)]);
        // Its freed slot left the idle queue with it.
        assert_eq!(p.next_deferred(0, u64::MAX, &map), None);
        // A group emptied by frees alone is not STRIM's business: the idle path trims it.
        out.clear();
        map[20] = 0x80;
        p.slot_written(20);
        map[20] = 0;
        p.slot_freed(20, &map, &mut out);
        assert!(out.is_empty());
        assert_eq!(
            p.next_deferred(0, u64::MAX, &map).map(|t| (t.1, t.2)),
            Some((20, 1))
        );
        // The header is never discardable.
        assert!(!p.discardable(0, &map));
    }

    #[test]
    fn a_rewrite_before_the_last_swap_in_keeps_the_group() {
        let map = vec![0x80u8; 16];
        let mut p = SwapInTrim::new(16, 8, &IdleTrimConfig::default());
        let mut out = Vec::new();
        p.slot_written(1);
        p.slot_written(2);
        p.slot_read(1, &map, &mut out);
        // Slot 1 is written again (CDH: the swapped-in page was evicted) before slot 2 is read.
        p.slot_written(1);
        p.slot_read(2, &map, &mut out);
        assert!(out.is_empty(), "slot 1 holds data again");
        p.slot_read(1, &map, &mut out);
        assert_eq!(out, vec![(0, 8)]);
        let r = p.report();
        assert_eq!(r["strim_group_trims"], 1);
        assert_eq!(r["strim_swapped_in_slots"], 3);
    }
}
