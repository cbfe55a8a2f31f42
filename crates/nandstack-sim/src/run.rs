//! The driver: precondition → warm-up → measured phase, with progress callbacks and verification.
//!
//! Preconditioning and warm-up write through the FTL directly (no timing, no write buffer) — they set the
//! device's state, not its clock. The measured phase goes through the host interface model
//! ([`crate::host`]) and the whole `BlockSsd` (buffer, mapping cache, timing), starting idle at t = 0.

use std::time::Instant;

use nandstack_core::{Error, Result, MAPPING_UNIT_BYTES};
use nandstack_device::ssd::BlockSsd;
use nandstack_device::Ftl;
use nandstack_workload::perm::Permutation;
use nandstack_workload::{BlockGenerator, BlockRequest, Op};

use crate::config::{FillOrder, SimConfig};
use crate::host::{self, Measured};
use crate::report::Report;
use crate::source::Source;
use crate::{Progress, RunOptions};

/// Calls the progress callback every `step` units of work; interrupts when it returns false.
pub(crate) struct Ticker<'a> {
    phase: &'static str,
    total: u64,
    step: u64,
    next: u64,
    cb: &'a mut dyn FnMut(&Progress) -> bool,
}

impl<'a> Ticker<'a> {
    pub(crate) fn new(
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
            cb,
        };
        t.report(0)?;
        Ok(t)
    }
    fn report(&mut self, done: u64) -> Result<()> {
        if (self.cb)(&Progress {
            phase: self.phase,
            done,
            total: self.total,
        }) {
            Ok(())
        } else {
            Err(Error::Interrupted)
        }
    }
    #[inline]
    pub(crate) fn tick(&mut self, done: u64) -> Result<()> {
        if done >= self.next {
            self.next = done + self.step;
            self.report(done.min(self.total))?;
        }
        Ok(())
    }
}

/// Apply one block request to the FTL (untimed).
#[inline]
pub fn apply(ftl: &mut Ftl, r: &BlockRequest) -> Result<()> {
    match r.op {
        Op::Write => ftl.write(r.offset, r.len),
        Op::Read => ftl.read(r.offset, r.len),
        Op::Trim => ftl.trim(r.offset, r.len),
    }
}

/// A built simulation: device + workload, ready to run.
pub struct Simulation {
    pub cfg: SimConfig,
    pub ssd: BlockSsd,
    pub workload: BlockGenerator,
    pub(crate) verify: bool,
    /// The next warm-up requests, generated ahead for the FTL's prefetch pipeline.
    pending: std::collections::VecDeque<BlockRequest>,
}

impl Simulation {
    pub fn new(mut cfg: SimConfig, opts: &RunOptions) -> Result<Simulation> {
        if let Some(s) = opts.seed {
            cfg.seed = s;
        }
        cfg.validate()?;
        let geo = cfg.device.geometry()?;
        let mut ftl = Ftl::new(geo, cfg.ftl.clone(), cfg.seed)?;
        if opts.verify {
            ftl.enable_verification();
        }
        let workload = BlockGenerator::new(&cfg.workload, ftl.logical_bytes(), cfg.seed)?;
        let ssd = BlockSsd::new(ftl, &cfg.device.timing(), cfg.controller.clone())?;
        Ok(Simulation {
            cfg,
            ssd,
            workload,
            verify: opts.verify,
            pending: std::collections::VecDeque::new(),
        })
    }

    pub(crate) fn check_every(&self, phase_len: u64) -> u64 {
        match self.cfg.run.invariant_check_every {
            0 => (phase_len / 16).max(1),
            n => n,
        }
    }

    pub(crate) fn maybe_check(&self, i: u64, every: u64) -> Result<()> {
        if self.verify && i % every == every - 1 {
            self.ssd.ftl.check_invariants()?;
        }
        Ok(())
    }

    /// Fill `precondition.fill_fraction` of the logical space, in sequential or random unit order.
    pub fn fill(&mut self, cb: &mut dyn FnMut(&Progress) -> bool) -> Result<()> {
        let ftl = &mut self.ssd.ftl;
        let units = (ftl.logical_units() as f64 * self.cfg.precondition.fill_fraction) as u64;
        if units == 0 {
            return Ok(());
        }
        let mut t = Ticker::new("precondition", units, cb)?;
        let every = self.check_every(units);
        let perm = (self.cfg.precondition.fill_order == FillOrder::Random).then(|| {
            Permutation::new(
                self.ssd.ftl.logical_units() as u64,
                self.cfg.seed ^ 0x6669_6c6c,
            )
        });
        for i in 0..units {
            let u = perm.as_ref().map_or(i, |p| p.apply(i));
            self.ssd
                .ftl
                .write(u * MAPPING_UNIT_BYTES, MAPPING_UNIT_BYTES)?;
            t.tick(i + 1)?;
            self.maybe_check(i, every)?;
        }
        Ok(())
    }

    /// Run the synthetic workload until it has written `warmup_capacity_multiples` × logical capacity.
    pub fn warm_up(&mut self, cb: &mut dyn FnMut(&Progress) -> bool) -> Result<()> {
        let target = (self.ssd.logical_bytes() as f64
            * self.cfg.precondition.warmup_capacity_multiples) as u64;
        if target == 0 {
            return Ok(());
        }
        let start = self.ssd.ftl.counters().host_write_bytes;
        let mut t = Ticker::new("warmup", target, cb)?;
        let every = self.check_every(target / MAPPING_UNIT_BYTES);
        let mut i = 0u64;
        loop {
            let done = self.ssd.ftl.counters().host_write_bytes - start;
            if done >= target {
                break;
            }
            while self.pending.len() < 4 {
                self.pending.push_back(self.workload.next_request());
            }
            let r = self.pending.pop_front().expect("filled");
            let at = |i: usize| self.pending.get(i).map(|q| q.offset);
            self.ssd.ftl.prefetch([at(0), at(1), at(2)]);
            apply(&mut self.ssd.ftl, &r)?;
            t.tick(done)?;
            self.maybe_check(i, every)?;
            i += 1;
        }
        Ok(())
    }

    /// Precondition, reset counters, measure, report.
    pub fn run(mut self, cb: &mut dyn FnMut(&Progress) -> bool) -> Result<Report> {
        let t0 = Instant::now();
        let timed = self.ssd.timed();
        self.ssd.ftl.record_ops(false);
        self.fill(cb)?;
        self.warm_up(cb)?;
        // A drive left to itself after preconditioning has programmed its open pages and flushed its map.
        self.ssd.ftl.flush();
        self.ssd.ftl.record_ops(timed);
        self.ssd.reset_counters();
        let t1 = Instant::now();
        let source = match &self.cfg.trace {
            Some(tc) => Source::trace(tc, self.ssd.logical_bytes())?,
            None => {
                // Continue the warm-up's generator (the pending request is dropped: the measured phase
                // is its own stream position, deterministic for a given config and seed).
                self.pending.clear();
                let generator = std::mem::replace(
                    &mut self.workload,
                    BlockGenerator::new(
                        &self.cfg.workload,
                        self.ssd.logical_bytes(),
                        self.cfg.seed,
                    )?,
                );
                Source::synthetic(generator, self.cfg.workload.requests)
            }
        };
        let measured: Measured = host::drive(&mut self, source, cb)?;
        let t2 = Instant::now();
        Ok(Report::build(
            &self.cfg,
            &self.ssd,
            &measured,
            self.verify,
            (t1 - t0).as_secs_f64(),
            (t2 - t1).as_secs_f64(),
        ))
    }
}
