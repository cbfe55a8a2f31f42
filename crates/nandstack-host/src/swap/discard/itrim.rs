//! iTRIM (Liang et al., TCAD 2021; the DISS paper's baseline): TRIMs of freed swap slots are deferred
//! to the device's idle time. A freed slot is queued; once the device has had no read or write in
//! flight for `idle_ms`, a round issues up to `requests_per_round` TRIM commands at once (each the next
//! run of contiguous queued slots, lowest first, up to `max_slots`), and while the device stays idle a
//! new round follows every `round_interval_ms` (F2FS's background discard thread works this way:
//! `DEF_MAX_DISCARD_REQUEST` = 8 per round, `DEF_MIN_DISCARD_ISSUE_TIME` = 50 ms). A queued slot that is
//! allocated again before its TRIM is dropped from the queue: its next write replaces the stale copy on
//! the device, and a TRIM issued later would destroy the new data.

use nandstack_core::Nanos;
use std::collections::BTreeSet;

use serde_json::json;

use super::DiscardPolicy;
use super::IdleTrimConfig;

#[derive(Clone, Debug, Default)]
struct Stats {
    queued: u64,
    rounds: u64,
    commands: u64,
    slots: u64,
    superseded: u64,
    forgotten: u64,
}

pub struct IdleTrim {
    idle_ns: Nanos,
    interval_ns: Nanos,
    per_round: u32,
    max_slots: u32,
    /// Freed slots waiting for idle time.
    pending: BTreeSet<u32>,
    /// The round in progress: its start and the commands issued in it.
    round: Option<(Nanos, u32)>,
    /// Earliest start of the next round.
    next_round: Nanos,
    stats: Stats,
}

impl IdleTrim {
    pub fn new(c: &IdleTrimConfig) -> IdleTrim {
        IdleTrim {
            idle_ns: Nanos((c.idle_ms * 1e6).round() as u64),
            interval_ns: Nanos((c.round_interval_ms * 1e6).round() as u64),
            per_round: c.requests_per_round.max(1),
            max_slots: c.max_slots.max(1),
            pending: BTreeSet::new(),
            round: None,
            next_round: Nanos::ZERO,
            stats: Stats::default(),
        }
    }

    /// Queue a freed slot for the next idle period.
    pub fn queue(&mut self, slot: u32) {
        if self.pending.insert(slot) {
            self.stats.queued += 1;
        }
    }

    /// Drop `n` queued slots from `first` (TRIMmed by other means).
    pub fn forget(&mut self, first: u32, n: u32) {
        let gone: Vec<u32> = self.pending.range(first..first + n).copied().collect();
        for s in gone {
            self.pending.remove(&s);
            self.stats.forgotten += 1;
        }
    }

    /// Slots still queued.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// The next run of queued slots that are still free, lowest first; queued slots in use again are
    /// dropped.
    fn cut(&mut self, map: &[u8]) -> Option<(u32, u32)> {
        while let Some(s) = self.pending.pop_first() {
            if map[s as usize] != 0 {
                self.stats.superseded += 1;
                continue;
            }
            let mut n = 1;
            while n < self.max_slots && self.pending.remove(&(s + n)) {
                if map[(s + n) as usize] != 0 {
                    self.stats.superseded += 1;
                    break;
                }
                n += 1;
            }
            return Some((s, n));
        }
        None
    }
}

impl DiscardPolicy for IdleTrim {
    fn name(&self) -> &'static str {
        "itrim"
    }
    fn slot_freed(&mut self, slot: u32, _map: &[u8], _out: &mut Vec<(u32, u32)>) {
        self.queue(slot);
    }
    fn next_deferred(
        &mut self,
        idle_from: Nanos,
        now: Nanos,
        map: &[u8],
    ) -> Option<(Nanos, u32, u32)> {
        loop {
            if self.pending.is_empty() {
                return None;
            }
            if let Some((at, issued)) = self.round {
                // The round goes on while the device has stayed idle since it started.
                if issued < self.per_round && idle_from.saturating_add(self.idle_ns) <= at {
                    let (first, n) = self.cut(map)?;
                    self.round = Some((at, issued + 1));
                    self.stats.commands += 1;
                    self.stats.slots += n as u64;
                    return Some((at, first, n));
                }
                self.next_round = at + self.interval_ns;
                self.round = None;
            }
            let start = idle_from.saturating_add(self.idle_ns).max(self.next_round);
            if start >= now {
                return None;
            }
            self.round = Some((start, 0));
            self.stats.rounds += 1;
        }
    }
    fn report(&self) -> serde_json::Value {
        let s = &self.stats;
        json!({
            "idle_queued_slots": s.queued,
            "idle_rounds": s.rounds,
            "idle_trim_commands": s.commands,
            "idle_trimmed_slots": s.slots,
            "idle_superseded_slots": s.superseded,
            "idle_forgotten_slots": s.forgotten,
            "idle_pending_slots_end": self.pending.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(idle_ms: f64, per_round: u32, interval_ms: f64, max: u32) -> IdleTrim {
        IdleTrim::new(&IdleTrimConfig {
            idle_ms,
            requests_per_round: per_round,
            round_interval_ms: interval_ms,
            max_slots: max,
        })
    }

    const MS: Nanos = Nanos(1_000_000);

    #[test]
    fn nothing_before_the_device_has_been_idle_long_enough() {
        let mut p = policy(10.0, 8, 50.0, 512);
        let map = vec![0u8; 64];
        let mut out = Vec::new();
        for s in 1..5 {
            p.slot_freed(s, &map, &mut out);
        }
        assert!(out.is_empty(), "iTRIM never discards at once");
        // Busy until 100 ms: idle from 110 ms. Asked at 110 ms: not yet; at 111 ms: one merged TRIM.
        assert_eq!(p.next_deferred(100 * MS, 110 * MS, &map), None);
        assert_eq!(
            p.next_deferred(100 * MS, 111 * MS, &map),
            Some((110 * MS, 1, 4))
        );
        assert_eq!(p.next_deferred(100 * MS, 111 * MS, &map), None);
        assert_eq!(p.pending(), 0);
    }

    #[test]
    fn rounds_issue_at_most_their_commands_then_wait_the_interval() {
        // Slots 1, 3, 5, … are separate runs; two commands per round, rounds 50 ms apart.
        let mut p = policy(10.0, 2, 50.0, 512);
        let map = vec![0u8; 64];
        let mut out = Vec::new();
        for s in (1..12).step_by(2) {
            p.slot_freed(s, &map, &mut out);
        }
        let mut got = Vec::new();
        while let Some(t) = p.next_deferred(Nanos(0), 200 * MS, &map) {
            got.push(t);
        }
        let times: Vec<u64> = got.iter().map(|t| t.0 / MS).collect();
        assert_eq!(times, vec![10, 10, 60, 60, 110, 110]);
        assert!(got.iter().all(|t| t.2 == 1));
    }

    #[test]
    fn a_host_request_ends_the_idle_period_and_reused_slots_are_dropped() {
        let mut p = policy(10.0, 1, 50.0, 4);
        let mut map = vec![0u8; 64];
        let mut out = Vec::new();
        for s in 1..=9 {
            p.slot_freed(s, &map, &mut out);
        }
        // Slot 3 is allocated again before the first round: the first TRIM stops before it.
        map[3] = 0x80;
        assert_eq!(
            p.next_deferred(Nanos(0), 11 * MS, &map),
            Some((10 * MS, 1, 2))
        );
        // A read completed at 30 ms: the next round waits for 40 ms (idle) and 60 ms (interval).
        assert_eq!(p.next_deferred(30 * MS, 59 * MS, &map), None);
        assert_eq!(
            p.next_deferred(30 * MS, 61 * MS, &map),
            Some((60 * MS, 4, 4))
        );
        assert_eq!(
            p.next_deferred(30 * MS, 200 * MS, &map),
            Some((110 * MS, 8, 2))
        );
        assert_eq!(p.next_deferred(30 * MS, 200 * MS, &map), None);
        let r = p.report();
        assert_eq!(r["idle_superseded_slots"], 1);
        assert_eq!(r["idle_trimmed_slots"], 8);
    }
}
