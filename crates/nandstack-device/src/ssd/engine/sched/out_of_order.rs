//! `out_of_order`: each die serves the oldest transaction that can start now. A transaction still
//! waiting for its data, or for an operation on another die, does not hold its die — the resource-driven
//! idea of Sprinkler (Jung & Kandemir, HPCA 2014) and of MQSim's `OUT_OF_ORDER` scheduler, without
//! priorities between transaction classes.

use super::{oldest_ready, Cand, TxnScheduler};

#[derive(Clone)]
pub struct OutOfOrder;

impl TxnScheduler for OutOfOrder {
    fn name(&self) -> &'static str {
        "out_of_order"
    }
    fn pick(&mut self, _now: u64, _die: u32, cands: &[Cand]) -> Option<usize> {
        oldest_ready(cands, |_| true)
    }
}
