//! The loop backend's settings beside it: when its worker is packed onto the waking task's CPU.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// When the loop worker is packed onto the waking task's CPU (`host.swap.backend.packing`). The defaults
/// are `LoopPacking::VCPU` (`kswap::VCPU_PACKING`): the pooled figures of seven `trace-reclaim.sh --sched` traces of four
/// programs on a VM of the captures' kind (docs/kernel-swap-comparison.md, "Waking the loop worker, and
/// where it runs").
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct LoopPacking {
    /// A wake-up of the worker last run on another CPU that went idle less than this before, µs.
    /// Default 10.
    pub near_idle_us: f64,
    /// Probability that such a wake-up packs the worker. Default 0.73.
    pub enter_near_idle: f64,
    /// Probability that any other wake-up from another CPU packs it. Default 0.03.
    pub enter: f64,
    /// Probability that a wake-up of the packed worker keeps it packed. Default 0.87.
    pub stay: f64,
    /// Never packed while the task's and the worker's utilisation (running shares decayed with
    /// PELT's 32 ms half-life) add up to this or more. Default 0.5.
    pub max_util: f64,
    /// Scheduler tick (HZ 250), µs: a packed worker waits at most until the next one. Default 4000.
    pub tick_us: f64,
}
impl LoopPacking {
    /// The kernel captures' VM (`nandstack-kernel`'s `kswap::VCPU_PACKING`): the pooled figures of seven
    /// `trace-reclaim.sh --sched` traces of four programs.
    pub const VCPU: LoopPacking = LoopPacking {
        near_idle_us: 10.0,
        enter_near_idle: 0.73,
        enter: 0.03,
        stay: 0.87,
        max_util: 0.5,
        tick_us: 4000.0,
    };
}
impl Default for LoopPacking {
    fn default() -> LoopPacking {
        LoopPacking::VCPU
    }
}
