//! Flows (tenants, NVMe submission queues) and the NVMe front end of the device: `[[workload.flows]]`
//! and `[workload.io.nvme]`. Both are off by default: one flow (the `[workload]` generator at
//! `workload.io.queue_depth`) and a front end that hands every command to the device at once.

use nandstack_core::{Error, Result};
use nandstack_workload::SyntheticConfig;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::part;

/// The arbitration class of a flow's submission queue (NVMe 1.4 §4.13).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FlowPriority {
    /// Served before every `normal` queue under `weighted_round_robin` (strict priority).
    Urgent,
    /// Shares the controller by round robin (weighted under `weighted_round_robin`). Default.
    #[default]
    Normal,
}

/// `[[workload.flows]]`: one tenant with its own submission queue. Any `[workload]` generator key
/// (`pattern`, `read_fraction`, `requests`, `arrival_iops`, …) may be given; those left out are the
/// `[workload]` table's. Synthetic workloads only.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct FlowSpec {
    /// Name in the report. Default `flow<i>`.
    pub name: String,
    /// Requests of this flow outstanding in closed-loop mode, in [1, 1000000]. Default
    /// `workload.io.queue_depth`.
    pub queue_depth: u32,
    /// Weight under `weighted_round_robin` arbitration: commands fetched per round, in [1, 1000].
    /// Default 1.
    pub weight: u32,
    /// `normal` (default) or `urgent`.
    pub priority: FlowPriority,
    /// The flow's generator: the `[workload]` keys, overridden by the flow's own.
    #[serde(flatten)]
    pub synthetic: SyntheticConfig,
}

/// Keys of a flow that are not the generator's.
const FLOW_KEYS: [&str; 4] = ["name", "queue_depth", "weight", "priority"];

impl FlowSpec {
    /// Build flow `i` from its table over the `[workload]` generator keys `base`.
    pub(super) fn from_map(
        mut map: Map<String, Value>,
        base: &Map<String, Value>,
        default_qd: u32,
        i: usize,
        prefix: &str,
    ) -> Result<FlowSpec> {
        let key = |k: &str| format!("{prefix}.{k}");
        let name = match map.remove("name") {
            Some(v) => part(v, &key("name"))?,
            None => format!("flow{i}"),
        };
        let queue_depth = match map.remove("queue_depth") {
            Some(v) => part(v, &key("queue_depth"))?,
            None => default_qd,
        };
        let weight = match map.remove("weight") {
            Some(v) => part(v, &key("weight"))?,
            None => 1,
        };
        let priority = match map.remove("priority") {
            Some(v) => part(v, &key("priority"))?,
            None => FlowPriority::Normal,
        };
        let mut gen = base.clone();
        gen.extend(map);
        let synthetic: SyntheticConfig = part(Value::Object(gen), prefix).map_err(|e| match e {
            Error::Config { key, msg } if msg.contains("unknown field") => {
                Error::config(key, format!("{msg} (or one of {})", FLOW_KEYS.join(", ")))
            }
            other => other,
        })?;
        Ok(FlowSpec {
            name,
            queue_depth,
            weight,
            priority,
            synthetic,
        })
    }

    pub(super) fn validate(&self, prefix: &str, logical_bytes: u64) -> Result<()> {
        self.synthetic.validate(logical_bytes)?;
        if !(1..=1_000_000).contains(&self.queue_depth) {
            return Err(Error::config(
                format!("{prefix}.queue_depth"),
                format!("is {}: must be in [1, 1000000]", self.queue_depth),
            ));
        }
        if !(1..=1000).contains(&self.weight) {
            return Err(Error::config(
                format!("{prefix}.weight"),
                format!("is {}: must be in [1, 1000]", self.weight),
            ));
        }
        if self.synthetic.requests == 0 {
            return Err(Error::config(
                format!("{prefix}.requests"),
                "must be at least 1",
            ));
        }
        Ok(())
    }
}

/// How the controller picks the submission queue it fetches the next command from.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Arbitration {
    /// One command from each non-empty queue in turn (NVMe's default). Default.
    #[default]
    RoundRobin,
    /// Urgent queues first (strict priority), then the normal queues by weighted round robin: a queue
    /// gets up to `weight` commands per round (NVMe's weighted round robin with urgent priority class).
    WeightedRoundRobin,
}

/// `[workload.io.nvme]`: the device's NVMe front end — submission-queue arbitration under a limit on
/// the commands the controller works on, and the PCIe link. Off by default (every command reaches the
/// device at its issue time and its data crosses no link).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NvmeConfig {
    /// `round_robin` (default) or `weighted_round_robin`.
    #[serde(default)]
    pub arbitration: Arbitration,
    /// Commands the controller holds at once (fetched, not yet completed); the rest wait in their
    /// submission queues for the arbiter. 0 (default) = no limit (arbitration never has to choose).
    #[serde(default)]
    pub controller_slots: u32,
    /// PCIe lanes of the link; 0 (default) = no link model (data moves in no time).
    #[serde(default)]
    pub link_lanes: u32,
    /// Transfer rate of one lane in GT/s with 128b/130b encoding (PCIe 3.0: 8, 4.0: 16). Default 8.
    #[serde(default = "d_gt")]
    pub link_gt_per_s: f64,
    /// Time per command for fetching its submission entry and posting its completion, in µs (MQSim
    /// adds a constant 1.6 µs per request). Default 0.
    #[serde(default)]
    pub command_overhead_us: f64,
}
fn d_gt() -> f64 {
    8.0
}
impl Default for NvmeConfig {
    fn default() -> Self {
        NvmeConfig {
            arbitration: Arbitration::RoundRobin,
            controller_slots: 0,
            link_lanes: 0,
            link_gt_per_s: d_gt(),
            command_overhead_us: 0.0,
        }
    }
}

impl NvmeConfig {
    /// Whether the front end changes anything (otherwise commands go straight to the device).
    pub fn active(&self) -> bool {
        self.controller_slots > 0 || self.link_lanes > 0 || self.command_overhead_us > 0.0
    }

    /// Link bytes per second (lanes × GT/s × 128/130 ÷ 8), or None without a link.
    pub fn link_bytes_per_s(&self) -> Option<f64> {
        (self.link_lanes > 0)
            .then(|| self.link_lanes as f64 * self.link_gt_per_s * 1e9 * 128.0 / 130.0 / 8.0)
    }

    pub(super) fn validate(&self, prefix: &str) -> Result<()> {
        let k = |x: &str| format!("{prefix}.nvme.{x}");
        if self.link_lanes > 32 {
            return Err(Error::config(
                k("link_lanes"),
                format!("is {}: must be in [0, 32]", self.link_lanes),
            ));
        }
        let gt = self.link_gt_per_s;
        if !(gt.is_finite() && gt > 0.0 && gt <= 1000.0) {
            return Err(Error::config(
                k("link_gt_per_s"),
                format!("is {gt}: must be in (0, 1000]"),
            ));
        }
        let o = self.command_overhead_us;
        if !(o.is_finite() && (0.0..1e6).contains(&o)) {
            return Err(Error::config(
                k("command_overhead_us"),
                format!("is {o}: must be in [0, 1e6) µs"),
            ));
        }
        Ok(())
    }
}
