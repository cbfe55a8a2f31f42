//! Setup shared by the SSD tests ([`super::tests`], [`super::queued_tests`]): the default TLC timing in
//! numbers and small verified devices.

use super::*;
use crate::ftl::{FtlConfig, GcConfig};
use crate::nand::{CellMode, Geometry};

/// One 4 KiB mapping unit, in bytes.
pub(super) const U: u64 = 4096;
/// One unit over the default 800 MB/s channel, ns.
pub(super) const X: u64 = 5_120;
/// Default TLC tR, tPROG and tBERS, ns.
pub(super) const TR: u64 = 66_000;
pub(super) const TP: u64 = 730_000;
pub(super) const TE: u64 = 4_800_000;

/// A TLC geometry: `channels` × `dies` one-die chips × `planes` × `blocks`, blocks of `pages_per_block`
/// pages of `page_size_bytes`.
pub(super) fn geometry(
    channels: u32,
    dies: u32,
    planes: u32,
    blocks: u32,
    pages_per_block: u32,
    page_size_bytes: u32,
) -> Geometry {
    Geometry {
        channels,
        chips_per_channel: dies,
        dies_per_chip: 1,
        planes_per_die: planes,
        blocks_per_plane: blocks,
        pages_per_block,
        page_size_bytes,
        cell_mode: CellMode::Tlc,
    }
}

/// A block SSD over an FTL built with `seed`, read-after-write versions checked.
pub(super) fn verified_ssd(
    g: Geometry,
    ftl: FtlConfig,
    ctl: ControllerConfig,
    timing: &TimingConfig,
    seed: u64,
) -> BlockSsd {
    let mut f = Ftl::new(g, ftl, seed).unwrap();
    f.enable_verification();
    BlockSsd::new(f, timing, ctl).unwrap()
}

/// An FTL with as much spare space as logical space.
pub(super) fn roomy_ftl() -> FtlConfig {
    FtlConfig {
        over_provisioning: 1.0,
        ..FtlConfig::default()
    }
}

/// An FTL with twice its logical space spare whose foreground GC runs only below 2 free blocks.
pub(super) fn late_gc_ftl() -> FtlConfig {
    FtlConfig {
        over_provisioning: 2.0,
        gc: GcConfig {
            start_free_blocks: 2,
            stop_free_blocks: 2,
            ..GcConfig::default()
        },
        ..FtlConfig::default()
    }
}

/// Background GC after 100 µs of idle time, up to 5 free blocks.
pub(super) fn idle_gc() -> BackgroundGcConfig {
    BackgroundGcConfig {
        enabled: true,
        idle_threshold_us: 100.0,
        target_free_blocks: Some(5),
    }
}
