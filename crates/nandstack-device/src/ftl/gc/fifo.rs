//! FIFO: the block sealed longest ago (a circular log, as in LFS-style cleaners without selection). This is
//! the policy whose steady-state WAF under uniform random writes has the closed form
//! X = e^{−α(1−X)}, WAF = 1/(1−X).

use std::collections::VecDeque;

use nandstack_core::Rng;

use super::{Scope, VictimPolicy};
use crate::ftl::blocks::BlockTable;

#[derive(Clone)]
pub struct Fifo {
    /// Per plane: (block, sealed_seq) in seal order; stale entries are skipped lazily.
    queues: crate::exact::Exact<Vec<VecDeque<(u32, u64)>>>,
    member: Vec<bool>,
}

impl Fifo {
    pub fn new(planes: u32, table: &BlockTable) -> Fifo {
        Fifo {
            queues: crate::exact::Exact(vec![VecDeque::new(); planes as usize]),
            member: vec![false; table.len() as usize],
        }
    }
    /// Drop stale heads; return the live head of a plane's queue.
    fn front(&mut self, plane: usize, table: &BlockTable) -> Option<(u32, u64)> {
        while let Some(&(b, seq)) = self.queues[plane].front() {
            if self.member[b as usize] && table.sealed_seq[b as usize] == seq {
                return Some((b, seq));
            }
            self.queues[plane].pop_front();
        }
        None
    }
}

impl VictimPolicy for Fifo {
    fn memory_bytes(&self) -> usize {
        self.queues.iter().map(|q| q.capacity() * 16).sum::<usize>() + self.member.len()
    }
    fn name(&self) -> &'static str {
        "fifo"
    }
    fn on_sealed(&mut self, block: u32, table: &BlockTable) {
        self.member[block as usize] = true;
        self.queues[table.plane_of(block) as usize]
            .push_back((block, table.sealed_seq[block as usize]));
    }
    fn on_invalidated(&mut self, _block: u32, _table: &BlockTable) {}
    fn remove(&mut self, block: u32, _table: &BlockTable) {
        self.member[block as usize] = false;
    }
    fn select(
        &mut self,
        scope: Scope,
        table: &BlockTable,
        _now: u64,
        _rng: &mut Rng,
    ) -> Option<u32> {
        let block = match scope {
            Scope::Plane(p) => self.front(p as usize, table)?.0,
            Scope::Device => {
                let mut best: Option<(u64, u32)> = None;
                for p in 0..self.queues.len() {
                    if let Some((b, seq)) = self.front(p, table) {
                        if best.is_none_or(|(s, _)| seq < s) {
                            best = Some((seq, b));
                        }
                    }
                }
                best?.1
            }
        };
        self.member[block as usize] = false;
        Some(block)
    }
}
