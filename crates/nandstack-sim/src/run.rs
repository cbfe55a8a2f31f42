//! The driver: precondition → warm-up → measured phase, with progress callbacks and verification.

use std::time::Instant;

use nandstack_core::{Error, Result, MAPPING_UNIT_BYTES};
use nandstack_device::Ftl;
use nandstack_workload::perm::Permutation;
use nandstack_workload::{BlockGenerator, BlockRequest, Op};

use crate::config::{FillOrder, SimConfig};
use crate::report::Report;
use crate::{Progress, RunOptions};

/// Calls the progress callback every `step` units of work; interrupts when it returns false.
struct Ticker<'a> {
    phase: &'static str,
    total: u64,
    step: u64,
    next: u64,
    cb: &'a mut dyn FnMut(&Progress) -> bool,
}

impl<'a> Ticker<'a> {
    fn new(phase: &'static str, total: u64, cb: &'a mut dyn FnMut(&Progress) -> bool) -> Result<Ticker<'a>> {
        let step = (total / 200).max(1);
        let mut t = Ticker { phase, total, step, next: step, cb };
        t.report(0)?;
        Ok(t)
    }
    fn report(&mut self, done: u64) -> Result<()> {
        if (self.cb)(&Progress { phase: self.phase, done, total: self.total }) {
            Ok(())
        } else {
            Err(Error::Interrupted)
        }
    }
    #[inline]
    fn tick(&mut self, done: u64) -> Result<()> {
        if done >= self.next {
            self.next = done + self.step;
            self.report(done.min(self.total))?;
        }
        Ok(())
    }
}

/// Apply one block request to the FTL.
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
    pub ftl: Ftl,
    pub workload: BlockGenerator,
    verify: bool,
    /// The next request, generated one ahead so its mapping entry can be prefetched.
    pending: Option<BlockRequest>,
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
        Ok(Simulation { cfg, ftl, workload, verify: opts.verify, pending: None })
    }

    /// Apply the next workload request, prefetching the mapping entry of the one after it.
    #[inline]
    fn step(&mut self) -> Result<()> {
        let r = match self.pending.take() {
            Some(r) => r,
            None => self.workload.next_request(),
        };
        let next = self.workload.next_request();
        self.ftl.prefetch(next.offset);
        self.pending = Some(next);
        apply(&mut self.ftl, &r)
    }

    fn check_every(&self, phase_len: u64) -> u64 {
        match self.cfg.run.invariant_check_every {
            0 => (phase_len / 16).max(1),
            n => n,
        }
    }

    fn maybe_check(&self, i: u64, every: u64) -> Result<()> {
        if self.verify && i % every == every - 1 {
            self.ftl.check_invariants()?;
        }
        Ok(())
    }

    /// Fill `precondition.fill_fraction` of the logical space, in sequential or random unit order.
    pub fn fill(&mut self, cb: &mut dyn FnMut(&Progress) -> bool) -> Result<()> {
        let units = (self.ftl.logical_units() as f64 * self.cfg.precondition.fill_fraction) as u64;
        if units == 0 {
            return Ok(());
        }
        let mut t = Ticker::new("precondition", units, cb)?;
        let every = self.check_every(units);
        match self.cfg.precondition.fill_order {
            FillOrder::Sequential => {
                for u in 0..units {
                    self.ftl.write(u * MAPPING_UNIT_BYTES, MAPPING_UNIT_BYTES)?;
                    t.tick(u + 1)?;
                    self.maybe_check(u, every)?;
                }
            }
            FillOrder::Random => {
                let perm = Permutation::new(self.ftl.logical_units() as u64, self.cfg.seed ^ 0x66696c6c);
                for i in 0..units {
                    self.ftl.write(perm.apply(i) * MAPPING_UNIT_BYTES, MAPPING_UNIT_BYTES)?;
                    t.tick(i + 1)?;
                    self.maybe_check(i, every)?;
                }
            }
        }
        Ok(())
    }

    /// Run the workload until it has written `warmup_capacity_multiples` × logical capacity.
    pub fn warm_up(&mut self, cb: &mut dyn FnMut(&Progress) -> bool) -> Result<()> {
        let target = (self.ftl.logical_bytes() as f64 * self.cfg.precondition.warmup_capacity_multiples) as u64;
        if target == 0 {
            return Ok(());
        }
        let start = self.ftl.counters().host_write_bytes;
        let mut t = Ticker::new("warmup", target, cb)?;
        let every = self.check_every(target / MAPPING_UNIT_BYTES);
        let mut i = 0u64;
        loop {
            let done = self.ftl.counters().host_write_bytes - start;
            if done >= target {
                break;
            }
            self.step()?;
            t.tick(done)?;
            self.maybe_check(i, every)?;
            i += 1;
        }
        Ok(())
    }

    /// The measured phase: `workload.requests` requests.
    pub fn measure(&mut self, cb: &mut dyn FnMut(&Progress) -> bool) -> Result<()> {
        let n = self.cfg.workload.requests;
        let mut t = Ticker::new("measure", n, cb)?;
        let every = self.check_every(n);
        for i in 0..n {
            self.step()?;
            t.tick(i + 1)?;
            self.maybe_check(i, every)?;
        }
        self.ftl.flush();
        if self.verify {
            self.ftl.check_invariants()?;
            self.ftl.verify_all_versions()?;
        }
        Ok(())
    }

    /// Precondition, reset counters, measure, report.
    pub fn run(mut self, cb: &mut dyn FnMut(&Progress) -> bool) -> Result<Report> {
        let t0 = Instant::now();
        self.fill(cb)?;
        self.warm_up(cb)?;
        self.ftl.reset_counters();
        let t1 = Instant::now();
        self.measure(cb)?;
        let t2 = Instant::now();
        Ok(Report::build(&self.cfg, &self.ftl, self.verify, (t1 - t0).as_secs_f64(), (t2 - t1).as_secs_f64()))
    }
}
