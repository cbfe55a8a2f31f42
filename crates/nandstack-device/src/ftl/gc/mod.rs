//! GC victim selection policies.
//!
//! # Contract (every [`VictimPolicy`] obeys it; `tests::conformance` checks each one)
//! * The FTL tells the policy about every candidate: [`VictimPolicy::on_sealed`] when a block becomes full,
//!   [`VictimPolicy::on_invalidated`] each time a sealed block loses one valid unit, and
//!   [`VictimPolicy::remove`] when the FTL takes a sealed block away by other means (wear levelling).
//! * [`VictimPolicy::select`] returns a sealed block inside the scope (the given plane, or anywhere) and
//!   forgets it; it returns `None` only when the scope has no sealed block. It never returns an open, free
//!   or already-selected block, and never the same block twice without an intervening `on_sealed`.
//! * Policies are deterministic given the block table and the RNG they are handed; ties break on the
//!   lower block id or the earlier insertion, never on hash order.
//! * Policies never write the block table.

#[macro_use]
mod candidates;
mod cost_benefit;
mod d_choices;
mod fifo;
mod greedy;
mod random;

pub use candidates::CandidateSet;
pub use cost_benefit::CostBenefit;
pub use d_choices::DChoices;
pub use fifo::Fifo;
pub use greedy::Greedy;
pub use random::RandomVictim;

use nandstack_core::Rng;

use super::blocks::BlockTable;
use super::config::VictimConfig;

/// Where to look for a victim.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    Plane(u32),
    Device,
}

pub trait VictimPolicy: VictimClone + Send {
    fn name(&self) -> &'static str;
    /// `block` just became full and is a candidate from now on.
    fn on_sealed(&mut self, block: u32, table: &BlockTable);
    /// Sealed `block` just lost one valid unit (`table.valid[block]` is the new count).
    fn on_invalidated(&mut self, block: u32, table: &BlockTable);
    /// Forget `block` (it is no longer a candidate).
    fn remove(&mut self, block: u32, table: &BlockTable);
    /// Choose and forget a victim within `scope`; `now` is the logical clock (host units written).
    fn select(&mut self, scope: Scope, table: &BlockTable, now: u64, rng: &mut Rng) -> Option<u32>;
    /// Bytes of memory the policy's index uses (for the metadata budget).
    fn memory_bytes(&self) -> usize;
    /// Whether the policy reads `BlockTable::modified_at` (the FTL maintains it only then: it costs a
    /// random memory write per overwrite). Default false.
    fn needs_age(&self) -> bool {
        false
    }
    /// Cache hint: `block` is about to lose a valid unit (no state change). Default: nothing.
    fn prefetch(&self, _block: u32) {}
    /// Cache hint, one step later: what updating `block`'s position will touch besides its own entry.
    fn prefetch_neighbours(&self, _block: u32, _table: &BlockTable) {}
}

/// Build the policy a config names.
pub fn build(cfg: &VictimConfig, planes: u32, table: &BlockTable) -> Victims {
    match cfg {
        VictimConfig::Greedy { tie_break } => {
            Victims::Greedy(Greedy::new(planes, table, *tie_break))
        }
        VictimConfig::CostBenefit => Victims::Other(Box::new(CostBenefit::new(planes, table))),
        VictimConfig::Fifo => Victims::Other(Box::new(Fifo::new(planes, table))),
        VictimConfig::Random => Victims::Other(Box::new(RandomVictim::new(planes, table))),
        VictimConfig::DChoices { d } => Victims::Other(Box::new(DChoices::new(planes, table, *d))),
    }
}

/// The policy an FTL holds: greedy (the default of every FTL, on every overwrite's path) called
/// directly so that its updates inline into the write path, any other behind a trait object.
#[derive(Clone)]
pub enum Victims {
    Greedy(Greedy),
    Other(Box<dyn VictimPolicy>),
}

/// Forward a `VictimPolicy` method to the policy held.
macro_rules! held {
    ($self:ident, $p:ident => $e:expr) => {
        match $self {
            Victims::Greedy($p) => $e,
            Victims::Other($p) => $e,
        }
    };
}

impl VictimPolicy for Victims {
    fn name(&self) -> &'static str {
        held!(self, p => p.name())
    }
    fn on_sealed(&mut self, block: u32, table: &BlockTable) {
        held!(self, p => p.on_sealed(block, table))
    }
    #[inline]
    fn on_invalidated(&mut self, block: u32, table: &BlockTable) {
        held!(self, p => p.on_invalidated(block, table))
    }
    fn remove(&mut self, block: u32, table: &BlockTable) {
        held!(self, p => p.remove(block, table))
    }
    fn select(&mut self, scope: Scope, table: &BlockTable, now: u64, rng: &mut Rng) -> Option<u32> {
        held!(self, p => p.select(scope, table, now, rng))
    }
    fn memory_bytes(&self) -> usize {
        held!(self, p => p.memory_bytes())
    }
    fn needs_age(&self) -> bool {
        held!(self, p => p.needs_age())
    }
    #[inline]
    fn prefetch(&self, block: u32) {
        held!(self, p => p.prefetch(block))
    }
    #[inline]
    fn prefetch_neighbours(&self, block: u32, table: &BlockTable) {
        held!(self, p => p.prefetch_neighbours(block, table))
    }
}

#[cfg(test)]
mod tests;

boxed_clone!(VictimPolicy, VictimClone);
