//! Progress reporting and interruption: the caller's callback runs every ~0.5% of a phase (every
//! `UNKNOWN_STEP` units when the phase's size is unknown) and at least every 10 ms of wall time (so
//! Ctrl-C is honoured within a fraction of a second whatever the phase's length); returning false
//! interrupts the run with `Error::Interrupted`, and every later report interrupts it too (the callback
//! is not asked again).

use std::time::{Duration, Instant};

use nandstack_core::{Error, Result};

use crate::Progress;

/// Wall time between two callbacks, at most.
const WALL_PERIOD: Duration = Duration::from_millis(10);
/// Work units between two reads of the wall clock.
const CLOCK_EVERY: u32 = 1024;
/// Work units between two reports when the phase's total is unknown (0: a stand-in's requests, a trace
/// scan). A report takes the caller's lock (the Python GIL) and reads the clock, a few hundred ns: once
/// per request it was ~9% of a hybrid stand-in run. The 10 ms wall-clock report still bounds the delay.
pub(crate) const UNKNOWN_STEP: u64 = 256;

/// Work units between two reports for a phase of `total` units (0 = unknown).
fn step_of(total: u64) -> u64 {
    if total == 0 {
        UNKNOWN_STEP
    } else {
        (total / 200).max(1)
    }
}

/// Calls the progress callback every `step` units of work or every 10 ms; interrupts when it returns
/// false.
pub struct Ticker<'a> {
    phase: &'static str,
    total: u64,
    step: u64,
    next: u64,
    calls: u32,
    last: Instant,
    /// The callback asked to stop: every later report is an interrupt too (it is not asked again).
    stopped: bool,
    cb: &'a mut dyn FnMut(&Progress) -> bool,
}

impl<'a> Ticker<'a> {
    pub fn new(
        phase: &'static str,
        total: u64,
        cb: &'a mut dyn FnMut(&Progress) -> bool,
    ) -> Result<Ticker<'a>> {
        let step = step_of(total);
        let mut t = Ticker {
            phase,
            total,
            step,
            next: step,
            calls: 0,
            last: Instant::now(),
            stopped: false,
            cb,
        };
        t.report(0)?;
        Ok(t)
    }

    /// Start another phase with the same callback.
    pub fn phase(&mut self, phase: &'static str, total: u64) -> Result<()> {
        self.phase = phase;
        self.total = total;
        self.step = step_of(total);
        self.next = self.step;
        self.report(0)
    }

    fn report(&mut self, done: u64) -> Result<()> {
        self.last = Instant::now();
        if self.stopped {
            return Err(Error::Interrupted);
        }
        if (self.cb)(&Progress {
            phase: self.phase,
            done,
            total: self.total,
        }) {
            Ok(())
        } else {
            self.stopped = true;
            Err(Error::Interrupted)
        }
    }

    /// One unit of work done (`done` so far). The common case, nothing to report, is inlined into
    /// the caller's loop; the rest is out of line.
    #[inline]
    pub fn tick(&mut self, done: u64) -> Result<()> {
        if !self.stopped && done < self.next && self.calls + 1 < CLOCK_EVERY {
            self.calls += 1;
            return Ok(());
        }
        self.tick_slow(done)
    }

    #[inline(never)]
    fn tick_slow(&mut self, done: u64) -> Result<()> {
        if self.stopped {
            return Err(Error::Interrupted);
        }
        if done >= self.next {
            self.next = done + self.step;
            return self.report(self.shown(done));
        }
        self.calls += 1;
        if self.calls >= CLOCK_EVERY {
            self.calls = 0;
            if self.last.elapsed() >= WALL_PERIOD {
                return self.report(self.shown(done));
            }
        }
        Ok(())
    }

    /// Work done as shown: capped at the total when the total is known (0 = unknown).
    fn shown(&self, done: u64) -> u64 {
        if self.total > 0 {
            done.min(self.total)
        } else {
            done
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reports of a phase of `total` units ticked once per unit up to `n` (the opening report included).
    fn reports(total: u64, n: u64) -> Vec<u64> {
        let mut seen = Vec::new();
        {
            let mut cb = |p: &Progress| {
                seen.push(p.done);
                true
            };
            let mut t = Ticker::new("measure", total, &mut cb).unwrap();
            for done in 1..=n {
                t.tick(done).unwrap();
            }
        }
        seen
    }

    /// Every count report the obvious way: at each multiple of `step` (plus the opening one at 0).
    fn by_count(step: u64, n: u64) -> Vec<u64> {
        (0..=n).filter(|d| d % step == 0).collect()
    }

    #[test]
    fn an_unknown_total_reports_every_unknown_step_units_not_every_unit() {
        let n = 100_000;
        let seen = reports(0, n);
        // Count reports are at the multiples of UNKNOWN_STEP; a slow machine may add wall-clock ones
        // (at most one per CLOCK_EVERY ticks).
        let want = by_count(UNKNOWN_STEP, n);
        assert!(want.iter().all(|d| seen.contains(d)), "{:?}", &seen[..10]);
        assert!(seen.len() <= want.len() + (n / CLOCK_EVERY as u64) as usize);
        assert!(seen.len() < 1000, "{} reports for {n} units", seen.len());
        assert!(seen.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn a_known_total_reports_every_half_percent() {
        let (total, n) = (20_000, 20_000);
        let seen = reports(total, n);
        let want = by_count(total / 200, n);
        assert!(want.iter().all(|d| seen.contains(d)));
        assert!(seen.len() <= want.len() + (n / CLOCK_EVERY as u64) as usize);
        // A phase shorter than 200 units reports every unit.
        assert_eq!(reports(50, 50), by_count(1, 50));
    }

    #[test]
    fn a_refusal_interrupts_within_one_step() {
        let mut cb = |p: &Progress| p.done < 1000;
        let mut t = Ticker::new("measure", 0, &mut cb).unwrap();
        let stop = (1..=10_000u64).find(|&d| t.tick(d).is_err()).unwrap();
        assert!((1000..1000 + UNKNOWN_STEP).contains(&stop), "{stop}");
        assert!(matches!(t.tick(stop + 1), Err(Error::Interrupted)));
    }
}
