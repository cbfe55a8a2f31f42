//! FTL configuration (serde; unknown keys rejected; every field documented with default and unit).

use nandstack_core::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::nand::Geometry;

pub use super::placement::PlacementConfig;

/// How host writes are spread over planes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Allocation {
    /// The plane is a fixed function of the logical page: stripe = lpn / units_per_page, plane =
    /// stripe mod planes, decomposed in `striping_order` (first named unit varies fastest).
    Static,
    /// Round-robin over planes in `striping_order` regardless of address (a write goes to the next
    /// plane in turn; the timing model does not change the choice). A plane that cannot take the write
    /// without GC that cannot succeed is skipped (docs/model-ftl.md).
    Dynamic,
}

/// A level of the parallel hierarchy, for the striping order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ParallelUnit {
    Channel,
    Chip,
    Die,
    Plane,
}

/// GC victim selection policy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "policy", deny_unknown_fields)]
pub enum VictimConfig {
    /// Fewest valid units (O(1) via valid-count buckets); `tie_break` orders blocks with equal counts.
    Greedy {
        /// Among blocks with the fewest valid units: `oldest` (default; the block that reached that count
        /// first — FIFO within a valid-count bucket, as the Cosmos+ OpenSSD firmware) or `newest` (the
        /// one that reached it last — LIFO). Omitted from serialised configs when `oldest`, so that a
        /// config switching `policy` to another victim stays valid.
        #[serde(default, skip_serializing_if = "TieBreak::is_oldest")]
        tie_break: TieBreak,
    },
    /// Largest age × (1 − u) / 2u (Rosenblum & Ousterhout); age = host writes since last modification.
    CostBenefit,
    /// Oldest sealed block first (a circular log).
    Fifo,
    /// Uniformly random sealed block.
    Random,
    /// Greedy among `d` uniformly sampled sealed blocks.
    DChoices {
        /// Number of sampled candidates, in [1, the blocks GC chooses from]: a plane's blocks (or the
        /// device's with `scope = "device"`), the zones for the zoned block layer. Default 10.
        #[serde(default = "d_d")]
        d: u32,
    },
}
fn d_d() -> u32 {
    10
}

impl VictimConfig {
    /// Greedy with the default tie-break.
    pub fn greedy() -> VictimConfig {
        VictimConfig::Greedy {
            tie_break: TieBreak::Oldest,
        }
    }
}

/// How greedy orders candidates with the same valid count: by when each block reached that count (its
/// last seal or invalidation event).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TieBreak {
    /// The block that has held its count longest goes first (FIFO within a bucket).
    #[default]
    Oldest,
    /// The block that reached its count most recently goes first (LIFO within a bucket).
    Newest,
}

impl TieBreak {
    pub fn is_oldest(&self) -> bool {
        *self == TieBreak::Oldest
    }
}

/// When the free-block threshold of GC is checked.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GcTrigger {
    /// Before every host unit write (the textbook schedule, default): as soon as free blocks fall below
    /// `start_free_blocks`, the next host write first runs GC. GC survivors and host writes then share
    /// the open block of a stream, so a single stream is one write frontier.
    #[default]
    EveryWrite,
    /// Only when a host write needs a new open block, tested before the block is taken (watermark
    /// firmware): the block then opened is filled by host writes alone, and the blocks GC opens hold
    /// mostly GC survivors — host/GC separation without a second stream. Kept to reproduce earlier
    /// results and to study that effect.
    BlockOpen,
}

/// How much one GC invocation collects.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GcBurst {
    /// Victims until free blocks are back at `start_free_blocks` (default): one victim at a time in
    /// steady state.
    #[default]
    ToStart,
    /// Victims until free blocks reach `stop_free_blocks` (hysteresis: collect in bursts).
    ToStop,
    /// Exactly one victim per invocation, and a host write that finds a block opened by that victim's
    /// migrations in its stream writes there without the per-stream floor (it takes no free block) — the
    /// Cosmos+ OpenSSD GreedyFTL: `GarbageCollection(dieNo)` collects one victim
    /// (`garbage_collection.c`), and `FindFreeVirtualSlice` then continues in the die's current block,
    /// which GC's copies opened (`address_translation.c`). With `trigger = "block_open"` and
    /// `start_free_blocks = 2` this is the firmware's schedule (GC when a die's free blocks are at
    /// `RESERVED_FREE_BLOCK_COUNT` = 1).
    OneVictim,
}
/// Where GC looks for victims and counts free blocks.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GcScope {
    /// Thresholds are per plane; the victim comes from the plane that is short of free blocks.
    Plane,
    /// Thresholds are on the device total; the victim comes from anywhere.
    Device,
}

/// Where GC writes migrated pages.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Migration {
    /// Into the victim's own plane (copyback-style; the default).
    SamePlane,
    /// To the next plane in the dynamic order.
    AnyPlane,
}

/// Garbage collection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GcConfig {
    /// Victim policy. Default `{ policy = "greedy" }`.
    #[serde(default = "d_victim")]
    pub victim: VictimConfig,
    /// `plane` (default) or `device`.
    #[serde(default = "d_scope")]
    pub scope: GcScope,
    /// GC starts when free blocks (per plane or on the device, see `scope`) fall below this. Default 3.
    #[serde(default = "d_start")]
    pub start_free_blocks: u32,
    /// With `burst = "to_stop"`, GC stops once free blocks reach this (also the target of background
    /// GC's default). Default 4 (must be ≥ start_free_blocks).
    #[serde(default = "d_stop")]
    pub stop_free_blocks: u32,
    /// When the threshold is checked: `every_write` (default) or `block_open`. See docs/model-ftl.md.
    #[serde(default)]
    pub trigger: GcTrigger,
    /// What one invocation collects: `to_start` (default), `to_stop` or `one_victim`.
    #[serde(default)]
    pub burst: GcBurst,
    /// `same_plane` (default) or `any_plane`.
    #[serde(default = "d_migration")]
    pub migration: Migration,
}
fn d_victim() -> VictimConfig {
    VictimConfig::greedy()
}
fn d_scope() -> GcScope {
    GcScope::Plane
}
fn d_start() -> u32 {
    3
}
fn d_stop() -> u32 {
    4
}
fn d_migration() -> Migration {
    Migration::SamePlane
}
impl Default for GcConfig {
    fn default() -> Self {
        GcConfig {
            victim: d_victim(),
            scope: d_scope(),
            start_free_blocks: d_start(),
            stop_free_blocks: d_stop(),
            trigger: GcTrigger::default(),
            burst: GcBurst::default(),
            migration: d_migration(),
        }
    }
}

fn d_placement() -> PlacementConfig {
    PlacementConfig::Single
}

/// Simple static wear levelling: every `check_every_erases` erases in a plane, if the plane's most-erased
/// block exceeds its least-erased sealed block by more than `threshold` erases, the least-erased block's
/// data is migrated and the block erased, so it re-enters the free pool and absorbs new writes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WearLevelingConfig {
    /// Off by default.
    #[serde(default)]
    pub enabled: bool,
    /// Allowed erase-count gap inside a plane. Default 50.
    #[serde(default = "d_wl_threshold")]
    pub threshold: u32,
    /// How often (in erases per plane) the gap is checked. Default 16.
    #[serde(default = "d_wl_every")]
    pub check_every_erases: u32,
}
fn d_wl_threshold() -> u32 {
    50
}
fn d_wl_every() -> u32 {
    16
}
impl Default for WearLevelingConfig {
    fn default() -> Self {
        WearLevelingConfig {
            enabled: false,
            threshold: d_wl_threshold(),
            check_every_erases: d_wl_every(),
        }
    }
}

/// The flash translation layer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FtlConfig {
    /// Over-provisioning as a fraction of the logical capacity: logical = floor(physical / (1 + op)),
    /// rounded down to whole 4 KiB units. Physical counts every block, including the GC free-block
    /// reserve and the open blocks (see docs/model-ftl.md for the effective figure). Default 0.07.
    #[serde(default = "d_op")]
    pub over_provisioning: f64,
    /// `static` (default) or `dynamic`.
    #[serde(default = "d_alloc")]
    pub allocation: Allocation,
    /// Order in which consecutive stripes visit the parallel units, fastest-varying first.
    /// Default `["channel", "chip", "die", "plane"]`.
    #[serde(default = "d_order")]
    pub striping_order: Vec<ParallelUnit>,
    /// Placement policy. Default `{ policy = "single" }`.
    #[serde(default = "d_placement")]
    pub placement: PlacementConfig,
    #[serde(default)]
    pub gc: GcConfig,
    #[serde(default)]
    pub wear_leveling: WearLevelingConfig,
    /// DFTL-style mapping cache (off by default).
    #[serde(default)]
    pub mapping_cache: crate::cache::MappingCacheConfig,
    /// What the FTL does with data in the swap range the host registered (DISS).
    #[serde(default)]
    pub swap: SwapDataConfig,
}

/// DISS's device-side handling of swap data (`[device.ftl.swap]` on a block device, `[device.hybrid.swap]`
/// on a hybrid one). The host registers the swap partition's range with the cross-layer
/// `register_swap_range` command (`host.swap.register_range`); until then, and with everything off (the
/// default), swap data is data like any other.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwapDataConfig {
    /// CL-SDI: a read of swap-range units invalidates them in the same mapping-table access as the read
    /// (a swapped-in page's slot is dead once read: the host holds the page and, with CDH, rewrites it if
    /// evicted again). Buffered copies are dropped (never flushed). Default false.
    #[serde(default)]
    pub invalidate_on_read: bool,
}
fn d_op() -> f64 {
    0.07
}
fn d_alloc() -> Allocation {
    Allocation::Static
}
/// The default striping order: channel, chip, die, plane (the first varies fastest), so consecutive
/// pages go to different channels first and to the planes of one die last.
pub(crate) fn d_order() -> Vec<ParallelUnit> {
    vec![
        ParallelUnit::Channel,
        ParallelUnit::Chip,
        ParallelUnit::Die,
        ParallelUnit::Plane,
    ]
}

/// A striping order names each of channel, chip, die and plane exactly once; the error names `key`.
pub(crate) fn check_striping_order(order: &[ParallelUnit], key: &str) -> Result<()> {
    let mut sorted = order.to_vec();
    sorted.sort_by_key(|u| *u as u8);
    sorted.dedup();
    if sorted.len() != 4 || order.len() != 4 {
        return Err(Error::config(
            key,
            "must name each of channel, chip, die, plane exactly once",
        ));
    }
    Ok(())
}
impl Default for FtlConfig {
    fn default() -> Self {
        FtlConfig {
            over_provisioning: d_op(),
            allocation: d_alloc(),
            striping_order: d_order(),
            placement: d_placement(),
            gc: GcConfig::default(),
            wear_leveling: WearLevelingConfig::default(),
            mapping_cache: Default::default(),
            swap: SwapDataConfig::default(),
        }
    }
}

impl FtlConfig {
    /// Logical capacity in 4 KiB units for a geometry.
    pub fn logical_units(&self, geo: &Geometry) -> u64 {
        (geo.total_units() as f64 / (1.0 + self.over_provisioning)).floor() as u64
    }

    /// Check values against each other and the geometry; errors name the key and the reason.
    pub fn validate(&self, geo: &Geometry, streams: u32) -> Result<()> {
        let op = self.over_provisioning;
        if !(op.is_finite() && op > 0.0 && op <= 10.0) {
            return Err(Error::config(
                "device.ftl.over_provisioning",
                format!("is {op}: must be in (0, 10]"),
            ));
        }
        check_striping_order(&self.striping_order, "device.ftl.striping_order")?;
        let gc = &self.gc;
        if gc.stop_free_blocks < gc.start_free_blocks {
            return Err(Error::config(
                "device.ftl.gc.stop_free_blocks",
                format!(
                    "is {} but must be ≥ start_free_blocks ({})",
                    gc.stop_free_blocks, gc.start_free_blocks
                ),
            ));
        }
        let bpp = geo.blocks_per_plane;
        let (scope_blocks, scope_name) = match gc.scope {
            GcScope::Plane => (bpp, "per plane"),
            GcScope::Device => (geo.total_blocks(), "on the device"),
        };
        if let VictimConfig::DChoices { d } = gc.victim {
            if d == 0 || d > scope_blocks {
                return Err(Error::config(
                    "device.ftl.gc.victim.d",
                    format!(
                        "is {d}: must be in [1, {scope_blocks}] (the blocks {scope_name}, where GC samples)"
                    ),
                ));
            }
        }
        if gc.scope == GcScope::Plane && gc.start_free_blocks <= streams {
            return Err(Error::config(
                "device.ftl.gc.start_free_blocks",
                format!(
                    "is {} but per-plane GC needs more than one free block per placement stream ({streams}) so \
                     that migration always finds room",
                    gc.start_free_blocks
                ),
            ));
        }
        if gc.start_free_blocks == 0 {
            return Err(Error::config(
                "device.ftl.gc.start_free_blocks",
                "must be at least 1",
            ));
        }
        // Blocks that never hold data: free reserve + one open block per stream, in the GC scope.
        let open = match gc.scope {
            GcScope::Plane => streams,
            GcScope::Device => streams * geo.planes(),
        };
        let logical_blocks = (self.logical_units(geo)).div_ceil(geo.units_per_block() as u64);
        let logical_in_scope = match gc.scope {
            GcScope::Plane => logical_blocks.div_ceil(geo.planes() as u64),
            GcScope::Device => logical_blocks,
        };
        let needed = logical_in_scope + gc.stop_free_blocks as u64 + open as u64 + 1;
        if needed > scope_blocks as u64 {
            return Err(Error::config(
                "device.ftl.gc.stop_free_blocks",
                format!(
                    "leaves no room for GC: {scope_name} the logical data needs {logical_in_scope} blocks, the free \
                     target {} and the open blocks {open}, but there are only {scope_blocks} blocks; raise \
                     device.ftl.over_provisioning or lower the thresholds",
                    gc.stop_free_blocks
                ),
            ));
        }
        // Device-scope GC still keeps more than one free block per stream in every plane (so that same-plane
        // migrations find room): each plane must hold its share of the data (static allocation: exactly;
        // dynamic: on average, once the logical space is full), its open blocks and that floor.
        if gc.scope == GcScope::Device {
            let per_plane = logical_blocks.div_ceil(geo.planes() as u64);
            let needed = per_plane + 2 * streams as u64 + 2;
            if needed > bpp as u64 {
                return Err(Error::config(
                    "device.ftl.over_provisioning",
                    format!(
                        "leaves no room for GC per plane: each plane holds about {per_plane} blocks of logical data, \
                         {streams} open block(s) and keeps more than {streams} free (one per placement stream), \
                         {needed} blocks, but has {bpp}; raise device.ftl.over_provisioning or use fewer placement streams"
                    ),
                ));
            }
        }
        if let PlacementConfig::Mbf(m) = &self.placement {
            m.validate()?;
        }
        if self.wear_leveling.enabled && self.wear_leveling.check_every_erases == 0 {
            return Err(Error::config(
                "device.ftl.wear_leveling.check_every_erases",
                "must be at least 1",
            ));
        }
        Ok(())
    }
}
