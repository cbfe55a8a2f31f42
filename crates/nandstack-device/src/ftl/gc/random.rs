//! Random: a uniformly random sealed block in scope (a baseline; also the "d = 1" case of d-choices).

use nandstack_core::Rng;

use super::{CandidateSet, Scope, VictimPolicy};
use crate::ftl::blocks::BlockTable;

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
    fn memory_bytes(&self) -> usize {
        self.set.memory_bytes()
    }
    fn name(&self) -> &'static str {
        "random"
    }
    fn on_sealed(&mut self, block: u32, table: &BlockTable) {
        self.set.insert(block, table);
    }
    fn on_invalidated(&mut self, _block: u32, _table: &BlockTable) {}
    fn remove(&mut self, block: u32, table: &BlockTable) {
        self.set.remove(block, table);
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
