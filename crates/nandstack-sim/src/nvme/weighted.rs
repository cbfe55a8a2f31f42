//! `weighted_round_robin`: NVMe's weighted round robin with an urgent priority class (NVMe 1.4
//! §4.13.2). Urgent queues go first, round robin among themselves (strict priority: a normal queue is
//! served only when every urgent queue is empty). Normal queues are served in turn, each up to its
//! `weight` commands before the next one's turn (its burst), skipping empty queues.

use super::{Arbiter, RoundRobin};
use crate::config::FlowPriority;

pub struct WeightedRoundRobin {
    weights: Vec<u32>,
    urgent: Vec<bool>,
    /// Round robin among the urgent queues (over a view where normal queues look empty).
    urgent_rr: RoundRobin,
    scratch: Vec<u32>,
    /// The normal queue whose turn it is, and the commands it may still take in this turn.
    cur: usize,
    credit: u32,
}

impl WeightedRoundRobin {
    pub fn new(flows: &[(u32, FlowPriority)]) -> WeightedRoundRobin {
        WeightedRoundRobin {
            weights: flows.iter().map(|f| f.0.max(1)).collect(),
            urgent: flows.iter().map(|f| f.1 == FlowPriority::Urgent).collect(),
            urgent_rr: RoundRobin::default(),
            scratch: Vec::with_capacity(flows.len()),
            // The first turn goes to queue 0.
            cur: flows.len().saturating_sub(1),
            credit: 0,
        }
    }
}

impl Arbiter for WeightedRoundRobin {
    fn name(&self) -> &'static str {
        "weighted_round_robin"
    }
    fn pick(&mut self, waiting: &[u32]) -> Option<usize> {
        debug_assert_eq!(waiting.len(), self.weights.len());
        self.scratch.clear();
        let urgent = &self.urgent;
        self.scratch.extend(
            waiting
                .iter()
                .zip(urgent)
                .map(|(&w, &u)| if u { w } else { 0 }),
        );
        if let Some(i) = self.urgent_rr.pick(&self.scratch) {
            return Some(i);
        }
        let n = waiting.len();
        let normal_waiting = |i: usize| !self.urgent[i] && waiting[i] > 0;
        if self.credit > 0 && normal_waiting(self.cur) {
            self.credit -= 1;
            return Some(self.cur);
        }
        // The turn passes to the next non-empty normal queue, which gets its whole weight.
        let i = (1..=n)
            .map(|k| (self.cur + k) % n)
            .find(|&i| normal_waiting(i))?;
        self.cur = i;
        self.credit = self.weights[i] - 1;
        Some(i)
    }
}
