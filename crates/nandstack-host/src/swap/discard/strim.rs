//! STRIM (the DISS paper's "swap TRIM"): the OS TRIMs swapped-in data. A slot whose page was read back
//! from the device holds nothing the host needs any more (with CDH the page in memory is dirty and is
//! written again if evicted); such slots are collected, and once `strim_slots` of them (512 = 2 MiB) are
//! pending they are TRIMmed together, LBA-contiguous slots merged into one command — the batching the
//! paper describes, which delays each invalidation until the batch is full. A pending slot written
//! again before its batch goes out is dropped from it. Freed slots are TRIMmed in the device's idle time,
//! as iTRIM does ([`IdleTrim`]), unless a pending batch covers them.
//!
//! Without CDH a page swapped in and evicted clean (*swap-in-and-in*) keeps pointing at a slot STRIM
//! has trimmed; its next swap-in reads no data — the crash the paper describes, reported by the block
//! layer as lost host data.

use nandstack_core::Nanos;
use std::collections::BTreeSet;

use serde_json::json;

use super::IdleTrimConfig;
use super::{DiscardPolicy, IdleTrim};
use crate::swap::MAP_BAD;

pub struct SwapInTrim {
    batch: usize,
    idle: IdleTrim,
    /// Per slot: the device copy holds data the host will read (bitset).
    live: Vec<u64>,
    /// Swapped-in slots waiting for their batch.
    pending: BTreeSet<u32>,
    batches: u64,
    commands: u64,
    slots: u64,
    dropped: u64,
}

impl SwapInTrim {
    /// STRIM over `slots` slots (the padded map), TRIMming swapped-in slots in batches of `batch`.
    pub fn new(slots: u32, batch: u32, idle: &IdleTrimConfig) -> SwapInTrim {
        SwapInTrim {
            batch: batch.max(1) as usize,
            idle: IdleTrim::new(idle),
            live: vec![0; (slots as usize).div_ceil(64)],
            pending: BTreeSet::new(),
            batches: 0,
            commands: 0,
            slots: 0,
            dropped: 0,
        }
    }

    #[inline]
    fn is_live(&self, slot: u32) -> bool {
        self.live[slot as usize / 64] & (1 << (slot % 64)) != 0
    }

    /// The device copy of `slot` is dead; true if it was live.
    fn kill(&mut self, slot: u32) -> bool {
        let was = self.is_live(slot);
        self.live[slot as usize / 64] &= !(1 << (slot % 64));
        was
    }

    /// The full batch: its slots as runs of contiguous slots, one TRIM each, appended to `out`.
    fn flush(&mut self, out: &mut Vec<(u32, u32)>) {
        self.batches += 1;
        let first = out.len();
        let mut run: Option<(u32, u32)> = None;
        for s in std::mem::take(&mut self.pending) {
            self.slots += 1;
            match run {
                Some((a, n)) if a + n == s => run = Some((a, n + 1)),
                _ => {
                    if let Some(r) = run.replace((s, 1)) {
                        out.push(r);
                    }
                }
            }
        }
        out.extend(run);
        self.commands += (out.len() - first) as u64;
    }
}

impl DiscardPolicy for SwapInTrim {
    fn name(&self) -> &'static str {
        "strim"
    }
    fn slot_freed(&mut self, slot: u32, _map: &[u8], _out: &mut Vec<(u32, u32)>) {
        self.kill(slot);
        if !self.pending.contains(&slot) {
            self.idle.queue(slot);
        }
    }
    fn slot_read(&mut self, slot: u32, _map: &[u8], out: &mut Vec<(u32, u32)>) {
        if self.kill(slot) {
            self.pending.insert(slot);
            if self.pending.len() >= self.batch {
                self.flush(out);
            }
        }
    }
    fn slot_written(&mut self, slot: u32) {
        self.live[slot as usize / 64] |= 1 << (slot % 64);
        if self.pending.remove(&slot) {
            self.dropped += 1;
        }
    }
    fn discardable(&self, slot: u32, map: &[u8]) -> bool {
        map[slot as usize] != MAP_BAD && !self.is_live(slot)
    }
    fn next_deferred(
        &mut self,
        idle_from: Nanos,
        now: Nanos,
        map: &[u8],
    ) -> Option<(Nanos, u32, u32)> {
        self.idle.next_deferred(idle_from, now, map)
    }
    fn report(&self) -> serde_json::Value {
        let mut r = self.idle.report();
        r["strim_batches"] = json!(self.batches);
        r["strim_trim_commands"] = json!(self.commands);
        r["strim_trimmed_slots"] = json!(self.slots);
        r["strim_dropped_slots"] = json!(self.dropped);
        r["strim_pending_slots_end"] = json!(self.pending.len());
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swapped_in_slots_are_trimmed_in_batches_of_contiguous_runs() {
        let mut map = vec![0x80u8; 64];
        map[0] = MAP_BAD;
        let mut p = SwapInTrim::new(64, 6, &IdleTrimConfig::default());
        let mut out = Vec::new();
        for s in [3, 4, 5, 9, 20, 21, 30] {
            p.slot_written(s);
        }
        for s in [4, 9, 3, 21, 5] {
            p.slot_read(s, &map, &mut out);
        }
        assert!(out.is_empty(), "five of six");
        // Slot 9 is written again (CDH: its page was evicted) before the batch: it leaves the batch.
        p.slot_written(9);
        p.slot_read(20, &map, &mut out);
        assert!(out.is_empty());
        p.slot_read(30, &map, &mut out);
        assert_eq!(out, vec![(3, 3), (20, 2), (30, 1)]);
        assert!(p.discardable(4, &map) && !p.discardable(9, &map) && !p.discardable(0, &map));
        let r = p.report();
        assert_eq!(r["strim_batches"], 1);
        assert_eq!(r["strim_trim_commands"], 3);
        assert_eq!(r["strim_trimmed_slots"], 6);
        assert_eq!(r["strim_dropped_slots"], 1);
    }

    #[test]
    fn freed_slots_go_to_idle_time_unless_a_batch_holds_them() {
        let mut map = vec![0x80u8; 64];
        let mut p = SwapInTrim::new(64, 100, &IdleTrimConfig::default());
        let mut out = Vec::new();
        p.slot_written(7);
        p.slot_written(8);
        p.slot_read(7, &map, &mut out);
        map[7] = 0;
        map[8] = 0;
        p.slot_freed(7, &map, &mut out);
        p.slot_freed(8, &map, &mut out);
        assert!(out.is_empty());
        // Only slot 8 waits for idle time; slot 7 waits in the swap-in batch.
        assert_eq!(
            p.next_deferred(Nanos(0), Nanos::MAX, &map)
                .map(|t| (t.1, t.2)),
            Some((8, 1))
        );
        assert_eq!(p.next_deferred(Nanos(0), Nanos::MAX, &map), None);
        assert_eq!(p.report()["strim_pending_slots_end"], 1);
    }
}
