//! `round_robin`: one command from each non-empty submission queue in turn (NVMe's default
//! arbitration; priorities and weights are ignored).

use super::Arbiter;

#[derive(Default)]
pub struct RoundRobin {
    /// The queue the next round starts looking at.
    next: usize,
}

impl Arbiter for RoundRobin {
    fn name(&self) -> &'static str {
        "round_robin"
    }
    fn pick(&mut self, waiting: &[u32]) -> Option<usize> {
        let n = waiting.len();
        let i = (0..n)
            .map(|k| (self.next + k) % n)
            .find(|&i| waiting[i] > 0)?;
        self.next = (i + 1) % n;
        Some(i)
    }
}
