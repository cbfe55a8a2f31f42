//! `ZonedSsd`: an NVMe Zoned Namespace (ZNS) SSD. The host owns placement and reclamation: there is no
//! mapping table and no device GC. Zone `z` covers the byte range `[z × size, (z + 1) × size)` of the LBA
//! space; its first `capacity` bytes are writable, in order, at the write pointer. Reference behaviour:
//! the NVMe ZNS command set (zone states ZSE, ZSIO, ZSEO, ZSC, ZSF, ZSRO, ZSO) as Linux `null_blk` and
//! QEMU's NVMe emulation implement it; the notes below say where those two differ and which one we follow.
//!
//! # Zone state machine (`state.rs`)
//! | command | from | to | resources |
//! |---|---|---|---|
//! | write / append | empty | implicitly open | needs an active and an open resource |
//! | write / append | closed | implicitly open | needs an open resource |
//! | write / append | implicitly / explicitly open | unchanged | — |
//! | write / append reaching the capacity | open | full | releases open + active |
//! | open | empty | explicitly open | needs active + open |
//! | open | closed | explicitly open | needs open |
//! | open | implicitly open | explicitly open | — |
//! | open | explicitly open | unchanged (no error) | — |
//! | close | implicitly / explicitly open, data written | closed | releases open |
//! | close | explicitly open, nothing written | empty (ZBC's rule, which null_blk follows; QEMU's NVMe keeps it closed) | releases open + active |
//! | close | closed | unchanged (no error) | — |
//! | finish | empty | full | — |
//! | finish | open / closed | full | releases what it held |
//! | finish | full | unchanged (no error) | — |
//! | reset | open / closed / full | empty (data, metadata and write pointer cleared) | releases what it held |
//! | reset | empty | unchanged (no error, no erase) | — |
//! | [`ZonedSsd::set_zone_condition`] (controller: wear-out, failure) | any but read-only/offline | read-only or offline | releases what it held |
//! | [`ZonedSsd::set_zone_condition`] | read-only | offline | — |
//!
//! When an open resource is needed and `max_open_zones` zones are open, the device closes the implicitly
//! open zone written least recently (the spec lets the controller pick; null_blk goes round robin, QEMU
//! takes the oldest opened) — as long as that frees room: it never frees an active resource.
//!
//! # Errors (every one is [`Error::Protocol`] with the phrase below, unless noted; a failed command changes nothing)
//! * `too many open zones`: an open resource is needed, the limit is reached and no zone is implicitly open.
//! * `too many active zones`: an empty zone would become active with `max_active_zones` zones active.
//! * `zone is full`: a write or append to a full zone.
//! * `zone is read-only` / `zone is offline`: a write or append to such a zone; any read of an offline zone.
//! * `write not at write pointer`: a write that does not start at the zone's write pointer (this includes
//!   writes into the unwritable gap between capacity and size).
//! * `zone boundary crossed`: a write or append past the zone capacity; a read spanning two zones (unless
//!   `cross_zone_reads`).
//! * `invalid zone state transition`: open of a full zone, close of an empty or full zone, any management
//!   command on a read-only or offline zone.
//! * `not aligned to the 4096-byte logical block`: an offset or length that is not a multiple of 4096;
//!   `metadata has N words for M units`: a `meta` slice of the wrong length.
//! * [`Error::OutOfRange`]: a range beyond the LBA space, a zero length, a zone id ≥ the zone count.
//! * [`Error::Unsupported`]: TRIM (the host reclaims with zone reset) and every extension command.
//!
//! # Physical model and timing (`layout.rs`, `flash.rs`, `io.rs`)
//! A zone owns `blocks_per_zone` erase blocks striped over the planes; its pages are striped over its
//! blocks (see `layout.rs`); the capacity is what those blocks hold. Each 4 KiB unit crosses its channel
//! into its die's register as it is written ([`Timelines::transfer_in`]); a page is programmed when its
//! last unit arrives, on its die's timeline ([`Timelines::program`]). A write completes when its data is
//! in the registers and the pages it filled are programmed — the block SSD's rule without a write buffer.
//! The partially filled tail page of each zone stays buffered until the page fills; Zone Finish pads it
//! (and, with `finish_padding = zone`, programs filler into every remaining page); Flush pads it into a
//! staging page (`flush = pad`) or leaves it in power-loss-protected memory (`retain`). Reads sense
//! each page once and move the units read over the channel ([`Timelines::read`]); units still buffered
//! are served from the controller at submission time, units at or past the write pointer are unwritten:
//! no flash read, zeros and metadata 0 (ZNS' deallocated-read behaviour with DULBE off). Reset erases every
//! block of the zone that holds a programmed page ([`Timelines::erase`]) and completes with the last
//! erase. Padding counts in `flash_program_pages` and so in WAF.
//!
//! # Metadata and verification
//! One word of metadata per 4 KiB unit ([`Command::Write::meta`], [`ZoneCommand::Append::meta`]) is stored
//! with the data, returned with reads ([`Completion::meta`]) and cleared by reset. With
//! [`Device::enable_verification`] every written unit gets a version, held logically (per zone) and
//! physically (per flash unit, set when its page is programmed); reads compare the two.

pub mod block_layer;
mod config;
mod flash;
mod io;
mod layout;
mod state;
mod stats;
mod verify;

pub use block_layer::ZonedBlockLayer;
pub use config::{
    zn540_small_geometry, BlockLayerConfig, FinishPadding, FlushMode, ZonedConfig, ZonedParams,
};
pub use layout::PageAddr;
pub use state::StateCounters;
pub use stats::Counters;

use nandstack_core::{Error, Nanos, Result, MAPPING_UNIT_BYTES};

use crate::device::{
    unsupported, Command, Completion, Device, DeviceKind, DeviceStats, ZoneCommand, ZoneInfo,
    ZoneModel, ZoneState,
};
use crate::nand::{Geometry, Timelines};
use layout::Layout;
use state::ZoneTable;

/// Verification mode: version counter and the version each physical unit holds (0 = erased).
#[derive(Clone, Debug)]
struct Versions {
    next: u64,
    physical: Vec<u64>,
}

/// Version of a padding unit.
const PAD_VERSION: u64 = u64::MAX;

/// The zoned SSD.
pub struct ZonedSsd {
    params: ZonedParams,
    layout: Layout,
    table: ZoneTable,
    timelines: Option<Timelines>,
    /// Erase count of every block of the device (wear; survives `reset_counters`).
    erase_counts: Vec<u32>,
    /// Erases since construction (the per-block counts add up to it).
    erases_total: u64,
    counters: Counters,
    versions: Option<Versions>,
}

impl ZonedSsd {
    /// Build the device a config describes (see [`ZonedConfig`] for the keys).
    pub fn new(cfg: &ZonedConfig) -> Result<ZonedSsd> {
        Ok(ZonedSsd::with_params(cfg.resolve()?))
    }

    /// Build the device from validated parameters ([`ZonedConfig::resolve`]).
    pub fn with_params(params: ZonedParams) -> ZonedSsd {
        let geo = &params.geometry;
        let layout = Layout::new(
            geo,
            &params.striping_order,
            params.blocks_per_zone,
            params.zone_size_bytes / MAPPING_UNIT_BYTES,
        );
        let timelines = params
            .timing
            .enabled
            .then(|| Timelines::new(geo, &params.timing));
        ZonedSsd {
            table: ZoneTable::new(params.zones, params.max_open_zones, params.max_active_zones),
            erase_counts: vec![0; geo.total_blocks() as usize],
            erases_total: 0,
            layout,
            timelines,
            counters: Counters::default(),
            versions: None,
            params,
        }
    }

    pub fn params(&self) -> &ZonedParams {
        &self.params
    }
    pub fn geometry(&self) -> &Geometry {
        &self.params.geometry
    }
    pub fn counters(&self) -> &Counters {
        &self.counters
    }
    pub fn state_counters(&self) -> &StateCounters {
        &self.table.counters
    }
    pub fn timelines(&self) -> Option<&Timelines> {
        self.timelines.as_ref()
    }
    /// Erase count of every block (global block id `plane × blocks_per_plane + block`).
    pub fn erase_counts(&self) -> &[u32] {
        &self.erase_counts
    }
    /// Zones open and active now.
    pub fn open_active(&self) -> (u32, u32) {
        (self.table.open, self.table.active)
    }

    /// One zone as a report shows it. The write pointer of a full zone is its end (start + size, as
    /// Linux reports it); of a read-only or offline zone `u64::MAX` (not valid).
    pub fn zone_info(&self, z: u32) -> Result<ZoneInfo> {
        let zone = self.table.zones.get(z as usize).ok_or_else(|| {
            Error::OutOfRange(format!(
                "zone {z} (the device has {} zones)",
                self.params.zones
            ))
        })?;
        let start = z as u64 * self.params.zone_size_bytes;
        let write_pointer = match zone.state {
            ZoneState::Full => start + self.params.zone_size_bytes,
            ZoneState::ReadOnly | ZoneState::Offline => u64::MAX,
            _ => start + zone.written as u64 * MAPPING_UNIT_BYTES,
        };
        Ok(ZoneInfo {
            start,
            size: self.params.zone_size_bytes,
            capacity: self.params.zone_capacity_bytes,
            write_pointer,
            state: zone.state,
        })
    }

    /// Controller-side condition change (fault injection, like null_blk's `zone_readonly` /
    /// `zone_offline`): the zone becomes read-only (readable, not writable) or offline (neither). Other
    /// targets, and leaving read-only/offline, are `invalid zone state transition`.
    pub fn set_zone_condition(&mut self, zone: u32, to: ZoneState) -> Result<()> {
        self.zone_index(zone)?;
        self.table.set_condition(zone, to)
    }

    fn zone_index(&self, z: u32) -> Result<usize> {
        if z >= self.params.zones {
            return Err(Error::OutOfRange(format!(
                "zone {z} (the device has {} zones)",
                self.params.zones
            )));
        }
        Ok(z as usize)
    }

    fn manage(&mut self, at: u64, cmd: &ZoneCommand<'_>) -> Result<Completion> {
        let done = match *cmd {
            ZoneCommand::Open { zone } => {
                self.zone_index(zone)?;
                self.table.open(zone)?;
                at
            }
            ZoneCommand::Close { zone } => {
                self.zone_index(zone)?;
                self.table.close(zone)?;
                at
            }
            ZoneCommand::Finish { zone } => {
                self.zone_index(zone)?;
                if self.table.finish(zone)? {
                    self.pad_for_finish(zone, at)
                } else {
                    at
                }
            }
            ZoneCommand::Reset { zone } => {
                self.zone_index(zone)?;
                if self.table.reset(zone)? {
                    self.erase_zone(zone, at)
                } else {
                    at
                }
            }
            ZoneCommand::Append { zone, len, meta } => return self.append(at, zone, len, meta),
            ZoneCommand::Report => {
                let zones = (0..self.params.zones)
                    .map(|z| self.zone_info(z))
                    .collect::<Result<Vec<_>>>()?;
                return Ok(Completion {
                    done: Nanos(at),
                    zones,
                    ..Completion::default()
                });
            }
        };
        Ok(Completion::at(Nanos(done)))
    }

    fn dispatch(&mut self, at: u64, cmd: Command<'_>) -> Result<Completion> {
        if let Some(tl) = self.timelines.as_mut() {
            tl.advance(at);
        }
        match cmd {
            Command::Read { offset, len } => self.host_read(at, offset, len),
            Command::Write { offset, len, meta } => self.host_write(at, offset, len, meta),
            Command::Flush => Ok(Completion::at(Nanos(self.flush_tails(at)))),
            Command::Zone(z) => self.manage(at, &z),
            cmd @ (Command::Trim { .. } | Command::Ext(_)) => {
                Err(unsupported(DeviceKind::Zoned, &cmd))
            }
        }
    }
}

impl Device for ZonedSsd {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
    fn kind(&self) -> DeviceKind {
        DeviceKind::Zoned
    }
    fn capacity_bytes(&self) -> u64 {
        self.params.zones as u64 * self.params.zone_size_bytes
    }
    fn submit(&mut self, at: Nanos, cmd: Command<'_>) -> Result<Completion> {
        let r = self.dispatch(at.0, cmd);
        if r.is_err() {
            self.counters.rejected_commands += 1;
        }
        r
    }
    /// Only the farthest request: the metadata word of its first unit (a zone's metadata is a table
    /// of its own: a read at a random place misses it).
    fn prefetch(&self, ahead: [Option<u64>; 3]) {
        if let Some(o) = ahead[2] {
            let u = o / MAPPING_UNIT_BYTES;
            let size = self.layout.size_units;
            if let Some(zone) = self.table.zones.get((u / size) as usize) {
                nandstack_core::hint::prefetch(&zone.meta, (u % size) as usize);
            }
        }
    }
    fn zone_model(&self) -> Option<ZoneModel> {
        let (open, active) = self.table.limits();
        Some(ZoneModel {
            zones: self.params.zones,
            zone_size_bytes: self.params.zone_size_bytes,
            zone_capacity_bytes: self.params.zone_capacity_bytes,
            max_open_zones: open.unwrap_or(self.params.zones),
            max_active_zones: active.unwrap_or(self.params.zones),
        })
    }
    fn stats(&self) -> DeviceStats {
        self.device_stats()
    }
    fn details(&self) -> serde_json::Value {
        self.details_json()
    }
    fn reset_counters(&mut self) {
        self.counters = Counters::default();
        self.table.counters = StateCounters {
            open_high_water: self.table.open,
            active_high_water: self.table.active,
            ..StateCounters::default()
        };
        if let Some(t) = self.timelines.as_mut() {
            t.array_busy_ns = 0;
            t.channel_busy_ns = 0;
        }
    }
    fn enable_verification(&mut self) {
        self.start_verification();
    }
    fn check_invariants(&self) -> Result<()> {
        self.invariants()
    }
    fn verify_all(&self) -> Result<()> {
        self.invariants()?;
        self.verify_versions()
    }
    /// Untimed: the state changes as `cmd` would make them, with the timelines left idle.
    fn precondition(&mut self, cmd: Command<'_>) -> Result<()> {
        let timelines = self.timelines.take();
        let r = self.dispatch(0, cmd);
        self.timelines = timelines;
        r.map(|_| ())
    }
}

#[cfg(test)]
mod tests;
