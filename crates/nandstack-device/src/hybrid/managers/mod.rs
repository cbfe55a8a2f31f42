//! SLC-cache managers: the policies that size the SLC region and set the hot/cold threshold θ. One file
//! per manager, all behind [`SlcManager`].
//!
//! # Contract
//! * [`SlcManager::layout`] is constant for the manager's lifetime; the device is built with it.
//! * [`SlcManager::initial`] is called once, on the empty (or preconditioned) device, before any host
//!   write; [`SlcManager::after_write`] after every host write request for which
//!   [`SlcManager::observes`] is true, with the device state after that request (including any shrink
//!   the capacity forced). It must be cheap (O(1) amortised). `observes` may be false only where
//!   `after_write` would return `None` and change nothing: it spares the device building an
//!   [`Observation`] (a cost breakdown copy and a float division) on every request.
//! * A [`Decision`] is a request, not a command: the device clamps the SLC size to
//!   `[0, max_slc_blocks]` (non-zero sizes to at least `min_slc_blocks`), grants growth only as far as QLC
//!   GC can free blocks, and shrinks the region on its own when the data grows past what the SLC region
//!   leaves room for. θ is used as given (host write requests of ≤ θ bytes go to SLC). The manager reads
//!   the outcome from the next [`Observation`]; it never assumes its request was granted and never
//!   touches the FTL.
//! * Managers are deterministic: any randomness comes from the seed they were built with.
//! * Every manager passes the shared conformance test (`hybrid/tests.rs`): invariants and
//!   read-after-write versions hold through its decisions, and decisions stay within the device's bounds.

mod dwa;
mod qlc_only;
pub mod qquant;
pub mod qtable;
mod rl;
mod static_cache;
mod ust;

use nandstack_core::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use dwa::{DwaConfig, DwaManager, TABLE2};
pub use qlc_only::QlcOnlyManager;
pub use qtable::QTable;
pub use rl::{RlConfig, RlManager, RlStats, TieBreak};
pub use static_cache::{StaticConfig, StaticManager};
pub use ust::{UstConfig, UstManager};

use super::config::HybridParams;
use super::cost::CostBreakdown;
use super::ftl::SlcLayout;

/// What a manager sees after each host write request (cumulative counters since the start of the run).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Observation {
    pub host_write_bytes: u64,
    pub host_write_requests: u64,
    /// Host bytes of requests routed to SLC (size ≤ θ at their arrival).
    pub slc_routed_bytes: u64,
    /// Host units of requests routed to SLC.
    pub slc_routed_units: u64,
    /// Host units that overwrote data held in SLC (or buffered for SLC).
    pub slc_update_units: u64,
    /// Valid data ÷ logical capacity.
    pub utilization: f64,
    /// Current SLC region size (blocks).
    pub slc_blocks: u32,
    /// Blocks in SLC mode (open or sealed).
    pub slc_used_blocks: u32,
    /// Largest SLC region the data allows now.
    pub max_slc_blocks: u32,
    /// Smallest non-zero SLC region.
    pub min_slc_blocks: u32,
    /// Migration / SLC GC runs below this many free SLC blocks.
    pub slc_free_threshold: u32,
    pub total_blocks: u32,
    /// Bytes one SLC-mode block holds.
    pub slc_block_bytes: u64,
    pub theta_bytes: u64,
    /// Cumulative write cost by category.
    pub costs: CostBreakdown,
}

/// A manager's requested SLC size and threshold.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub slc_blocks: u32,
    /// Host write requests of at most this many bytes go to SLC (`u64::MAX`: all of them).
    pub theta_bytes: u64,
}

/// A manager's own statistics for the report.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ManagerReport {
    /// Decisions returned by `after_write` (not counting `initial`).
    pub decisions: u64,
    /// The RL agent's statistics (RL only).
    pub rl: Option<RlStats>,
}

boxed_clone!(SlcManager, ManagerClone);

/// An SLC-cache manager (see the module docs for the contract). Copied with its device
/// (`Device::snapshot`: an aged device kept per process).
pub trait SlcManager: Send + ManagerClone {
    fn name(&self) -> &'static str;
    /// How the SLC region is organised.
    fn layout(&self) -> SlcLayout {
        SlcLayout::Shared
    }
    /// The first decision, before any host write.
    fn initial(&mut self, obs: &Observation) -> Decision;
    /// After each host write request: `Some` to change the SLC size and/or θ.
    fn after_write(&mut self, obs: &Observation) -> Option<Decision>;
    /// Whether `after_write` needs to see the device after a host write request that brought the run's
    /// host bytes written to `host_write_bytes` (see the contract). Default: always.
    fn observes(&self, _host_write_bytes: u64) -> bool {
        true
    }
    fn report(&self) -> ManagerReport {
        ManagerReport::default()
    }
    /// The Q-table (RL only), e.g. to save it for pre-training.
    fn q_table(&self) -> Option<&QTable> {
        None
    }
}

/// Which manager.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ManagerKind {
    /// No SLC cache: every write in QLC mode (the normalisation baseline).
    QlcOnly,
    /// Fixed SLC size and θ (`manager.static`).
    Static,
    /// Dynamic write acceleration: SLC size from utilisation by Table 2 (`manager.dwa`).
    Dwa,
    /// Utilisation-aware self-tuning: per-logical-block SLC blocks, all writes to SLC (`manager.ust`).
    Ust,
    /// The Q-learning manager (`manager.rl`).
    Rl,
}

/// The SLC-cache manager and every manager's parameters (only the chosen one's are used, so a sweep can
/// keep all of them in one config).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ManagerConfig {
    /// `qlc_only`, `static`, `dwa`, `ust` or `rl`. Default `rl`.
    #[serde(default = "d_kind")]
    pub kind: ManagerKind,
    /// Static manager parameters.
    #[serde(default, rename = "static")]
    pub static_cache: StaticConfig,
    /// DWA parameters (Table 2 setting, θ).
    #[serde(default)]
    pub dwa: DwaConfig,
    /// UST parameters (MAX_SLC, headroom).
    #[serde(default)]
    pub ust: UstConfig,
    /// RL (Q-learning) parameters.
    #[serde(default)]
    pub rl: RlConfig,
}
fn d_kind() -> ManagerKind {
    ManagerKind::Rl
}
impl Default for ManagerConfig {
    fn default() -> Self {
        ManagerConfig {
            kind: d_kind(),
            static_cache: StaticConfig::default(),
            dwa: DwaConfig::default(),
            ust: UstConfig::default(),
            rl: RlConfig::default(),
        }
    }
}

impl ManagerConfig {
    /// Validate the chosen manager's parameters (errors name the key).
    pub fn validate(&self) -> Result<()> {
        match self.kind {
            ManagerKind::QlcOnly => Ok(()),
            ManagerKind::Static => self.static_cache.validate(),
            ManagerKind::Dwa => self.dwa.validate(),
            ManagerKind::Ust => self.ust.validate(),
            ManagerKind::Rl => self.rl.validate(),
        }
    }

    /// Build the chosen manager. `q_table` (RL only) starts the agent from a saved table.
    pub fn build(
        &self,
        params: &HybridParams,
        seed: u64,
        q_table: Option<QTable>,
    ) -> Result<Box<dyn SlcManager>> {
        self.validate()?;
        if q_table.is_some() && self.kind != ManagerKind::Rl {
            return Err(Error::config(
                "device.manager.rl.load_q_table",
                "a Q-table is only used by the rl manager",
            ));
        }
        Ok(match self.kind {
            ManagerKind::QlcOnly => Box::new(QlcOnlyManager),
            ManagerKind::Static => Box::new(StaticManager::new(&self.static_cache, params)),
            ManagerKind::Dwa => Box::new(DwaManager::new(&self.dwa)),
            ManagerKind::Ust => Box::new(UstManager::new(&self.ust)),
            ManagerKind::Rl => Box::new(RlManager::new(&self.rl, params, seed, q_table)?),
        })
    }
}

/// Check that a θ is a sane byte count.
pub(crate) fn check_theta(key: &str, v: u64) -> Result<()> {
    if !(4096..=(1 << 40)).contains(&v) {
        return Err(Error::config(
            key,
            format!("is {v}: must be in [4096, 2^40] bytes"),
        ));
    }
    Ok(())
}
