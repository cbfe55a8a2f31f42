//! ZNSwap's zone table (`struct swap_zone` per zone, the swap-zone array, the free-zone count): what
//! each zone holds, which swap-zone writes it, the free pool, the GC's emergency zone.
//!
//! A zone's life: free → open (the current zone of a swap-zone, or the GC's zone) → full → being
//! collected (victim) or, when every slot it holds is invalid, waiting for its reset → free again when
//! the reset is issued (usable once the reset completes: `ready_ns`). Zone 0 starts as the emergency
//! zone: the GC's destination when no zone is free; the next zone reset replenishes it.

use nandstack_core::Nanos;

/// What a zone is used for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ZoneUse {
    /// Empty, in the free pool.
    Free,
    /// Empty, kept for the GC when the free pool runs dry.
    Emergency,
    /// Being appended to (a swap-zone's current zone or the GC's zone).
    Open,
    /// Written to its capacity.
    Full,
    /// Full and being collected by the GC.
    Victim,
    /// Full and every slot invalid: reset at the GC thread's next wake-up, no copy.
    ToReset,
}

/// One zone.
#[derive(Clone, Debug)]
pub struct Zone {
    pub state: ZoneUse,
    /// Slots appended since the last reset (its write pointer, in slots).
    pub written: u32,
    /// Appended slots freed since (garbage).
    pub invalid: u32,
    /// The swap-zone whose data it holds (`NO_STREAM` when empty).
    pub stream: u32,
    /// When its last reset completes (a free zone is writable from then), ns.
    pub ready_ns: Nanos,
}

pub const NO_STREAM: u32 = u32::MAX;

/// Every zone ZNSwap uses, the swap-zones' current zones and the GC's zone.
#[derive(Clone, Debug)]
pub struct ZoneTable {
    pub zones: Vec<Zone>,
    /// Slots per zone.
    pub cap: u32,
    /// Zones in the free pool.
    pub free: u32,
    /// Fewest free zones seen.
    pub min_free: u32,
    pub emergency: Option<u32>,
    /// The current zone of each swap-zone.
    pub streams: Vec<Option<u32>>,
    /// The zone the GC writes to when the victim's swap-zone has no room.
    pub gc_zone: Option<u32>,
    /// Zones waiting for their reset (every slot invalid).
    pub to_reset: Vec<u32>,
    /// Where the round-robin search for a free zone continues (`last_alloced_zone`).
    last: u32,
    /// Zones taken from the free pool, by swap-outs and by the GC.
    pub taken: u64,
    pub emergency_uses: u64,
}

impl ZoneTable {
    /// `zones` zones of `cap` slots, `streams` swap-zones; zone 0 is the emergency zone.
    pub fn new(zones: u32, cap: u32, streams: u32) -> ZoneTable {
        let mut z = vec![
            Zone {
                state: ZoneUse::Free,
                written: 0,
                invalid: 0,
                stream: NO_STREAM,
                ready_ns: Nanos::ZERO,
            };
            zones as usize
        ];
        z[0].state = ZoneUse::Emergency;
        ZoneTable {
            zones: z,
            cap,
            free: zones - 1,
            min_free: zones - 1,
            emergency: Some(0),
            streams: vec![None; streams as usize],
            gc_zone: None,
            to_reset: Vec::new(),
            last: 0,
            taken: 0,
            emergency_uses: 0,
        }
    }

    /// Slots left in zone `z`.
    #[inline]
    pub fn room(&self, z: u32) -> u32 {
        self.cap - self.zones[z as usize].written
    }

    /// Slots left in swap-zone `s`'s current zone (0 without one).
    pub fn stream_room(&self, s: u32) -> u32 {
        self.streams[s as usize].map_or(0, |z| self.room(z))
    }

    /// Take a free zone for `stream` (round robin from the last one taken, as `allocate_free_zone`).
    pub fn take_free(&mut self, stream: u32) -> Option<u32> {
        if self.free == 0 {
            return None;
        }
        let n = self.zones.len() as u32;
        for i in 1..=n {
            let z = (self.last + i) % n;
            if self.zones[z as usize].state == ZoneUse::Free {
                self.last = z;
                self.free -= 1;
                self.min_free = self.min_free.min(self.free);
                self.taken += 1;
                self.open(z, stream);
                return Some(z);
            }
        }
        unreachable!("free count says a zone is free")
    }

    fn open(&mut self, z: u32, stream: u32) {
        let zone = &mut self.zones[z as usize];
        debug_assert_eq!(zone.written, 0);
        zone.state = ZoneUse::Open;
        zone.stream = stream;
    }

    /// Swap-zone `s`'s current zone with room, taking a free zone when it has none.
    pub fn stream_zone(&mut self, s: u32) -> Option<u32> {
        if let Some(z) = self.streams[s as usize] {
            if self.room(z) > 0 {
                return Some(z);
            }
        }
        let z = self.take_free(s)?;
        self.streams[s as usize] = Some(z);
        Some(z)
    }

    /// The GC's destination for data of swap-zone `s`: the swap-zone's current zone if it has room
    /// (without opening a new one), else the GC zone, else a free zone, else the emergency zone.
    pub fn gc_destination(&mut self, s: u32) -> Option<u32> {
        if self.stream_room(s) > 0 {
            return self.streams[s as usize];
        }
        if let Some(z) = self.gc_zone {
            if self.room(z) > 0 {
                return Some(z);
            }
        }
        let z = match self.take_free(s) {
            Some(z) => z,
            None => {
                let z = self.emergency.take()?;
                self.emergency_uses += 1;
                self.open(z, s);
                z
            }
        };
        self.gc_zone = Some(z);
        Some(z)
    }

    /// `n` slots were appended to zone `z`; a zone that reaches its capacity is full and leaves its
    /// swap-zone (or the GC).
    pub fn appended(&mut self, z: u32, n: u32) {
        let zone = &mut self.zones[z as usize];
        debug_assert_eq!(zone.state, ZoneUse::Open);
        zone.written += n;
        debug_assert!(zone.written <= self.cap);
        if zone.written == self.cap {
            zone.state = ZoneUse::Full;
            if zone.invalid == self.cap {
                zone.state = ZoneUse::ToReset;
                self.to_reset.push(z);
            }
            if zone.stream != NO_STREAM && self.streams[zone.stream as usize] == Some(z) {
                self.streams[zone.stream as usize] = None;
            }
            if self.gc_zone == Some(z) {
                self.gc_zone = None;
            }
        }
    }

    /// A slot of zone `z` became garbage. A full zone whose every slot is garbage waits for its reset.
    pub fn invalidate(&mut self, z: u32) {
        let zone = &mut self.zones[z as usize];
        zone.invalid += 1;
        debug_assert!(zone.invalid <= zone.written);
        if zone.state == ZoneUse::Full && zone.invalid == self.cap {
            zone.state = ZoneUse::ToReset;
            self.to_reset.push(z);
        }
    }

    /// Zone `z` was reset (the reset completes at `ready_ns`): it replenishes the emergency zone if the
    /// GC used it, else it joins the free pool.
    pub fn reset(&mut self, z: u32, ready_ns: Nanos) {
        let zone = &mut self.zones[z as usize];
        zone.written = 0;
        zone.invalid = 0;
        zone.stream = NO_STREAM;
        zone.ready_ns = ready_ns;
        if self.emergency.is_none() {
            zone.state = ZoneUse::Emergency;
            self.emergency = Some(z);
        } else {
            zone.state = ZoneUse::Free;
            self.free += 1;
        }
    }

    /// Consistency of the table itself (counts, swap-zone links); an error names the first mismatch.
    pub fn check(&self) -> Result<(), String> {
        let free = self
            .zones
            .iter()
            .filter(|z| z.state == ZoneUse::Free)
            .count() as u32;
        if free != self.free {
            return Err(format!(
                "{} free zones but the count says {}",
                free, self.free
            ));
        }
        for (i, z) in self.zones.iter().enumerate() {
            let empty = matches!(z.state, ZoneUse::Free | ZoneUse::Emergency);
            if empty && (z.written != 0 || z.invalid != 0) {
                return Err(format!("zone {i}: empty but {} slots written", z.written));
            }
            if z.invalid > z.written || z.written > self.cap {
                return Err(format!(
                    "zone {i}: {} invalid of {} written, capacity {}",
                    z.invalid, z.written, self.cap
                ));
            }
            let full = matches!(z.state, ZoneUse::Full | ZoneUse::Victim | ZoneUse::ToReset);
            if full != (z.written == self.cap) {
                return Err(format!(
                    "zone {i}: {:?} with {} slots written",
                    z.state, z.written
                ));
            }
            if (z.state == ZoneUse::Emergency) != (self.emergency == Some(i as u32)) {
                return Err(format!("zone {i}: emergency zone mismatch"));
            }
        }
        for (s, z) in self.streams.iter().enumerate() {
            if let Some(z) = z {
                let zone = &self.zones[*z as usize];
                if zone.state != ZoneUse::Open || zone.stream != s as u32 {
                    return Err(format!("swap-zone {s}: its zone {z} is {:?}", zone.state));
                }
            }
        }
        if let Some(z) = self.gc_zone {
            if self.zones[z as usize].state != ZoneUse::Open {
                return Err(format!("the GC zone {z} is not open"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zones_go_round_from_free_to_full_to_free() {
        let mut t = ZoneTable::new(4, 10, 2);
        assert_eq!((t.free, t.emergency), (3, Some(0)));
        // Round robin after the last one taken.
        assert_eq!(t.stream_zone(0), Some(1));
        assert_eq!(t.stream_zone(1), Some(2));
        assert_eq!(t.stream_zone(0), Some(1)); // still has room
        t.appended(1, 10);
        assert_eq!(t.zones[1].state, ZoneUse::Full);
        assert_eq!(t.streams[0], None);
        assert_eq!(t.stream_zone(0), Some(3));
        assert_eq!(t.free, 0);
        assert_eq!(t.take_free(0), None);
        t.check().unwrap();
        // Garbage: a full zone whose slots are all invalid waits for its reset.
        for _ in 0..9 {
            t.invalidate(1);
        }
        assert!(t.to_reset.is_empty());
        t.invalidate(1);
        assert_eq!(t.to_reset, [1]);
        assert_eq!(t.zones[1].state, ZoneUse::ToReset);
        t.reset(1, Nanos(500));
        assert_eq!((t.free, t.zones[1].ready_ns), (1, Nanos(500)));
        t.check().unwrap();
    }

    #[test]
    fn the_gc_falls_back_to_the_emergency_zone_which_the_next_reset_replenishes() {
        let mut t = ZoneTable::new(3, 4, 1);
        assert_eq!(t.stream_zone(0), Some(1));
        t.appended(1, 2);
        // The GC writes into the swap-zone's zone while it has room…
        assert_eq!(t.gc_destination(0), Some(1));
        t.appended(1, 2);
        // …then into a free zone of its own…
        assert_eq!(t.gc_destination(0), Some(2));
        t.appended(2, 4);
        // …then, nothing free, into the emergency zone.
        assert_eq!(t.gc_destination(0), Some(0));
        assert_eq!((t.emergency, t.emergency_uses), (None, 1));
        t.appended(0, 4);
        assert_eq!(t.gc_destination(0), None);
        // The next reset goes to the emergency zone, the one after to the free pool.
        for _ in 0..4 {
            t.invalidate(1);
        }
        let z = t.to_reset.pop().unwrap();
        t.reset(z, Nanos(9));
        assert_eq!((t.emergency, t.free), (Some(1), 0));
        for _ in 0..4 {
            t.invalidate(2);
        }
        let z = t.to_reset.pop().unwrap();
        t.reset(z, Nanos(9));
        assert_eq!(t.free, 1);
        t.check().unwrap();
    }
}
