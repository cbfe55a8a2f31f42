//! The zone state machine and the open/active resource accounting (no flash, no time).
//!
//! Every transition and error is listed in the module documentation of [`super`] and in
//! docs/model-zoned.md. Methods check everything before they change anything, so a command that fails
//! changes no zone.

use nandstack_core::{Error, Result};
use serde::Serialize;

use crate::device::ZoneState;

/// One zone's state, write pointer and buffered data.
#[derive(Clone, Debug)]
pub(crate) struct Zone {
    pub state: ZoneState,
    /// 4 KiB units written since the last reset: the write pointer, relative to the zone start.
    pub written: u32,
    /// Zone pages programmed in place (host data and padding), counted from the zone start.
    pub programmed: u32,
    /// When the last unit of the buffered tail page reached its die's register (ns).
    pub tail_ready_ns: u64,
    /// Units of the buffered tail a flush has already staged.
    pub staged_units: u32,
    /// Recency stamp of the last write or open (the implicit-close choice).
    pub touched: u64,
    /// Per-unit metadata, one word per written unit.
    pub meta: Vec<u64>,
    /// Verification mode: the version of each written unit.
    pub versions: Vec<u64>,
}

impl Zone {
    fn new() -> Zone {
        Zone {
            state: ZoneState::Empty,
            written: 0,
            programmed: 0,
            tail_ready_ns: 0,
            staged_units: 0,
            touched: 0,
            meta: Vec::new(),
            versions: Vec::new(),
        }
    }

    pub fn is_open(&self) -> bool {
        matches!(
            self.state,
            ZoneState::ImplicitlyOpen | ZoneState::ExplicitlyOpen
        )
    }
    pub fn is_active(&self) -> bool {
        self.is_open() || self.state == ZoneState::Closed
    }
}

/// Counters of the state machine.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StateCounters {
    /// Empty or closed zones opened by a write or append.
    pub implicit_opens: u64,
    /// Zone Open commands that changed a zone's state.
    pub explicit_opens: u64,
    /// Zone Close commands that changed a zone's state.
    pub closes: u64,
    /// Implicitly open zones the device closed to make room for another open zone.
    pub implicit_closes: u64,
    /// Zone Finish commands that changed a zone's state.
    pub finishes: u64,
    /// Zones that became full because writes reached the capacity.
    pub filled: u64,
    /// Zone Reset commands that changed a zone's state.
    pub resets: u64,
    /// Most zones open at once.
    pub open_high_water: u32,
    /// Most zones active at once.
    pub active_high_water: u32,
}

/// All zones plus the open/active counts and limits.
#[derive(Clone, Debug)]
pub(crate) struct ZoneTable {
    pub zones: Vec<Zone>,
    max_open: Option<u32>,
    max_active: Option<u32>,
    pub open: u32,
    pub active: u32,
    clock: u64,
    pub counters: StateCounters,
}

fn protocol(z: u32, what: &str, detail: String) -> Error {
    Error::Protocol(format!("zone {z}: {what}{detail}"))
}

fn invalid(z: u32, cmd: &str, from: ZoneState) -> Error {
    protocol(
        z,
        "invalid zone state transition",
        format!(" ({cmd} of a zone in state {from:?})"),
    )
}

impl ZoneTable {
    pub fn new(zones: u32, max_open: Option<u32>, max_active: Option<u32>) -> ZoneTable {
        ZoneTable {
            zones: vec![Zone::new(); zones as usize],
            max_open,
            max_active,
            open: 0,
            active: 0,
            clock: 0,
            counters: StateCounters::default(),
        }
    }

    pub fn limits(&self) -> (Option<u32>, Option<u32>) {
        (self.max_open, self.max_active)
    }

    fn touch(&mut self, z: u32) {
        self.clock += 1;
        self.zones[z as usize].touched = self.clock;
    }

    fn bump(&mut self, open: i32, active: i32) {
        self.open = self.open.wrapping_add_signed(open);
        self.active = self.active.wrapping_add_signed(active);
        let c = &mut self.counters;
        c.open_high_water = c.open_high_water.max(self.open);
        c.active_high_water = c.active_high_water.max(self.active);
    }

    /// Move zone `z` to `to` (full, empty, read-only or offline), releasing the open/active resources its
    /// current state holds.
    fn release(&mut self, z: u32, to: ZoneState) {
        let zone = &mut self.zones[z as usize];
        let (open, active) = (-i32::from(zone.is_open()), -i32::from(zone.is_active()));
        zone.state = to;
        self.bump(open, active);
    }

    /// Errors of a write or append to a zone that cannot take data (before any position check).
    pub fn check_writable(&self, z: u32) -> Result<()> {
        match self.zones[z as usize].state {
            ZoneState::Full => Err(protocol(z, "zone is full", String::new())),
            ZoneState::ReadOnly => Err(protocol(z, "zone is read-only", String::new())),
            ZoneState::Offline => Err(protocol(z, "zone is offline", String::new())),
            _ => Ok(()),
        }
    }

    /// Whether opening zone `z` (empty: needs an active resource too) fits the limits; if the open limit
    /// is reached, which implicitly open zone the device would close (least recently written) — or the
    /// error. Changes nothing.
    fn room_for(&self, z: u32, needs_active: bool) -> Result<Option<u32>> {
        if needs_active && self.max_active.is_some_and(|m| self.active >= m) {
            return Err(protocol(
                z,
                "too many active zones",
                format!(
                    " ({} of {} active)",
                    self.active,
                    self.max_active.unwrap_or(0)
                ),
            ));
        }
        let Some(m) = self.max_open.filter(|&m| self.open >= m) else {
            return Ok(None);
        };
        let victim = (0..self.zones.len() as u32)
            .filter(|&v| v != z && self.zones[v as usize].state == ZoneState::ImplicitlyOpen)
            .min_by_key(|&v| self.zones[v as usize].touched);
        match victim {
            Some(v) => Ok(Some(v)),
            None => Err(protocol(
                z,
                "too many open zones",
                format!(" ({} of {m} open, none implicitly)", self.open),
            )),
        }
    }

    /// Close an implicitly open zone to make room (it holds data, so it becomes closed and stays active).
    fn implicit_close(&mut self, v: u32) {
        debug_assert!(self.zones[v as usize].written > 0);
        self.zones[v as usize].state = ZoneState::Closed;
        self.bump(-1, 0);
        self.counters.implicit_closes += 1;
    }

    /// Make zone `z` writable for a write or append that has passed every other check: an empty or
    /// closed zone opens implicitly (possibly closing another implicitly open zone). Returns the zone the
    /// device closed, if any.
    pub fn open_for_write(&mut self, z: u32) -> Result<Option<u32>> {
        self.check_writable(z)?;
        let from = self.zones[z as usize].state;
        let closed = match from {
            ZoneState::Empty | ZoneState::Closed => {
                let needs_active = from == ZoneState::Empty;
                let victim = self.room_for(z, needs_active)?;
                if let Some(v) = victim {
                    self.implicit_close(v);
                }
                self.zones[z as usize].state = ZoneState::ImplicitlyOpen;
                self.bump(1, i32::from(needs_active));
                self.counters.implicit_opens += 1;
                victim
            }
            _ => None,
        };
        self.touch(z);
        Ok(closed)
    }

    /// The write pointer reached the capacity: the zone becomes full and releases its resources.
    pub fn mark_full(&mut self, z: u32) {
        debug_assert!(self.zones[z as usize].is_open());
        self.release(z, ZoneState::Full);
        self.counters.filled += 1;
    }

    /// Zone Open. Returns the zone the device closed to make room, if any.
    pub fn open(&mut self, z: u32) -> Result<Option<u32>> {
        let from = self.zones[z as usize].state;
        let closed = match from {
            ZoneState::ExplicitlyOpen => return Ok(None),
            ZoneState::ImplicitlyOpen => None,
            ZoneState::Empty | ZoneState::Closed => {
                let needs_active = from == ZoneState::Empty;
                let victim = self.room_for(z, needs_active)?;
                if let Some(v) = victim {
                    self.implicit_close(v);
                }
                self.bump(1, i32::from(needs_active));
                victim
            }
            _ => return Err(invalid(z, "open", from)),
        };
        self.zones[z as usize].state = ZoneState::ExplicitlyOpen;
        self.counters.explicit_opens += 1;
        self.touch(z);
        Ok(closed)
    }

    /// Zone Close: an open zone becomes closed, or empty if nothing was written to it.
    pub fn close(&mut self, z: u32) -> Result<()> {
        let zone = &mut self.zones[z as usize];
        match zone.state {
            ZoneState::Closed => return Ok(()),
            ZoneState::ImplicitlyOpen | ZoneState::ExplicitlyOpen => {}
            from => return Err(invalid(z, "close", from)),
        }
        if zone.written == 0 {
            zone.state = ZoneState::Empty;
            self.bump(-1, -1);
        } else {
            zone.state = ZoneState::Closed;
            self.bump(-1, 0);
        }
        self.counters.closes += 1;
        Ok(())
    }

    /// Zone Finish: empty, open or closed → full. Returns whether the state changed (a full zone is left
    /// as it is).
    pub fn finish(&mut self, z: u32) -> Result<bool> {
        match self.zones[z as usize].state {
            ZoneState::Full => return Ok(false),
            ZoneState::ReadOnly | ZoneState::Offline => {
                return Err(invalid(z, "finish", self.zones[z as usize].state))
            }
            _ => {}
        }
        self.release(z, ZoneState::Full);
        self.counters.finishes += 1;
        Ok(true)
    }

    /// Zone Reset: any zone holding data → empty (its data is gone). Returns whether the state changed
    /// (an empty zone is left as it is).
    pub fn reset(&mut self, z: u32) -> Result<bool> {
        match self.zones[z as usize].state {
            ZoneState::Empty => return Ok(false),
            ZoneState::ReadOnly | ZoneState::Offline => {
                return Err(invalid(z, "reset", self.zones[z as usize].state))
            }
            _ => {}
        }
        self.release(z, ZoneState::Empty);
        self.counters.resets += 1;
        Ok(true)
    }

    /// A controller-side condition change (media wear-out, failure): any zone may become read-only or
    /// offline, a read-only zone offline. The zone's open/active resources are released.
    pub fn set_condition(&mut self, z: u32, to: ZoneState) -> Result<()> {
        let zone = &self.zones[z as usize];
        let ok = match to {
            ZoneState::ReadOnly => !matches!(zone.state, ZoneState::ReadOnly | ZoneState::Offline),
            ZoneState::Offline => zone.state != ZoneState::Offline,
            _ => false,
        };
        if !ok {
            return Err(invalid(z, "condition change", zone.state));
        }
        self.release(z, to);
        Ok(())
    }

    /// Counts of zones by state, in the order of [`ZoneState`].
    pub fn by_state(&self) -> [u32; 7] {
        let mut n = [0u32; 7];
        for z in &self.zones {
            n[state_index(z.state)] += 1;
        }
        n
    }

    /// Open and active counts agree with the states; limits hold.
    pub fn check_counts(&self) -> Result<()> {
        let open = self.zones.iter().filter(|z| z.is_open()).count() as u32;
        let active = self.zones.iter().filter(|z| z.is_active()).count() as u32;
        if (open, active) != (self.open, self.active) {
            return Err(Error::Invariant(format!(
                "zone counts say {} open / {} active, the states {open} / {active}",
                self.open, self.active
            )));
        }
        if self.max_open.is_some_and(|m| open > m) || self.max_active.is_some_and(|m| active > m) {
            return Err(Error::Invariant(format!(
                "{open} open / {active} active zones exceed the limits {:?} / {:?}",
                self.max_open, self.max_active
            )));
        }
        Ok(())
    }
}

/// Position of a state in [`ZoneTable::by_state`] and [`STATE_NAMES`].
pub(crate) fn state_index(s: ZoneState) -> usize {
    match s {
        ZoneState::Empty => 0,
        ZoneState::ImplicitlyOpen => 1,
        ZoneState::ExplicitlyOpen => 2,
        ZoneState::Closed => 3,
        ZoneState::Full => 4,
        ZoneState::ReadOnly => 5,
        ZoneState::Offline => 6,
    }
}

pub(crate) const STATE_NAMES: [&str; 7] = [
    "empty",
    "implicitly_open",
    "explicitly_open",
    "closed",
    "full",
    "read_only",
    "offline",
];
