//! Tests of the zoned device: the state machine (every transition, every error), hand-computed timing,
//! configuration, statistics, verification, and property tests of random command sequences.
//!
//! The small device most tests use: 1 channel × 1 chip × 1 die × 2 planes × 4 blocks × 4 pages of 8 KiB
//! (2 units per page), TLC timing (tR 66 µs, tPROG 730 µs, tBERS 4.8 ms, 4 KiB over the 800 MB/s channel
//! = 5,120 ns). A zone is 2 blocks (one per plane): 8 pages, 16 units, 64 KiB; 4 zones.

mod config;
mod matrix;
mod props;
mod state;
mod timing;

use nandstack_core::{Nanos, Result};

use super::*;
use crate::config::GeometryOverrides;
use crate::device::{Command, Completion, Device, ZoneCommand, ZoneInfo, ZoneState};

pub(super) const U: u64 = 4096;

pub(super) fn small_geometry() -> GeometryOverrides {
    GeometryOverrides {
        channels: Some(1),
        chips_per_channel: Some(1),
        dies_per_chip: Some(1),
        planes_per_die: Some(2),
        blocks_per_plane: Some(4),
        pages_per_block: Some(4),
        page_size_bytes: Some(8192),
        cell_mode: None,
    }
}

pub(super) fn small_cfg(max_open: u32, max_active: u32) -> ZonedConfig {
    ZonedConfig {
        geometry: small_geometry(),
        max_open_zones: max_open,
        max_active_zones: max_active,
        ..ZonedConfig::default()
    }
}

pub(super) fn dev(cfg: &ZonedConfig) -> ZonedSsd {
    let mut d = ZonedSsd::new(cfg).unwrap();
    d.enable_verification();
    d
}

pub(super) fn small(max_open: u32, max_active: u32) -> ZonedSsd {
    dev(&small_cfg(max_open, max_active))
}

/// Write `n` units at unit `unit` of zone `z`, at time `at`.
pub(super) fn write(d: &mut ZonedSsd, at: u64, z: u32, unit: u64, n: u64) -> Result<Completion> {
    let off = z as u64 * d.params().zone_size_bytes + unit * U;
    d.submit(Nanos(at), Command::write(off, n * U))
}

/// Write at zone `z`'s write pointer.
pub(super) fn write_wp(d: &mut ZonedSsd, at: u64, z: u32, n: u64) -> Result<Completion> {
    let wp = d.zone_info(z).unwrap().write_pointer - d.zone_info(z).unwrap().start;
    write(d, at, z, wp / U, n)
}

pub(super) fn zone(d: &mut ZonedSsd, at: u64, cmd: ZoneCommand<'_>) -> Result<Completion> {
    d.submit(Nanos(at), Command::Zone(cmd))
}

pub(super) fn open(d: &mut ZonedSsd, z: u32) -> Result<Completion> {
    zone(d, 0, ZoneCommand::Open { zone: z })
}
pub(super) fn close(d: &mut ZonedSsd, z: u32) -> Result<Completion> {
    zone(d, 0, ZoneCommand::Close { zone: z })
}
pub(super) fn finish(d: &mut ZonedSsd, z: u32) -> Result<Completion> {
    zone(d, 0, ZoneCommand::Finish { zone: z })
}
pub(super) fn reset(d: &mut ZonedSsd, z: u32) -> Result<Completion> {
    zone(d, 0, ZoneCommand::Reset { zone: z })
}
pub(super) fn append(d: &mut ZonedSsd, z: u32, n: u64) -> Result<Completion> {
    zone(
        d,
        0,
        ZoneCommand::Append {
            zone: z,
            len: n * U,
            meta: &[],
        },
    )
}

pub(super) fn state_of(d: &ZonedSsd, z: u32) -> ZoneState {
    d.zone_info(z).unwrap().state
}

/// The error message of a failed command (panics if it succeeded).
pub(super) fn err<T: std::fmt::Debug>(r: Result<T>) -> String {
    r.unwrap_err().to_string()
}

/// Run `f`, expect it to fail with `phrase`, and check it changed no zone and no counter but the
/// rejected-command count.
pub(super) fn rejects(
    d: &mut ZonedSsd,
    phrase: &str,
    f: impl FnOnce(&mut ZonedSsd) -> Result<Completion>,
) {
    let before = zone(d, 0, ZoneCommand::Report).unwrap().zones;
    let (stats, rejected) = (d.stats(), d.counters().rejected_commands);
    let e = err(f(d));
    assert!(e.contains(phrase), "expected `{phrase}`, got `{e}`");
    assert_eq!(
        zone(d, 0, ZoneCommand::Report).unwrap().zones,
        before,
        "{e}"
    );
    assert_eq!(d.stats(), stats, "{e}");
    assert_eq!(d.counters().rejected_commands, rejected + 1);
    d.check_invariants().unwrap();
}
