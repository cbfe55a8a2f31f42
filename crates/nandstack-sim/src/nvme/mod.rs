//! The device's NVMe front end: submission-queue arbitration (one file per policy) and the PCIe link.
//!
//! # Arbitration contract (checked for every policy by `tests.rs`)
//! * `pick` is given the number of commands waiting in each submission queue (one per flow) and returns
//!   the queue the controller fetches its next command from: one whose count is not zero, or `None`
//!   when every queue is empty.
//! * Work-conserving: `Some` whenever a queue is not empty.
//! * No starvation among queues of one class: a queue that stays non-empty is picked within a bounded
//!   number of picks (its class's round).
//! * Deterministic: the pick depends only on the counts and the policy's own state.

mod round_robin;
#[cfg(test)]
mod tests;
mod weighted;

pub use round_robin::RoundRobin;
pub use weighted::WeightedRoundRobin;

use crate::config::{Arbitration, FlowPriority};

/// A submission-queue arbiter (see the module contract).
pub trait Arbiter {
    fn name(&self) -> &'static str;
    /// The queue to fetch from (index into `waiting`), or `None` if all are empty.
    fn pick(&mut self, waiting: &[u32]) -> Option<usize>;
}

/// The arbiter a config names, for flows of these weights and priorities.
pub fn build(kind: Arbitration, flows: &[(u32, FlowPriority)]) -> Box<dyn Arbiter> {
    match kind {
        Arbitration::RoundRobin => Box::new(RoundRobin::default()),
        Arbitration::WeightedRoundRobin => Box::new(WeightedRoundRobin::new(flows)),
    }
}

/// The PCIe link: one direction for commands' data into the device (writes), one out (reads), each
/// moving one transfer at a time, first come first served, at the link's rate.
#[derive(Clone, Debug)]
pub struct Link {
    bytes_per_s: f64,
    /// Until when each direction is busy, ns: [host → device, device → host].
    free_ns: [u64; 2],
    pub busy_ns: u64,
}

/// Which way data crosses the link.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Dir {
    ToDevice = 0,
    ToHost = 1,
}

impl Link {
    pub fn new(bytes_per_s: f64) -> Link {
        Link {
            bytes_per_s,
            free_ns: [0; 2],
            busy_ns: 0,
        }
    }

    /// Move `bytes` that are ready at `ready_ns`; returns when they have crossed.
    pub fn transfer(&mut self, dir: Dir, ready_ns: u64, bytes: u64) -> u64 {
        let d = (bytes as f64 * 1e9 / self.bytes_per_s).round() as u64;
        let start = ready_ns.max(self.free_ns[dir as usize]);
        self.free_ns[dir as usize] = start + d;
        self.busy_ns += d;
        start + d
    }
}
