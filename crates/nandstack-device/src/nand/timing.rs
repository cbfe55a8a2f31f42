//! NAND timing: per-mode tR / tPROG / tBERS, channel transfer rate, and busy-until timelines per die (or
//! per plane with multi-plane parallelism) and per channel.
//!
//! Model (computed directly — no event queue is needed because every operation is placed on the resources
//! it needs in request order): dies are first come, first served (busy-until); a channel keeps a calendar
//! of its reserved transfers, so a short transfer can use an idle gap before a transfer booked later in
//! time (a read that waits behind a long program on one die must not block the bus for the other dies).
//! * read: the die senses the page (tR), then the data crosses the channel (bytes ÷ rate); the die stays
//!   busy until its page register is drained. A copyback read (same-plane GC) needs no channel.
//! * host data: each 4 KiB unit crosses the channel into the die's cache register as it is written; the
//!   die array is not busy for that.
//! * program: the die is busy tPROG, starting when the die is free and its data has arrived.
//! * erase: the die is busy tBERS.

use nandstack_core::Nanos;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::calendar::Calendar;
use super::levels::{LevelTimes, PageLevels};
use super::{CellMode, Geometry};

/// Timing parameters. Unset times come from the cell mode's defaults (see `CellMode::default_timing`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimingConfig {
    /// Model time at all. Default true; false runs the FTL alone (no latencies, fastest).
    #[serde(default = "d_true")]
    pub enabled: bool,
    /// Page read time tR in µs. Default: the cell mode's (SLC 30, MLC 75, TLC 66, QLC 140).
    #[serde(default)]
    pub read_us: Option<f64>,
    /// Page program time tPROG in µs. Default: the cell mode's (SLC 160, MLC 750, TLC 730, QLC 3102).
    #[serde(default)]
    pub program_us: Option<f64>,
    /// Block erase time tBERS in µs. Default: the cell mode's (SLC 3000, MLC 3800, TLC 4800, QLC 3500).
    #[serde(default)]
    pub erase_us: Option<f64>,
    /// Channel transfer rate in MB/s (10^6 bytes per second). Default 800 (ONFI 4 / Toggle 3 class).
    #[serde(default = "d_channel")]
    pub channel_mb_per_s: f64,
    /// Planes of a die operate independently (ideal multi-plane). Default false: one array operation per
    /// die at a time.
    #[serde(default)]
    pub plane_parallelism: bool,
    /// Read and program time by page type (LSB, CSB, MSB, TSB) instead of one tR / tPROG. Default: none
    /// (every page takes tR / tPROG). See docs/model-timing.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_levels: Option<PageLevels>,
}
fn d_true() -> bool {
    true
}
fn d_channel() -> f64 {
    800.0
}
impl Default for TimingConfig {
    fn default() -> Self {
        TimingConfig {
            enabled: true,
            read_us: None,
            program_us: None,
            erase_us: None,
            channel_mb_per_s: d_channel(),
            plane_parallelism: false,
            page_levels: None,
        }
    }
}

impl TimingConfig {
    /// The DISS evaluation device's 3D NAND: tR = 4 µs, tPROG = 75 µs (Table 1 of the DISS paper); erase
    /// keeps the cell mode's default.
    pub fn diss() -> TimingConfig {
        TimingConfig {
            read_us: Some(4.0),
            program_us: Some(75.0),
            ..TimingConfig::default()
        }
    }

    pub fn validate(&self) -> nandstack_core::Result<()> {
        for (k, v) in [
            ("read_us", self.read_us),
            ("program_us", self.program_us),
            ("erase_us", self.erase_us),
        ] {
            if let Some(v) = v {
                if !(v.is_finite() && v > 0.0 && v < 1e7) {
                    return Err(nandstack_core::Error::config(
                        format!("device.timing.{k}"),
                        format!("is {v}: must be in (0, 1e7) µs"),
                    ));
                }
            }
        }
        let c = self.channel_mb_per_s;
        // Below 0.001 MB/s one page's transfer would take hours and the per-byte time leaves u64.
        if !(c.is_finite() && (1e-3..=1e6).contains(&c)) {
            return Err(nandstack_core::Error::config(
                "device.timing.channel_mb_per_s",
                format!("is {c}: must be in [0.001, 1e6]"),
            ));
        }
        Ok(())
    }

    /// `validate`, and the per-level times against the cell mode's page types.
    pub fn validate_for(&self, mode: CellMode) -> nandstack_core::Result<()> {
        self.validate()?;
        if let Some(l) = &self.page_levels {
            l.resolve(mode)?;
        }
        Ok(())
    }

    /// Resolved (tR, tPROG, tBERS) for a cell mode.
    pub fn resolve(&self, mode: CellMode) -> (Nanos, Nanos, Nanos) {
        let d = mode.default_timing();
        let us = |v: Option<f64>, def: Nanos| v.map_or(def, |x| Nanos((x * 1000.0).round() as u64));
        (
            us(self.read_us, d.read),
            us(self.program_us, d.program),
            us(self.erase_us, d.erase),
        )
    }
}

/// Busy-until timelines of the flash array's resources, and their accumulated busy time.
#[derive(Clone, Debug)]
pub struct Timelines {
    /// Busy-until per die (or per plane with plane parallelism), ns.
    array: Vec<u64>,
    /// Reserved transfers per channel; those that ended before the current command's arrival are
    /// forgotten.
    channel: Vec<Calendar>,
    /// No channel booking ends before this (a lower bound of the calendars' first ends): `advance`
    /// to an earlier time has nothing to forget and touches no calendar.
    next_forget: u64,
    planes_per_array: u32,
    planes_per_channel: u32,
    pub t_read: u64,
    pub t_prog: u64,
    pub t_erase: u64,
    /// Channel time per byte, in picoseconds (integer arithmetic, deterministic).
    ps_per_byte: u64,
    pub array_busy_ns: u64,
    pub channel_busy_ns: u64,
    /// Per array: until when it is busy with GC work.
    gc_until: Vec<u64>,
    /// Per-level read / program times (`page_levels`), if configured.
    levels: Option<LevelTimes>,
}

impl Timelines {
    pub fn new(geo: &Geometry, cfg: &TimingConfig) -> Timelines {
        let (r, p, e) = cfg.resolve(geo.cell_mode);
        let planes_per_array = if cfg.plane_parallelism {
            1
        } else {
            geo.planes_per_die
        };
        let planes_per_channel = geo.planes() / geo.channels;
        Timelines {
            array: vec![0; (geo.planes() / planes_per_array) as usize],
            channel: vec![Calendar::default(); geo.channels as usize],
            next_forget: u64::MAX,
            planes_per_array,
            planes_per_channel,
            t_read: r.0,
            t_prog: p.0,
            t_erase: e.0,
            ps_per_byte: (1e6 / cfg.channel_mb_per_s).round().max(1.0) as u64,
            array_busy_ns: 0,
            channel_busy_ns: 0,
            gc_until: vec![0; (geo.planes() / planes_per_array) as usize],
            levels: cfg
                .page_levels
                .as_ref()
                .map(|l| l.resolve(geo.cell_mode).expect("validated by validate_for")),
        }
    }

    /// Sensing time of page `page` of a block (its page type's with `page_levels`, else tR).
    #[inline]
    pub fn read_ns(&self, page: u32) -> u64 {
        match &self.levels {
            None => self.t_read,
            Some(l) => l.read_ns[l.level(page)],
        }
    }

    /// Program time of page `page` of a block (its page type's with `page_levels`, else tPROG).
    #[inline]
    pub fn program_ns(&self, page: u32) -> u64 {
        match &self.levels {
            None => self.t_prog,
            Some(l) => l.program_ns[l.level(page)],
        }
    }

    /// Channel time to move `bytes`.
    #[inline]
    pub fn transfer_ns(&self, bytes: u64) -> u64 {
        (bytes * self.ps_per_byte).div_ceil(1000)
    }

    #[inline]
    fn slots(&self, plane: u32) -> (usize, usize) {
        (
            (plane / self.planes_per_array) as usize,
            (plane / self.planes_per_channel) as usize,
        )
    }

    /// Page read ready at `ready`; `out_bytes` cross the channel afterwards (0 for copyback). Returns
    /// when the data is out (or sensed, for copyback).
    #[inline]
    pub fn read(&mut self, plane: u32, ready: u64, out_bytes: u64) -> u64 {
        self.read_at(plane, 0, ready, out_bytes)
    }

    /// [`Timelines::read`] of page `page` of its block (its sensing time by page type).
    #[inline]
    pub fn read_at(&mut self, plane: u32, page: u32, ready: u64, out_bytes: u64) -> u64 {
        let (a, c) = self.slots(plane);
        let start = ready.max(self.array[a]);
        let sensed = start + self.read_ns(page);
        let end = if out_bytes > 0 {
            let t = self.transfer_ns(out_bytes);
            self.reserve_channel(c, sensed, t) + t
        } else {
            sensed
        };
        self.array_busy_ns += end - start;
        self.array[a] = end;
        end
    }

    /// `bytes` of data into the die's cache register over the channel. Returns the arrival time.
    #[inline]
    pub fn transfer_in(&mut self, plane: u32, ready: u64, bytes: u64) -> u64 {
        let (_, c) = self.slots(plane);
        let t = self.transfer_ns(bytes);
        self.reserve_channel(c, ready, t) + t
    }

    /// Book `dur` ns on channel `c` in the first idle gap at or after `ready`; returns the start.
    fn reserve_channel(&mut self, c: usize, ready: u64, dur: u64) -> u64 {
        self.channel_busy_ns += dur;
        let start = self.channel[c].reserve(ready, dur);
        self.next_forget = self.next_forget.min(start + dur);
        start
    }

    /// Forget channel bookings that ended by `now`.
    pub fn advance(&mut self, now: u64) {
        if now < self.next_forget {
            return;
        }
        let mut next = u64::MAX;
        for cal in &mut self.channel {
            cal.advance(now);
            next = next.min(cal.first_end().unwrap_or(u64::MAX));
        }
        self.next_forget = next;
    }

    /// Page program whose data is in the register at `ready`. Returns the completion time.
    #[inline]
    pub fn program(&mut self, plane: u32, ready: u64) -> u64 {
        self.program_at(plane, 0, ready)
    }

    /// [`Timelines::program`] of page `page` of its block (its program time by page type).
    #[inline]
    pub fn program_at(&mut self, plane: u32, page: u32, ready: u64) -> u64 {
        let (a, _) = self.slots(plane);
        let start = ready.max(self.array[a]);
        let t = self.program_ns(page);
        self.array[a] = start + t;
        self.array_busy_ns += t;
        start + t
    }

    /// Block erase. Returns the completion time.
    #[inline]
    pub fn erase(&mut self, plane: u32, ready: u64) -> u64 {
        let (a, _) = self.slots(plane);
        let start = ready.max(self.array[a]);
        self.array[a] = start + self.t_erase;
        self.array_busy_ns += self.t_erase;
        start + self.t_erase
    }

    /// Note that the array of `plane` does GC work until `until`.
    pub fn mark_gc(&mut self, plane: u32, until: u64) {
        let a = self.slots(plane).0;
        self.gc_until[a] = self.gc_until[a].max(until);
    }

    /// Whether the array of `plane` is busy with GC at `now`.
    pub fn in_gc(&self, plane: u32, now: u64) -> bool {
        self.gc_until[self.slots(plane).0] > now
    }

    /// When the array of `plane` is next free.
    pub fn array_free_at(&self, plane: u32) -> u64 {
        self.array[self.slots(plane).0]
    }

    /// Latest busy-until over all resources (the device is idle after this).
    pub fn all_idle_at(&self) -> u64 {
        let chan = self.channel.iter().filter_map(Calendar::last_end);
        self.array.iter().copied().chain(chan).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tl(plane_parallelism: bool) -> Timelines {
        let geo = Geometry {
            channels: 2,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 2,
            page_size_bytes: 16384,
            cell_mode: CellMode::Tlc,
            ..Geometry::default()
        };
        Timelines::new(
            &geo,
            &TimingConfig {
                plane_parallelism,
                ..TimingConfig::default()
            },
        )
    }

    #[test]
    fn uncontended_latencies_are_the_closed_form() {
        let mut t = tl(false);
        // 4 KiB at 800 MB/s = 5.12 µs.
        assert_eq!(t.transfer_ns(4096), 5120);
        assert_eq!(t.read(0, 1000, 4096), 1000 + 66_000 + 5120);
        assert_eq!(t.program(2, 0), 730_000); // plane 2 is on channel 1's die: independent
        assert_eq!(t.erase(3, 730_000), 730_000 + 4_800_000);
    }

    #[test]
    fn contention_queues_on_the_die_and_the_channel() {
        let mut t = tl(false);
        let a = t.program(0, 0);
        // Plane 1 shares plane 0's die: waits for the program.
        assert_eq!(t.read(1, 10, 0), a + 66_000);
        // With plane parallelism it would not.
        let mut p = tl(true);
        p.program(0, 0);
        assert_eq!(p.read(1, 10, 0), 10 + 66_000);
        // Two transfers on one channel serialize; on different channels they overlap.
        let mut t = tl(false);
        assert_eq!(t.transfer_in(0, 0, 4096), 5120);
        assert_eq!(t.transfer_in(1, 0, 4096), 10240);
        assert_eq!(t.transfer_in(2, 0, 4096), 5120);
        assert_eq!(t.all_idle_at(), 10240);
    }

    /// The channel calendar (pruned at each `advance`, ended bookings found by binary search or skipped
    /// when the first has not ended) against a twin that never prunes and books by a plain scan of every
    /// booking so far, over seeded random transfers (each ready at or after the last `advance`, as the
    /// schedulers issue them).
    #[test]
    fn channel_calendar_matches_an_unpruned_first_fit() {
        for seed in [1u64, 7, 42, 1234] {
            let mut t = tl(false);
            let mut all: Vec<Vec<(u64, u64)>> = vec![Vec::new(); 2];
            let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut now = 0u64;
            for step in 0..5_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if x % 8 == 0 {
                    now += x >> 50; // up to 16 µs
                    t.advance(now);
                }
                let plane = ((x >> 8) % 4) as u32; // planes 0, 1 on channel 0; 2, 3 on channel 1
                let ready = now + (x >> 20) % 60_000;
                let bytes = 1024 * (1 + (x >> 40) % 16);
                let got = t.transfer_in(plane, ready, bytes);
                // The twin: the earliest start at or after `ready` that overlaps no booking.
                let dur = t.transfer_ns(bytes);
                let cal = &mut all[(plane / 2) as usize];
                let mut start = ready;
                while let Some(&(_, e)) = cal.iter().find(|&&(s, e)| s < start + dur && start < e) {
                    start = e;
                }
                cal.push((start, start + dur));
                assert_eq!(got, start + dur, "seed {seed}, step {step}");
            }
        }
    }

    #[test]
    fn a_late_transfer_does_not_block_the_channel_for_idle_dies() {
        let mut t = tl(false);
        // The die of planes 0/1 (channel 0) programs until 730 µs; a read there senses after it and books
        // channel 0 from 796 µs.
        t.program(0, 0);
        let r = t.read(0, 0, 4096);
        assert_eq!(r, 730_000 + 66_000 + 5120);
        // Another transfer on channel 0 ready at 10 µs uses the idle gap before the read's data.
        assert_eq!(t.transfer_in(1, 10_000, 4096), 10_000 + 5120);
        // One that would overlap the booked slot goes after it.
        assert_eq!(t.transfer_in(1, 795_000, 4096), r + 5120);
        t.advance(2_000_000);
        assert_eq!(t.transfer_in(1, 2_000_000, 4096), 2_000_000 + 5120);
    }

    #[test]
    fn diss_and_overrides_resolve() {
        let (r, p, e) = TimingConfig::diss().resolve(CellMode::Tlc);
        assert_eq!((r.0, p.0, e.0), (4_000, 75_000, 4_800_000));
        let bad = TimingConfig {
            read_us: Some(-1.0),
            ..TimingConfig::default()
        };
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("device.timing.read_us"));
    }

    #[test]
    fn channel_rate_outside_its_range_is_named() {
        // 1e-300 MB/s once passed "> 0" and overflowed the per-byte time (found by config_fuzz).
        for c in [1e-300, 0.0, -1.0, 2e6, f64::NAN] {
            let bad = TimingConfig {
                channel_mb_per_s: c,
                ..TimingConfig::default()
            };
            let e = bad.validate().unwrap_err().to_string();
            assert!(
                e.contains("device.timing.channel_mb_per_s") && e.contains("[0.001, 1e6]"),
                "{e}"
            );
        }
        for c in [1e-3, 1e6] {
            let ok = TimingConfig {
                channel_mb_per_s: c,
                ..TimingConfig::default()
            };
            assert!(ok.validate().is_ok(), "{c}");
        }
    }
}
