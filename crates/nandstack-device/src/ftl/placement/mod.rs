//! Placement policies: every write the FTL performs — host, GC or wear-levelling — is mapped to a stream;
//! the FTL keeps one open block per (stream, plane).
//!
//! # Contract
//! * [`PlacementPolicy::streams`] is fixed for the policy's lifetime and ≥ 1; `stream_for` returns a
//!   value below it.
//! * `stream_for` is called exactly once per unit written, in simulation order, and may update internal
//!   state (hotness filters, counters). It must be deterministic. The one exception: migrations out of
//!   a block of a stream for which `migration_stream` answers `Some(s)` — the FTL may write those to
//!   `s` without calling `stream_for`, so a policy answers `Some` only where `stream_for` would return
//!   `s` for every such unit and change no state.
//! * `on_trim` is called for each unit a TRIM unmaps (policies tracking hotness may forget it).

mod host_gc;
pub mod mbf;
mod single;
mod swap_file;

pub use host_gc::HostGc;
pub use mbf::{Mbf, MbfConfig};
pub use single::Single;
pub use swap_file::SwapFile;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Why a unit is being written.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WriteCause {
    Host,
    Gc,
    WearLeveling,
}

/// What a placement policy sees of a write.
#[derive(Copy, Clone, Debug)]
pub struct WriteCtx {
    /// Logical 4 KiB unit.
    pub lpn: u32,
    pub cause: WriteCause,
    /// For migrations: the stream of the block the data comes from.
    pub source_stream: Option<u8>,
    /// Size of the host request the unit belongs to, in bytes (0 for migrations).
    pub request_bytes: u32,
}

pub trait PlacementPolicy: PlacementClone + Send {
    fn name(&self) -> &'static str;
    fn streams(&self) -> u32;
    fn stream_for(&mut self, ctx: &WriteCtx) -> u8;
    fn on_trim(&mut self, _lpn: u32) {}
    /// The stream every migration (`cause` GC or wear levelling) out of a block of `source_stream` goes
    /// to, when that depends on nothing else (not the unit) and `stream_for` keeps no state for it; the
    /// FTL then moves a victim's units as one run. `None` (the default): ask `stream_for` per unit.
    fn migration_stream(&self, _source_stream: u8, _cause: WriteCause) -> Option<u8> {
        None
    }
    /// The host registered its swap partition: logical units `[first, end)` (DISS). Default: ignored.
    fn on_swap_range(&mut self, _first: u32, _end: u32) {}
    /// Controller CPU time the policy has spent so far, in ns (firmware cost model; 0 for policies that
    /// cost nothing beyond the baseline). Monotonic.
    fn firmware_ns(&self) -> u64 {
        0
    }
}

/// Placement policy: maps every write (host or GC) to a stream; one open block per (stream, plane).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "policy", deny_unknown_fields)]
pub enum PlacementConfig {
    /// One stream for everything (the default).
    Single,
    /// Stream 0 for host writes, stream 1 for GC and wear-levelling migrations.
    HostGc,
    /// SUP-GC (Wang et al.): host writes to hot blocks, GC-migrated data to cold blocks, never mixed — the
    /// same placement as `host_gc`, named after the paper.
    SupGc,
    /// Multiple-Bloom-filter hot/cold identification ("BF-Optimized"): hot writes to stream 0, cold to 1.
    Mbf(MbfConfig),
    /// DISS swap/file data separation (SDS): data in the swap range the host registered goes to stream 1,
    /// everything else to stream 0 — host writes and migrations alike, so no block mixes the two. Before a
    /// range is registered everything is file data.
    SwapFile,
}

pub fn build(cfg: &PlacementConfig) -> Box<dyn PlacementPolicy> {
    match cfg {
        PlacementConfig::Single => Box::new(Single),
        PlacementConfig::HostGc | PlacementConfig::SupGc => Box::new(HostGc),
        PlacementConfig::Mbf(m) => Box::new(Mbf::new(m.clone())),
        PlacementConfig::SwapFile => Box::new(SwapFile::default()),
    }
}

boxed_clone!(PlacementPolicy, PlacementClone);

#[cfg(test)]
mod tests {
    use super::*;

    /// Shared conformance: stream ids are in range for every cause.
    #[test]
    fn conformance() {
        for cfg in [
            PlacementConfig::Single,
            PlacementConfig::HostGc,
            PlacementConfig::SupGc,
            PlacementConfig::Mbf(MbfConfig::default()),
            PlacementConfig::SwapFile,
        ] {
            let mut p = build(&cfg);
            assert!(p.streams() >= 1);
            for (i, cause) in [WriteCause::Host, WriteCause::Gc, WriteCause::WearLeveling]
                .into_iter()
                .enumerate()
            {
                let ctx = WriteCtx {
                    lpn: i as u32,
                    cause,
                    source_stream: Some(0),
                    request_bytes: 4096,
                };
                assert!((p.stream_for(&ctx) as u32) < p.streams(), "{}", p.name());
            }
        }
        let mut hg = HostGc;
        let host = WriteCtx {
            lpn: 1,
            cause: WriteCause::Host,
            source_stream: None,
            request_bytes: 4096,
        };
        let gc = WriteCtx {
            cause: WriteCause::Gc,
            source_stream: Some(0),
            ..host
        };
        assert_ne!(hg.stream_for(&host), hg.stream_for(&gc));
    }
}
