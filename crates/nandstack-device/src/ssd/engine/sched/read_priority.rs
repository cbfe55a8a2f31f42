//! `read_priority`: reads first (host reads, read-modify-write reads, mapping reads), then host-data
//! programs, then GC work; the oldest ready transaction within a class. Read Priority Scheduling (RPS),
//! the baseline of Wu & He (FAST'12), and the class order of MQSim's `OUT_OF_ORDER` scheduler when GC
//! is not urgent.

use super::{oldest_ready, Cand, Class, TxnScheduler};

#[derive(Clone)]
pub struct ReadPriority;

impl TxnScheduler for ReadPriority {
    fn name(&self) -> &'static str {
        "read_priority"
    }
    fn pick(&mut self, _now: u64, _die: u32, cands: &[Cand]) -> Option<usize> {
        [Class::Read, Class::Write, Class::Gc]
            .into_iter()
            .find_map(|k| oldest_ready(cands, |c| c.class == k))
    }
}
