//! A channel's calendar of booked transfers: a transfer takes the first idle gap at or after it is
//! ready, and bookings that ended by the last [`Calendar::advance`] are forgotten (a later transfer
//! ready before that time may then use their slot).
//!
//! Where a transfer goes depends only on the time booked, not on how it splits into bookings; what
//! `advance` forgets does (whole bookings go). So the calendar keeps the bookings for forgetting, and
//! the busy time as maximal intervals (back-to-back bookings joined) for placing: a burst of transfers
//! is one interval to pass, not one each.
//!
//! A booking is kept as its end alone. Bookings never overlap, so sorted by end is sorted by start,
//! and a booking's start is the end of the booking before it when the two touch, else the start of
//! its interval: after `advance`, the first interval starts at the later of its own start and the
//! last forgotten end — where the first booking left starts (see `advance`).

/// Ended bookings and intervals are skipped by a head index and dropped in one move once they are
/// most of the vector (at least `COMPACT_AT`): `advance` does no per-call shifting.
const COMPACT_AT: usize = 32;

#[derive(Clone, Debug, Default)]
pub(super) struct Calendar {
    /// The end of each booking from `b0` on, sorted (bookings are non-overlapping, back to back
    /// allowed); those before `b0` have been forgotten.
    ends: Vec<u64>,
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
        // Bookings are mostly made in time order: most go at the back. Non-overlapping, the bookings
        // before this one are those that end by its start.
        match self.ends.last() {
            Some(&e) if e > start => {
                let b0 = self.b0;
                let at = b0 + self.ends[b0..].partition_point(|&e| e <= start);
                self.ends.insert(at, end);
            }
            _ => self.ends.push(end),
        }
        start
    }

    /// Forget the bookings that ended by `now`.
    pub(super) fn advance(&mut self, now: u64) {
        // Bookings end in order (sorted, non-overlapping): the ended ones are a prefix, often empty.
        if self.ends.get(self.b0).is_none_or(|&e| e > now) {
            return;
        }
        let last_forgotten = forget_ended(&mut self.ends, &mut self.b0, |&e| e, now);
        forget_ended(&mut self.busy, &mut self.u0, |&(_, e)| e, now);
        // The first interval left holds the first booking left, and runs on unbroken from its start:
        // the end of the booking before it when that one was in the interval too (back to back), else
        // the interval's start (an earlier interval ended before it: intervals never touch).
        if let Some(first) = self.busy.get_mut(self.u0) {
            first.0 = first.0.max(last_forgotten);
            debug_assert!(first.0 < first.1);
        }
    }

    /// When the first booking ends (None: nothing booked): `advance` to an earlier time forgets
    /// nothing.
    pub(super) fn first_end(&self) -> Option<u64> {
        self.ends.get(self.b0).copied()
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
    fn live_ends(&self) -> &[u64] {
        &self.ends[self.b0..]
    }
}

/// Move `head` past the live entries of `v` (sorted by `end`) that ended by `now` — a few at a time, a
/// request's worth of transfers, so counted from the front — and drop the forgotten prefix once it is at
/// least `COMPACT_AT` entries and at least half of `v` (each entry is moved O(1) times on average).
/// Returns the end of the last entry forgotten (0 if none was).
#[inline]
fn forget_ended<T>(v: &mut Vec<T>, head: &mut usize, end: impl Fn(&T) -> u64, now: u64) -> u64 {
    let gone = v[*head..].iter().take_while(|x| end(x) <= now).count();
    *head += gone;
    let last = if gone > 0 { end(&v[*head - 1]) } else { 0 };
    if *head >= COMPACT_AT && 2 * *head >= v.len() {
        v.drain(..*head);
        *head = 0;
    }
    last
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
                let ends: Vec<u64> = plain.0.iter().map(|&(_, e)| e).collect();
                assert_eq!(cal.live_ends(), &ends[..], "seed {seed}, step {step}");
            }
        }
    }
}
