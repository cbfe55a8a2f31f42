//! A channel's calendar of booked transfers: a transfer takes the first idle gap at or after it is
//! ready, and bookings that ended by the last [`Calendar::advance`] are forgotten (a later transfer
//! ready before that time may then use their slot).
//!
//! Where a transfer goes depends only on the time booked, not on how it splits into bookings; what
//! `advance` forgets does (whole bookings go). So the calendar keeps the bookings for forgetting, and
//! the busy time as maximal intervals (back-to-back bookings joined) for placing: a burst of transfers
//! is one interval to pass, not one each.

/// Ended bookings and intervals are skipped by a head index and dropped in one move once they are
/// most of the vector (at least `COMPACT_AT`): `advance` does no per-call shifting.
const COMPACT_AT: usize = 32;

#[derive(Clone, Debug, Default)]
pub(super) struct Calendar {
    /// Each booking (start, end) from `b0` on, sorted, non-overlapping (back to back allowed); those
    /// before `b0` have been forgotten.
    bookings: Vec<(u64, u64)>,
    b0: usize,
    /// Their union as maximal intervals from `u0` on: sorted, non-overlapping and not touching.
    busy: Vec<(u64, u64)>,
    u0: usize,
}

impl Calendar {
    /// Book `dur` ns (> 0: every transfer moves bytes) in the first idle gap at or after `ready`;
    /// returns the start.
    pub(super) fn reserve(&mut self, ready: u64, dur: u64) -> u64 {
        debug_assert!(dur > 0, "an empty channel transfer");
        let busy = &mut self.busy;
        let u0 = self.u0;
        // The first interval that ends after `ready` (usually the first, or none: nothing booked then).
        let mut i = match busy.get(u0) {
            Some(&(_, e)) if e > ready => u0,
            _ => u0 + busy[u0..].partition_point(|&(_, e)| e <= ready),
        };
        let mut start = ready;
        while i < busy.len() {
            let (s, e) = busy[i];
            if start + dur <= s {
                break;
            }
            start = start.max(e);
            i += 1;
        }
        // Between intervals i - 1 (ended by `start`) and i (starting at `start + dur` or later).
        let end = start + dur;
        match (
            i > u0 && busy[i - 1].1 == start,
            i < busy.len() && busy[i].0 == end,
        ) {
            (true, true) => {
                busy[i - 1].1 = busy[i].1;
                busy.remove(i);
            }
            (true, false) => busy[i - 1].1 = end,
            (false, true) => busy[i].0 = start,
            (false, false) => busy.insert(i, (start, end)),
        }
        // Bookings are mostly made in time order: most go at the back.
        match self.bookings.last() {
            Some(&(_, e)) if e > start => {
                let b0 = self.b0;
                let at = b0 + self.bookings[b0..].partition_point(|&(s, _)| s < start);
                self.bookings.insert(at, (start, end));
            }
            _ => self.bookings.push((start, end)),
        }
        start
    }

    /// Forget the bookings that ended by `now`.
    pub(super) fn advance(&mut self, now: u64) {
        // Bookings end in order (sorted, non-overlapping): the ended ones are a prefix, often empty.
        if self.bookings.get(self.b0).is_none_or(|&(_, e)| e > now) {
            return;
        }
        forget_ended(&mut self.bookings, &mut self.b0, now);
        forget_ended(&mut self.busy, &mut self.u0, now);
        // The first interval left holds the first booking left, and runs on unbroken from its start.
        if let (Some(first), Some(&(s, _))) =
            (self.busy.get_mut(self.u0), self.bookings.get(self.b0))
        {
            debug_assert!(first.0 <= s && s < first.1);
            first.0 = s;
        }
    }

    /// When the first booking ends (None: nothing booked): `advance` to an earlier time forgets
    /// nothing.
    pub(super) fn first_end(&self) -> Option<u64> {
        self.bookings.get(self.b0).map(|&(_, e)| e)
    }

    /// When the last booking ends (None: nothing booked).
    pub(super) fn last_end(&self) -> Option<u64> {
        self.busy[self.u0..].last().map(|&(_, e)| e)
    }

    #[cfg(test)]
    pub(super) fn intervals(&self) -> &[(u64, u64)] {
        &self.busy[self.u0..]
    }

    #[cfg(test)]
    fn live_bookings(&self) -> &[(u64, u64)] {
        &self.bookings[self.b0..]
    }
}

/// Move `head` past the live entries of `v` (sorted by end) that ended by `now` — a few at a time, a
/// request's worth of transfers, so counted from the front — and drop the forgotten prefix once it is at
/// least `COMPACT_AT` entries and at least half of `v` (each entry is moved O(1) times on average).
#[inline]
fn forget_ended(v: &mut Vec<(u64, u64)>, head: &mut usize, now: u64) {
    *head += v[*head..].iter().take_while(|&&(_, e)| e <= now).count();
    if *head >= COMPACT_AT && 2 * *head >= v.len() {
        v.drain(..*head);
        *head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calendar as first written: every booking its own interval, scanned one by one, forgotten
    /// whole at `advance`.
    #[derive(Default)]
    struct Plain(Vec<(u64, u64)>);

    impl Plain {
        fn reserve(&mut self, ready: u64, dur: u64) -> u64 {
            let i0 = self.0.partition_point(|&(_, e)| e <= ready);
            let mut start = ready;
            let mut i = i0;
            while i < self.0.len() {
                let (s, e) = self.0[i];
                if start + dur <= s {
                    break;
                }
                start = start.max(e);
                i += 1;
            }
            self.0.insert(i, (start, start + dur));
            start
        }
        fn advance(&mut self, now: u64) {
            let k = self.0.partition_point(|&(_, e)| e <= now);
            self.0.drain(..k);
        }
    }

    /// Seeded random transfers, in bursts and ready before the last `advance` as well as after it
    /// (the host's threads submit at their own clocks), against the plain calendar: the same starts,
    /// and the intervals are the bookings' union.
    #[test]
    fn matches_the_plain_calendar() {
        for seed in [1u64, 7, 42, 1234] {
            let (mut cal, mut plain) = (Calendar::default(), Plain::default());
            let mut rng = nandstack_core::Rng::new(seed);
            let mut now = 100_000u64;
            for step in 0..10_000 {
                let x = rng.next_u64();
                if x.is_multiple_of(8) {
                    now += x >> 51; // up to 8 µs
                    cal.advance(now);
                    plain.advance(now);
                }
                // From 40 µs before `now` to 60 µs after; a quarter of them at `now` (bursts).
                let ready = if x % 4 == 1 {
                    now
                } else {
                    now - 40_000 + (x >> 20) % 100_000
                };
                let dur = 1 + (x >> 40) % 1_000;
                assert_eq!(
                    cal.reserve(ready, dur),
                    plain.reserve(ready, dur),
                    "seed {seed}, step {step}"
                );
                let mut union: Vec<(u64, u64)> = Vec::new();
                for &(s, e) in &plain.0 {
                    match union.last_mut() {
                        Some(last) if last.1 == s => last.1 = e,
                        _ => union.push((s, e)),
                    }
                }
                assert_eq!(cal.intervals(), &union[..], "seed {seed}, step {step}");
                assert_eq!(
                    cal.live_bookings(),
                    &plain.0[..],
                    "seed {seed}, step {step}"
                );
            }
        }
    }
}
