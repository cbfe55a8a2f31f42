//! `[host.swap.backend] kind = "znswap"`: ZNSwap (Bergman et al., "ZNSwap: un-Block your Swap", USENIX
//! ATC 2022) on a zoned device — swap slots in zones, appends through swap-zones chosen by a placement
//! policy, a host-side garbage collector (ZNGC). The model is `backend/znswap/`; docs/znswap.md.

use std::collections::BTreeMap;

use nandstack_core::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::backend::BackendEnv;

/// ZNSwap's parameters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ZnswapConfig {
    /// Zones of the device given to swap (zones 0 … zones − 1; one is the GC's emergency zone). The OS
    /// sees `host.swap.size_mib` of swap; the rest of these zones' capacity is ZNSwap's spare space (its
    /// over-provisioning). Default: every zone of the device.
    #[serde(default)]
    pub zones: Option<u32>,
    /// Where a swapped-out page goes (the swap-zone placement policy). Default `{ kind = "per_core" }`.
    #[serde(default)]
    pub policy: ZonePolicyConfig,
    /// ZNGC wakes when fewer zones than this are free. Default ceil(zones / 50), at least 2 (ZNSwap's
    /// `low_wmark`).
    #[serde(default)]
    pub low_watermark_zones: Option<u32>,
    /// ZNGC runs until this many zones are free, or until the full zones hold less than two zones'
    /// worth of reclaimable (invalid or swap-cached) slots. Default ceil(zones / 25), at least the low
    /// watermark + 2 (`high_wmark`).
    #[serde(default)]
    pub high_watermark_zones: Option<u32>,
    /// Pages ZNGC gathers, reads, writes and activates per batch (`ZNS_GC_PAGES`). Default 1024.
    #[serde(default)]
    pub gc_batch_pages: Option<u32>,
    /// Charge ZNGC's reads and writes of a page to the page's cgroup — its blk-throttle limits and its
    /// counters — as `zns_cgroup_account`. Default: on with the `cgroup` policy, off otherwise (the GC
    /// thread's I/O is the root cgroup's).
    #[serde(default)]
    pub cgroup_accounting: Option<bool>,
    /// CPU time of the GC thread (`kznsd`) per page it moves or drops, ns: it delays the GC's next
    /// batch, not the application (kznsd has a CPU of its own). Default 500.
    #[serde(default)]
    pub gc_page_ns: Option<u64>,
    /// Count the completion of every swap-in read as an accessed-bit sample of the page (accessed = 1),
    /// as the ZNSwap artefact's `end_swap_bio_read` does (Linux 5.12 `mm/page_io.c`, the paper's kernel)
    /// besides the reclaim scans. Default false: samples only at reclaim scans.
    #[serde(default)]
    pub swapin_heat_sample: bool,
}

/// The swap-zone placement policy (one file per policy in `swap/backend/znswap/policy/`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ZonePolicyConfig {
    /// Every page to one swap-zone (ZNSwap's naive policy).
    Single,
    /// Swap-zone = the reclaiming CPU mod the swap-zones (Linux's per-CPU swap cluster).
    #[default]
    PerCore,
    /// By the page's access history (the accessed bit sampled at every reclaim scan, 16 samples): pages
    /// referenced in more of their last samples go to higher swap-zones, so pages of similar
    /// temperature share zones.
    HotCold,
    /// The swap-zones are split among the cgroups (within a cgroup's share, by CPU); GC victims come
    /// from the cgroup whose zones exceed its swap-slot allocation the most (its zone with the fewest
    /// valid slots).
    Cgroup {
        /// Swap-slot allocation per cgroup name (`root` for the root cgroup). A cgroup not listed has no
        /// allocation limit. Default: none.
        #[serde(default)]
        swap_slots: BTreeMap<String, u64>,
    },
}

impl ZonePolicyConfig {
    pub fn name(&self) -> &'static str {
        match self {
            ZonePolicyConfig::Single => "single",
            ZonePolicyConfig::PerCore => "per_core",
            ZonePolicyConfig::HotCold => "hot_cold",
            ZonePolicyConfig::Cgroup { .. } => "cgroup",
        }
    }
}

/// ZNSwap's checks against the rest of the configuration (`env`), before anything is built: a zoned
/// device, a swap size, no partition offset, no discard, no slot cache, no zswap in front; its own
/// values. Errors name the key.
impl ZnswapConfig {
    pub fn validate(&self, env: &BackendEnv) -> Result<()> {
        let z = self;
        if env.zswap {
            return Err(Error::config(
                "host.zswap.enabled",
                "zswap in front of ZNSwap is not modelled (a written-back entry would need its staging slot              placed by a zone append): turn one of them off",
            ));
        }
        if !env.zoned {
            return Err(Error::config(
                "host.swap.backend.kind",
                format!(
                    "ZNSwap places swap slots in zones and needs device.kind = \"zoned\" (the device is \
                     \"{}\")",
                    env.device_kind
                ),
            ));
        }
        if env.size_mib == 0 {
            return Err(Error::config(
                "host.swap.size_mib",
                "is 0: ZNSwap needs a swap size (the slots the OS may use)",
            ));
        }
        if env.offset_mib != 0 {
            return Err(Error::config(
                "host.swap.offset_mib",
                "ZNSwap uses zones 0 … zones − 1 of the device; the partition offset does not apply",
            ));
        }
        if env.discard {
            return Err(Error::config(
                "host.swap.discard.mode",
                "ZNSwap needs no discard (the GC reads the slot map; a zoned device has no TRIM): use \
                 \"off\"",
            ));
        }
        if env.slot_cache != 0 {
            return Err(Error::config(
                "host.swap.slot_cache",
                "ZNSwap places slots when their append completes; the per-CPU slot cache does not apply \
                 (use 0)",
            ));
        }
        if z.gc_batch_pages == Some(0) || z.gc_batch_pages.is_some_and(|b| b > 65536) {
            return Err(Error::config(
                "host.swap.backend.gc_batch_pages",
                "must be in [1, 65536]",
            ));
        }
        if z.zones == Some(0) {
            return Err(Error::config("host.swap.backend.zones", "must be ≥ 1"));
        }
        if let (Some(l), Some(h)) = (z.low_watermark_zones, z.high_watermark_zones) {
            if h < l + 2 {
                return Err(Error::config(
                    "host.swap.backend.high_watermark_zones",
                    format!(
                        "is {h}: must be at least low_watermark_zones + 2 = {}",
                        l + 2
                    ),
                ));
            }
        }
        if let ZonePolicyConfig::Cgroup { swap_slots } = &z.policy {
            for name in swap_slots.keys() {
                if name != "root" && !env.cgroups.iter().any(|c| c == name) {
                    return Err(Error::config(
                        format!("host.swap.backend.policy.swap_slots.{name}"),
                        format!("no cgroup named `{name}` in host.cgroups"),
                    ));
                }
            }
        }
        Ok(())
    }
}
