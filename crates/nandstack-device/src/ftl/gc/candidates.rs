//! An indexable set of candidate blocks per plane with O(1) insert/remove (swap-remove) and uniform
//! sampling; the shared storage of the scanning/sampling policies.

use nandstack_core::Rng;

/// The `VictimPolicy` event methods of a policy whose state is a `CandidateSet` in a field named `set`:
/// every sealed block is a candidate, invalidations change nothing, removal forgets the block.
macro_rules! candidate_set_events {
    () => {
        fn memory_bytes(&self) -> usize {
            self.set.memory_bytes()
        }
        fn on_sealed(&mut self, block: u32, table: &BlockTable) {
            self.set.insert(block, table);
        }
        fn on_invalidated(&mut self, _block: u32, _table: &BlockTable) {}
        fn remove(&mut self, block: u32, table: &BlockTable) {
            self.set.remove(block, table);
        }
    };
}

use super::Scope;
use crate::ftl::blocks::{BlockTable, NONE};

#[derive(Clone, Debug)]
pub struct CandidateSet {
    per_plane: crate::exact::Exact<Vec<Vec<u32>>>,
    /// Position of a block in its plane's vector, or NONE.
    pos: Vec<u32>,
    total: usize,
}

impl CandidateSet {
    pub fn new(planes: u32, table: &BlockTable) -> CandidateSet {
        CandidateSet {
            per_plane: crate::exact::Exact(vec![Vec::new(); planes as usize]),
            pos: vec![NONE; table.len() as usize],
            total: 0,
        }
    }
    pub fn insert(&mut self, block: u32, table: &BlockTable) {
        debug_assert_eq!(
            self.pos[block as usize], NONE,
            "block {block} inserted twice"
        );
        let v = &mut self.per_plane[table.plane_of(block) as usize];
        self.pos[block as usize] = v.len() as u32;
        v.push(block);
        self.total += 1;
    }
    pub fn memory_bytes(&self) -> usize {
        4 * self.pos.len()
            + self
                .per_plane
                .iter()
                .map(|v| 4 * v.capacity())
                .sum::<usize>()
    }
    pub fn contains(&self, block: u32) -> bool {
        self.pos[block as usize] != NONE
    }
    pub fn remove(&mut self, block: u32, table: &BlockTable) {
        let p = self.pos[block as usize];
        if p == NONE {
            return;
        }
        let v = &mut self.per_plane[table.plane_of(block) as usize];
        let last = *v.last().expect("non-empty");
        v.swap_remove(p as usize);
        if last != block {
            self.pos[last as usize] = p;
        }
        self.pos[block as usize] = NONE;
        self.total -= 1;
    }
    /// Candidates in scope, in a deterministic order.
    pub fn iter(&self, scope: Scope) -> Box<dyn Iterator<Item = u32> + '_> {
        match scope {
            Scope::Plane(p) => Box::new(self.per_plane[p as usize].iter().copied()),
            Scope::Device => Box::new(self.per_plane.iter().flat_map(|v| v.iter().copied())),
        }
    }
    pub fn len(&self, scope: Scope) -> usize {
        match scope {
            Scope::Plane(p) => self.per_plane[p as usize].len(),
            Scope::Device => self.total,
        }
    }
    /// A uniformly random candidate in scope (not removed).
    pub fn sample(&self, scope: Scope, rng: &mut Rng) -> Option<u32> {
        let n = self.len(scope);
        if n == 0 {
            return None;
        }
        let mut i = rng.below(n as u64) as usize;
        match scope {
            Scope::Plane(p) => Some(self.per_plane[p as usize][i]),
            Scope::Device => {
                for v in self.per_plane.iter() {
                    if i < v.len() {
                        return Some(v[i]);
                    }
                    i -= v.len();
                }
                unreachable!("index within total")
            }
        }
    }
}
