//! Random: a uniformly random sealed block in scope (a baseline; also the "d = 1" case of d-choices).

use nandstack_core::Rng;

use super::{CandidateSet, Scope, VictimPolicy};
use crate::ftl::blocks::BlockTable;

#[derive(Clone)]
pub struct RandomVictim {
    set: CandidateSet,
}

impl RandomVictim {
    pub fn new(planes: u32, table: &BlockTable) -> RandomVictim {
        RandomVictim {
            set: CandidateSet::new(planes, table),
        }
    }
}

impl VictimPolicy for RandomVictim {
    candidate_set_events!();
    fn name(&self) -> &'static str {
        "random"
    }
    fn select(
        &mut self,
        scope: Scope,
        table: &BlockTable,
        _now: u64,
        rng: &mut Rng,
    ) -> Option<u32> {
        let b = self.set.sample(scope, rng)?;
        self.set.remove(b, table);
        Some(b)
    }
}
