//! Transaction schedulers: which of the transactions waiting for an idle die it starts next.
//!
//! # Contract (checked for every policy by `tests.rs`)
//! * `pick` sees the die's waiting transactions that the GC rules allow (see `ssd/engine/die.rs`), in
//!   arrival order, and returns the index of a **ready** one, or `None` to leave the die idle until
//!   something changes (a transaction becomes ready, a die frees up).
//! * Every policy but `fifo` is work-conserving: it returns `Some` whenever a candidate is ready.
//!   `fifo` returns the first candidate if it is ready and `None` otherwise (head-of-line blocking is
//!   its definition: transactions keep their arrival order on a die).
//! * Deterministic: the pick depends only on the candidates, `now` and the policy's own state (built
//!   from the notifications it received); ties go to the oldest (smallest `seq`).
//! * Notifications (`on_arrival`, `on_finish`) never change what the device does by themselves.

mod fair;
mod fifo;
mod out_of_order;
mod read_priority;
#[cfg(test)]
mod tests;

pub use fair::Fair;
pub use fifo::Fifo;
pub use out_of_order::OutOfOrder;
pub use read_priority::ReadPriority;

use super::config::{SchedulerKind, SchedulingConfig};

/// What a transaction is, for scheduling.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// A host read, a read-modify-write read or a mapping (translation) read.
    Read,
    /// A host-data program (host, padding, buffer write-back) or a mapping write-back.
    Write,
    /// GC or wear-levelling work (page reads, programs, erases).
    Gc,
}

/// One transaction waiting for a die.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Cand {
    pub class: Class,
    /// Its data and the operations it depends on are there: it can start now.
    pub ready: bool,
    /// Arrival order at the controller (smaller = older).
    pub seq: u64,
    /// The flow (NVMe submission queue) of its command.
    pub flow: u32,
    /// When its command reached the controller, ns.
    pub arrival_ns: u64,
    /// Its array time (sensing, program or erase), ns.
    pub service_ns: u64,
}

/// A transaction scheduler (see the module contract).
pub trait TxnScheduler: SchedulerClone + Send {
    fn name(&self) -> &'static str;
    /// The transaction an idle die starts next (index into `cands`), or `None`.
    fn pick(&mut self, now: u64, die: u32, cands: &[Cand]) -> Option<usize>;
    /// A transaction of `flow` joined die `die`'s queue at `now`.
    fn on_arrival(&mut self, _now: u64, _die: u32, _flow: u32, _class: Class) {}
}

/// The index of the oldest ready candidate satisfying `keep`.
pub(crate) fn oldest_ready(cands: &[Cand], keep: impl Fn(&Cand) -> bool) -> Option<usize> {
    cands
        .iter()
        .enumerate()
        .filter(|(_, c)| c.ready && keep(c))
        .min_by_key(|(_, c)| c.seq)
        .map(|(i, _)| i)
}

/// The scheduler a config names, for a device of `dies` dies (arrays).
pub fn build(cfg: &SchedulingConfig, dies: u32) -> Box<dyn TxnScheduler> {
    match cfg.policy {
        SchedulerKind::Fifo => Box::new(Fifo),
        SchedulerKind::OutOfOrder => Box::new(OutOfOrder),
        SchedulerKind::ReadPriority => Box::new(ReadPriority),
        SchedulerKind::Fair => Box::new(Fair::new(
            dies,
            super::config::ns(cfg.fair_epoch_us),
            cfg.fair_low_intensity_per_epoch,
        )),
    }
}

boxed_clone!(TxnScheduler, SchedulerClone);
