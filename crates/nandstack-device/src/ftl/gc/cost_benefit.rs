//! Cost-benefit (Rosenblum & Ousterhout, LFS): maximise age × (1 − u) / (2u), where u is the block's valid
//! fraction and age the logical time (host units written) since the block was last modified. u = 0 scores
//! infinity. A full scan of the candidates in scope per selection (O(blocks)); ties go to the lower block id.

use nandstack_core::Rng;

use super::{CandidateSet, Scope, VictimPolicy};
use crate::ftl::blocks::BlockTable;

#[derive(Clone)]
pub struct CostBenefit {
    set: CandidateSet,
}

impl CostBenefit {
    pub fn new(planes: u32, table: &BlockTable) -> CostBenefit {
        CostBenefit {
            set: CandidateSet::new(planes, table),
        }
    }

    /// The cost-benefit score of a block at logical time `now`.
    pub fn score(table: &BlockTable, block: u32, now: u64) -> f64 {
        let u = table.utilization(block);
        if u == 0.0 {
            return f64::INFINITY;
        }
        let age = now.saturating_sub(table.modified_at[block as usize]) as f64 + 1.0;
        age * (1.0 - u) / (2.0 * u)
    }
}

impl VictimPolicy for CostBenefit {
    fn needs_age(&self) -> bool {
        true
    }
    candidate_set_events!();
    fn name(&self) -> &'static str {
        "cost_benefit"
    }
    fn select(
        &mut self,
        scope: Scope,
        table: &BlockTable,
        now: u64,
        _rng: &mut Rng,
    ) -> Option<u32> {
        let mut best: Option<(f64, u32)> = None;
        for b in self.set.iter(scope) {
            let s = Self::score(table, b, now);
            if best.is_none_or(|(bs, bb)| s > bs || (s == bs && b < bb)) {
                best = Some((s, b));
            }
        }
        let b = best?.1;
        self.set.remove(b, table);
        Some(b)
    }
}
