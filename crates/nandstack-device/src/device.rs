//! The one interface between whatever issues I/O (a trace replayer, a synthetic generator, the host's
//! block layer, a swap backend) and any simulated SSD: block, hybrid SLC/QLC or zoned.
//!
//! # Contract (every [`Device`] obeys it; `tests/device/conformance.rs` checks each implementation)
//! * A command is submitted at a simulated time `at` and answered with its completion time
//!   (`Completion::done ≥ at`) or a named [`Error`]: out-of-range addresses are
//!   [`Error::OutOfRange`], commands the device does not implement are [`Error::Unsupported`], commands
//!   that break the device's protocol (a zoned write not at the write pointer, too many open zones) are
//!   [`Error::Protocol`]. A failed command changes no data and no counter.
//! * Submission times need not be monotone across commands (several queues submit interleaved), but a
//!   device may assume that time never runs backwards by more than it has already simulated per resource;
//!   completions of commands contending for one resource (a die, a channel) are monotone in submission order.
//! * Data is tracked as versions, not bytes: a read after a write of the same logical unit returns what
//!   the last write stored (checked in verification mode); a read of a trimmed or never-written unit is
//!   served without a flash read (and, on devices that track it, counted in
//!   [`Completion::unmapped_units`]). Zoned devices also keep a word of per-unit metadata
//!   ([`Command::Write::meta`]) and return it with reads ([`Completion::meta`]).
//! * A device never reaches back into the host. Cross-layer information crosses through [`ExtCommand`]s.
//! * Counters are cumulative since construction or the last [`Device::reset_counters`].

use nandstack_core::{Error, Nanos, Result};
use serde::Serialize;

/// Which model answers the commands.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceKind {
    Block,
    Hybrid,
    Zoned,
}

impl DeviceKind {
    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Block => "block",
            DeviceKind::Hybrid => "hybrid",
            DeviceKind::Zoned => "zoned",
        }
    }
}

/// A command to a device. Offsets and lengths are bytes of the logical (LBA) space.
#[derive(Clone, Debug, PartialEq)]
pub enum Command<'a> {
    Read {
        offset: u64,
        len: u64,
    },
    Write {
        offset: u64,
        len: u64,
        /// Per-4 KiB-unit metadata to store with the data (zoned devices; empty = none). When not
        /// empty it has one word per unit the write covers.
        meta: &'a [u64],
    },
    /// Deallocate (TRIM / discard / NVMe DSM deallocate).
    Trim {
        offset: u64,
        len: u64,
    },
    /// Make the writes completed before it was submitted durable (NVMe Flush: write buffer drained, open
    /// pages programmed); writes still in flight are not covered.
    Flush,
    /// Zone management (zoned devices only; others answer [`Error::Unsupported`]).
    Zone(ZoneCommand<'a>),
    /// Cross-layer extensions (devices that do not implement one answer [`Error::Unsupported`]).
    Ext(ExtCommand),
}

impl Command<'_> {
    pub fn read(offset: u64, len: u64) -> Command<'static> {
        Command::Read { offset, len }
    }
    pub fn write(offset: u64, len: u64) -> Command<'static> {
        Command::Write {
            offset,
            len,
            meta: &[],
        }
    }
    pub fn trim(offset: u64, len: u64) -> Command<'static> {
        Command::Trim { offset, len }
    }
    /// Short name for errors and statistics.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Read { .. } => "read",
            Command::Write { .. } => "write",
            Command::Trim { .. } => "trim",
            Command::Flush => "flush",
            Command::Zone(z) => z.name(),
            Command::Ext(e) => e.name(),
        }
    }
}

/// NVMe ZNS zone management and zone append.
#[derive(Clone, Debug, PartialEq)]
pub enum ZoneCommand<'a> {
    Open {
        zone: u32,
    },
    Close {
        zone: u32,
    },
    Finish {
        zone: u32,
    },
    Reset {
        zone: u32,
    },
    /// Write `len` bytes at the zone's write pointer; the completion says where they landed.
    Append {
        zone: u32,
        len: u64,
        meta: &'a [u64],
    },
    /// Report every zone's state (answered in [`Completion::zones`]).
    Report,
}

impl ZoneCommand<'_> {
    pub fn name(&self) -> &'static str {
        match self {
            ZoneCommand::Open { .. } => "zone_open",
            ZoneCommand::Close { .. } => "zone_close",
            ZoneCommand::Finish { .. } => "zone_finish",
            ZoneCommand::Reset { .. } => "zone_reset",
            ZoneCommand::Append { .. } => "zone_append",
            ZoneCommand::Report => "zone_report",
        }
    }
}

/// Commands that carry host knowledge to the device (each scheme that needs one adds a variant).
#[derive(Clone, Debug, PartialEq)]
pub enum ExtCommand {
    /// DISS swap-data recognition: the byte range of the swap partition. The device classifies every
    /// later request by it and may invalidate swap data on read. Persisted by the device.
    RegisterSwapRange { offset: u64, len: u64 },
}

impl ExtCommand {
    pub fn name(&self) -> &'static str {
        match self {
            ExtCommand::RegisterSwapRange { .. } => "register_swap_range",
        }
    }
}

/// Zone states (NVMe ZNS).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ZoneState {
    Empty,
    ImplicitlyOpen,
    ExplicitlyOpen,
    Closed,
    Full,
    ReadOnly,
    Offline,
}

/// One zone as a report shows it. Byte offsets in the LBA space.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ZoneInfo {
    pub start: u64,
    /// Zone size (the stride between zone starts).
    pub size: u64,
    /// Writable bytes (≤ size).
    pub capacity: u64,
    pub write_pointer: u64,
    pub state: ZoneState,
}

/// The zone layout and limits of a zoned device.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ZoneModel {
    pub zones: u32,
    pub zone_size_bytes: u64,
    pub zone_capacity_bytes: u64,
    /// Most zones that may be open (implicitly or explicitly) at once.
    pub max_open_zones: u32,
    /// Most zones that may be open or closed (active) at once.
    pub max_active_zones: u32,
}

/// What a device answers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Completion {
    pub done: Nanos,
    /// Zone append: byte offset at which the data was written.
    pub written_at: Option<u64>,
    /// Reads from a device that keeps per-unit metadata: one word per 4 KiB unit read (0 = none).
    pub meta: Vec<u64>,
    /// Zone report.
    pub zones: Vec<ZoneInfo>,
    /// Reads: 4 KiB units that held no data (never written, trimmed, or invalidated by a swap-range read)
    /// and read back as zeroes. A host that reads data it believes stored and gets such units has lost it.
    /// Devices that do not track it answer 0.
    pub unmapped_units: u64,
}

impl Completion {
    pub fn at(done: Nanos) -> Completion {
        Completion {
            done,
            ..Completion::default()
        }
    }
}

/// Counters every device keeps, with the same names and meanings everywhere (the summary's common keys).
/// A flash page is the device's program unit; WAF = flash page programs ÷ (host-written bytes ÷ page size).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DeviceStats {
    pub host_read_requests: u64,
    pub host_write_requests: u64,
    pub host_trim_requests: u64,
    pub host_read_bytes: u64,
    pub host_write_bytes: u64,
    pub host_trim_bytes: u64,
    /// Flash page programs of every cause (host, GC, migration, padding, translation).
    pub flash_program_pages: u64,
    pub flash_read_pages: u64,
    /// 4 KiB units moved by device GC or migration (host-side GC of a zoned device is not counted here).
    pub gc_migrated_units: u64,
    pub erase_count: u64,
    /// Bytes of the device's flash page (the program unit of `flash_program_pages`).
    pub page_size_bytes: u64,
}

impl DeviceStats {
    /// Write amplification as defined above; NaN when nothing was written.
    pub fn waf(&self) -> f64 {
        if self.host_write_bytes == 0 {
            return f64::NAN;
        }
        self.flash_program_pages as f64
            / (self.host_write_bytes as f64 / self.page_size_bytes as f64)
    }
}

/// Identifies a command submitted with [`Device::enqueue`]: the caller's `id` and the flow (NVMe
/// submission queue, tenant) it came from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tag {
    pub id: u64,
    pub flow: u32,
}

/// A simulated SSD. See the module documentation for the contract.
pub trait Device: Send {
    fn kind(&self) -> DeviceKind;
    /// The concrete model, for callers that need its own API (reports, the RL pre-training chain).
    fn as_any(&self) -> &dyn std::any::Any;
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
    /// Bytes of the logical (LBA) space.
    fn capacity_bytes(&self) -> u64;
    /// Answer one command submitted at `at`.
    fn submit(&mut self, at: Nanos, cmd: Command<'_>) -> Result<Completion>;
    /// Zone layout, for zoned devices.
    fn zone_model(&self) -> Option<ZoneModel> {
        None
    }
    /// Common counters.
    fn stats(&self) -> DeviceStats;
    /// Host bytes written and read so far, as in [`Device::stats`]: what a time series due every so many
    /// host bytes reads after each request, which a device may give without building every counter.
    fn host_bytes(&self) -> (u64, u64) {
        let s = self.stats();
        (s.host_write_bytes, s.host_read_bytes)
    }
    /// The model's own section of the summary (geometry, policies, counters by cause, …).
    fn details(&self) -> serde_json::Value;
    /// Zero every counter (after preconditioning); data and wear stay.
    fn reset_counters(&mut self);
    /// A copy of the whole device, which then behaves exactly as this one would from here on (a
    /// preconditioned device kept per process, `nandstack_sim::aged`). Default `None`: the kind
    /// cannot be copied (the zoned device).
    fn snapshot(&self) -> Option<Box<dyn Device>> {
        None
    }
    /// Turn on read-after-write version checks from now on.
    fn enable_verification(&mut self);
    /// Full invariant check (each logical unit has exactly one valid physical copy, counts add up, …).
    fn check_invariants(&self) -> Result<()>;
    /// Verification mode: check every mapped unit against the version last written (end of run).
    fn verify_all(&self) -> Result<()> {
        self.check_invariants()
    }
    /// Preconditioning: change the device's state as `cmd` would, as fast as possible and without
    /// timing (no clock advances, no write buffer); counters are reset after preconditioning.
    /// Default: submit at time 0 and drop the completion.
    fn precondition(&mut self, cmd: Command<'_>) -> Result<()> {
        self.submit(Nanos::ZERO, cmd).map(|_| ())
    }
    /// Cache hint: the byte offsets of three requests ahead, nearest first (no simulated state changes;
    /// `Ftl::prefetch` says what each is used for).
    fn prefetch(&self, _ahead: [Option<u64>; 3]) {}
    /// Device-specific gauges for the time series (name, value), always the same names in the same
    /// order for a device (e.g. the hybrid's SLC blocks and θ). Default: none.
    fn gauges(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }

    /// Whether the device schedules: the completion of a command may depend on commands submitted after
    /// it (a read that passes a queued program or suspends a running one), so it is known only as the
    /// device's clock advances. Such a device is driven with [`Device::enqueue`], [`Device::next_event`]
    /// and [`Device::advance`]; [`Device::submit`] still works (it runs the device until the command
    /// completes, so submission times must not go backwards). Default false: `submit` answers at once.
    fn queued(&self) -> bool {
        false
    }
    /// Accept `cmd` at `at` (not before the device's clock: advance it first). Its completion comes out
    /// of a later [`Device::advance`] with `tag`. Only for a [`Device::queued`] device.
    fn enqueue(&mut self, _at: Nanos, cmd: Command<'_>, _tag: Tag) -> Result<()> {
        Err(unsupported(self.kind(), &cmd))
    }
    /// When the next internal event happens (None: nothing in flight).
    fn next_event(&self) -> Option<Nanos> {
        None
    }
    /// Run the device's internal events up to and including `until`; append the commands completed
    /// meanwhile, in completion order.
    fn advance(&mut self, _until: Nanos, _done: &mut Vec<(Tag, Completion)>) -> Result<()> {
        Ok(())
    }

    fn read(&mut self, at: Nanos, offset: u64, len: u64) -> Result<Nanos> {
        Ok(self.submit(at, Command::read(offset, len))?.done)
    }
    fn write(&mut self, at: Nanos, offset: u64, len: u64) -> Result<Nanos> {
        Ok(self.submit(at, Command::write(offset, len))?.done)
    }
    fn trim(&mut self, at: Nanos, offset: u64, len: u64) -> Result<Nanos> {
        Ok(self.submit(at, Command::trim(offset, len))?.done)
    }
    fn flush(&mut self, at: Nanos) -> Result<Nanos> {
        Ok(self.submit(at, Command::Flush)?.done)
    }
}

/// The error a device answers to a command it does not implement.
pub fn unsupported(kind: DeviceKind, cmd: &Command<'_>) -> Error {
    Error::Unsupported(format!(
        "a {} device does not implement the {} command",
        kind.name(),
        cmd.name()
    ))
}
