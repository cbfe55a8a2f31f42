//! Progress reporting and interruption: the caller's callback runs every ~0.5% of a phase and at least
//! every 10 ms of wall time (so Ctrl-C is honoured within a fraction of a second whatever the phase's
//! length); returning false interrupts the run with `Error::Interrupted`, and every later report
//! interrupts it too (the callback is not asked again).

use std::time::{Duration, Instant};

use nandstack_core::{Error, Result};

use crate::Progress;

/// Wall time between two callbacks, at most.
const WALL_PERIOD: Duration = Duration::from_millis(10);
/// Work units between two reads of the wall clock.
const CLOCK_EVERY: u32 = 1024;

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
        let step = (total / 200).max(1);
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
        self.step = (total / 200).max(1);
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

    #[inline]
    pub fn tick(&mut self, done: u64) -> Result<()> {
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
