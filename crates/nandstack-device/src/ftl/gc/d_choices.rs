//! d-choices greedy: sample `d` sealed blocks uniformly (with replacement) and take the one with the fewest
//! valid units (ties: the earlier sample). d = 1 is random; large d approaches greedy.

use nandstack_core::Rng;

use super::{CandidateSet, Scope, VictimPolicy};
use crate::ftl::blocks::BlockTable;

#[derive(Clone)]
pub struct DChoices {
    set: CandidateSet,
    d: u32,
}

impl DChoices {
    pub fn new(planes: u32, table: &BlockTable, d: u32) -> DChoices {
        DChoices {
            set: CandidateSet::new(planes, table),
            d: d.max(1),
        }
    }
}

impl VictimPolicy for DChoices {
    candidate_set_events!();
    fn name(&self) -> &'static str {
        "d_choices"
    }
    fn select(
        &mut self,
        scope: Scope,
        table: &BlockTable,
        _now: u64,
        rng: &mut Rng,
    ) -> Option<u32> {
        let mut best = self.set.sample(scope, rng)?;
        for _ in 1..self.d {
            let c = self.set.sample(scope, rng).expect("non-empty");
            if table.valid[c as usize] < table.valid[best as usize] {
                best = c;
            }
        }
        self.set.remove(best, table);
        Some(best)
    }
}
