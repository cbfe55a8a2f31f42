//! The loop backend's settings beside it (`[host.swap.backend]` with `kind = "loop"`) and their
//! checks: the worker's times, its wake-up tail, when it is packed onto the waking task's CPU.

use nandstack_core::{ensure_config, Error, Result, Rng};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{LoopSwap, WakeTail, LOOP_PACK_STREAM, LOOP_WAKE_STREAM};

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

/// `[host.swap.backend]` with `kind = "loop"`: Linux swap on a loop device over a file in RAM (tmpfs),
/// as in the kernel captures (`capture-swap.sh`): requests are formed as for `block`, then served in
/// order by the loop worker, which copies each 4 KiB page to or from the file; no SSD is involved.
/// Completions run on the worker's CPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoopConfig {
    /// Worker time per request (queueing the work, dispatch, completion), µs. Default 5.
    #[serde(default = "d_loop_req")]
    pub request_us: f64,
    /// Worker time per 4 KiB page copied to or from the backing file, or freed from it by a
    /// discard (a hole punched), µs. Default 1.
    #[serde(default = "d_loop_page")]
    pub page_us: f64,
    /// Latency before an idle worker starts on a request (the loop work item queued and its
    /// kworker woken on another CPU), µs; requests that find it busy wait their turn instead.
    /// Default 0.
    #[serde(default)]
    pub wake_us: f64,
    /// Extra wake-up latency of an idle worker on top of `wake_us`, drawn per wake-up from a
    /// distribution given as points `[quantile, µs]` of it (quantiles rising from 0 to 1, µs not
    /// falling; linear in between), e.g. `[[0, 0], [0.99, 35], [1, 9000]]`. A vCPU that is idle in a
    /// VM must be scheduled by the hypervisor before the wake-up IPI lands: usually in tens of µs,
    /// sometimes in ms (`tools/capture/trace-reclaim.sh --sched` measures it). Default none.
    #[serde(default)]
    pub wake_tail: Vec<[f64; 2]>,
    /// Pack the worker onto the CPU of the task that wakes it, as the capture VMs' scheduler does
    /// (not upstream Linux); absent or null: never (the worker is always woken on another CPU).
    /// A packed worker runs only when the task sleeps or at the next tick. See `LoopPacking`.
    #[serde(default)]
    pub packing: Option<LoopPacking>,
}
fn d_loop_req() -> f64 {
    5.0
}
fn d_loop_page() -> f64 {
    1.0
}
impl LoopConfig {
    /// The worker's times are times, the wake-up tail a distribution, the packing probabilities and
    /// times. Errors name the key.
    pub fn validate(&self) -> Result<()> {
        for (k, v) in [
            ("request_us", self.request_us),
            ("page_us", self.page_us),
            ("wake_us", self.wake_us),
        ] {
            ensure_config!(
                v.is_finite() && v >= 0.0,
                format!("host.swap.backend.{k}"),
                "must be a time ≥ 0 µs, got {v}"
            );
        }
        WakeTail::new(&self.wake_tail, Rng::new(0))
            .map_err(|why| Error::config("host.swap.backend.wake_tail", why))?;
        if let Some(p) = &self.packing {
            p.check()
                .map_err(|why| Error::config("host.swap.backend.packing", why))?;
        }
        Ok(())
    }

    /// The backend on the swap partition at byte `base`, its random draws from the run's `seed`.
    pub fn build(&self, base: u64, seed: u64) -> Result<LoopSwap> {
        self.validate()?;
        let tail = WakeTail::new(&self.wake_tail, Rng::derive(seed, LOOP_WAKE_STREAM))
            .map_err(|why| Error::config("host.swap.backend.wake_tail", why))?;
        let mut lo = LoopSwap::new(base, self.request_us, self.page_us)
            .waking(self.wake_us)
            .with_wake_tail(tail);
        if let Some(p) = self.packing {
            lo = lo.packing(p, Rng::derive(seed, LOOP_PACK_STREAM));
        }
        Ok(lo)
    }
}
