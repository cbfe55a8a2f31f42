//! `fifo`: each die serves its transactions in arrival order. The head waits for its data or for the
//! operations it depends on and holds the die meanwhile (head-of-line blocking) — the direct engine's
//! rule, first come, first served per die.

use super::{Cand, TxnScheduler};

#[derive(Clone)]
pub struct Fifo;

impl TxnScheduler for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }
    fn pick(&mut self, _now: u64, _die: u32, cands: &[Cand]) -> Option<usize> {
        let head = cands
            .iter()
            .enumerate()
            .min_by_key(|(_, c)| c.seq)
            .map(|(i, _)| i)?;
        cands[head].ready.then_some(head)
    }
}
