//! The simulation loop: threads (one reference stream each) advance their own clocks; the thread with
//! the earliest clock runs next (ties by thread index — deterministic), until its clock passes the next
//! thread's. A reference that hits RAM tests and sets its PTE bits and costs `ns_per_reference`; one
//! that misses faults into the host. Between chunks of references the loop completes writes, runs the
//! flusher, samples the time series, checks invariants (verify) and reports progress.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use nandstack_core::{Error, Histogram, Nanos, Result};
use nandstack_device::Device;
use nandstack_host::host::build::HostSetup;
use nandstack_host::host::{Ctx, Host};
use nandstack_host::vm::page::*;
use nandstack_host::workloads::nsref::NsrefWriter;
use nandstack_host::workloads::{
    self, MemRef, RefStream, OP_BEGIN, OP_END, OP_READ, OP_SLEEP, OP_UNTIL, OP_WRITE,
};

use super::series::Series;
use crate::config::SimConfig;

/// References fetched from a stream at a time.
pub(crate) const CHUNK: usize = 4096;
/// How many references ahead the event loop prefetches a page-table entry.
const PTE_LEAD: usize = 8;

struct Task {
    proc: usize,
    base: u32,
    pages: u32,
    stream: Box<dyn RefStream>,
    buf: Vec<MemRef>,
    pos: usize,
    more: bool,
    ctx: Ctx,
    start_ns: Nanos,
    req_start: Nanos,
}

/// Per-process results.
pub struct ProcInfo {
    pub name: String,
    pub cgroup: String,
    pub describe: String,
    pub kv: bool,
    pub references: u64,
    pub requests: u64,
    pub latency: Histogram,
    pub first_ns: u64,
    pub last_ns: u64,
    pub end_ns: u64,
}

/// What [`Sim::step`] ended with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A thread waits for its stream (`RefStream::ready`); call `step` again when it can go on.
    Paused,
    /// The run is over.
    Done,
}

/// What one turn of a thread did.
enum Ran {
    Alive,
    Ended,
    Blocked,
}
impl Ran {
    fn alive(more: bool) -> Ran {
        if more {
            Ran::Alive
        } else {
            Ran::Ended
        }
    }
}

/// The event loop's state between steps.
struct Looping {
    heap: BinaryHeap<Reverse<(Nanos, usize)>>,
    step: u64,
    next_progress: u64,
    last_call: Instant,
    iterations: u32,
}

pub struct Sim {
    pub host: Host,
    tasks: Vec<Task>,
    pub procs: Vec<ProcInfo>,
    pub series: Series,
    pub seed: u64,
    verify_every: u64,
    next_verify: u64,
    max_refs: u64,
    max_ns: Nanos,
    refs_out: Option<NsrefWriter>,
    total_hint: u64,
    pub now: Nanos,
    pub wall_seconds: f64,
    pub stopped_early: bool,
    looping: Option<Looping>,
    turns: u64,
}

impl Sim {
    /// The host of the (checked) config `cfg` on `dev`, with its threads ready to run. Reports phase
    /// "build" (frames of the RAM table made, of all) to `progress` every 2^16 frames while the frame
    /// table of a host with more than 16 GiB of RAM is built; `false` from it ends the build with
    /// `Error::Interrupted`.
    pub fn build(
        cfg: &SimConfig,
        dev: Box<dyn Device>,
        verify: bool,
        progress: &mut dyn FnMut(&str, u64, u64) -> bool,
    ) -> Result<Sim> {
        let default_host;
        let host_cfg = match &cfg.host {
            Some(h) => h,
            None => {
                default_host = Default::default();
                &default_host
            }
        };
        // `run.data_dir`'s corpus folder filled in where a workload names none.
        let processes = &cfg.host_processes();
        let (wls, contents): (Vec<workloads::Workload>, Vec<_>) = processes
            .iter()
            .enumerate()
            .map(|(i, p)| workloads::build_with_contents(&p.workload, cfg.seed, i as u64))
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .unzip();
        let setup = HostSetup {
            seed: cfg.seed,
            host: host_cfg,
            processes,
            block_trace: cfg.run.block_trace.as_ref(),
        };
        let mut host = Host::build_polled(&setup, dev, &wls, verify, &mut |done, total| {
            if progress("build", done, total) {
                Ok(())
            } else {
                Err(Error::Interrupted)
            }
        })?;
        host.set_contents(contents)?;
        let mut tasks = Vec::new();
        let mut procs = Vec::new();
        let mut total_hint = 0u64;
        let cpus = host_cfg.cpus as u16;
        let mut tid = 0u16;
        for (pi, (w, p)) in wls.into_iter().zip(processes).enumerate() {
            let pr = &host.vm.procs[pi];
            let (base, pages, name) = (pr.base, pr.pages, pr.name.clone());
            let comm = host.io.comm(&name);
            let start_ns = Nanos((p.start_ms * 1e6) as u64);
            for stream in w.threads {
                total_hint += stream.len_hint().unwrap_or(0);
                tasks.push(Task {
                    proc: pi,
                    base,
                    pages,
                    stream,
                    buf: Vec::with_capacity(CHUNK + 64),
                    pos: 0,
                    more: true,
                    ctx: Ctx {
                        now: start_ns,
                        cpu: tid % cpus,
                        comm,
                        kswapd: false,
                    },
                    start_ns,
                    req_start: Nanos::ZERO,
                });
                tid += 1;
            }
            procs.push(ProcInfo {
                name,
                cgroup: p.cgroup.clone().unwrap_or_else(|| "root".into()),
                describe: w.describe,
                kv: w.kv,
                references: 0,
                requests: 0,
                latency: Histogram::new(),
                first_ns: u64::MAX,
                last_ns: 0,
                end_ns: 0,
            });
        }
        let refs_out = match &cfg.run.refs_out {
            Some(path) => Some(NsrefWriter::create(path, host.vm.procs[0].pages)?),
            None => None,
        };
        host.verify = verify;
        let r = &cfg.run;
        // The time series every 100 ms of simulated time unless the run asks for another interval.
        let series_ns = if r.interval_sim_seconds > 0.0 {
            (r.interval_sim_seconds * 1e3 * 1e6) as u64
        } else {
            100_000_000
        };
        let verify_every = if r.verify_every > 0 {
            r.verify_every
        } else {
            1_000_000
        };
        let series = Series::new(series_ns, host.vm.memcgs.len());
        Ok(Sim {
            host,
            tasks,
            procs,
            series,
            seed: cfg.seed,
            verify_every,
            next_verify: verify_every,
            max_refs: cfg.run.max_references.unwrap_or(u64::MAX),
            max_ns: Nanos(cfg.run.max_seconds.map_or(u64::MAX, |s| (s * 1e9) as u64)),
            refs_out,
            total_hint,
            now: Nanos::ZERO,
            wall_seconds: 0.0,
            stopped_early: false,
            looping: None,
            turns: 0,
        })
    }

    /// Run every thread to its end (or a limit). `progress(phase, done, total)` is called about every
    /// 0.5% of the references; returning false interrupts the run.
    pub fn run(&mut self, progress: &mut dyn FnMut(&str, u64, u64) -> bool) -> Result<()> {
        while self.step(progress)? == Step::Paused {}
        Ok(())
    }

    /// Run until every thread has ended (or a limit) — [`Step::Done`], the run finished as [`Sim::run`]
    /// finishes it — or until the next thread to run reads a stream that is not
    /// [`ready`](RefStream::ready) — [`Step::Paused`], nothing of that thread done: the next `step`
    /// continues exactly there, so a run in steps is the run in one go.
    pub fn step(&mut self, progress: &mut dyn FnMut(&str, u64, u64) -> bool) -> Result<Step> {
        let wall = Instant::now();
        let mut l = self.looping.take().unwrap_or_else(|| {
            let step = (self.total_hint / 200).max(100_000);
            Looping {
                heap: (0..self.tasks.len())
                    .map(|i| Reverse((self.tasks[i].ctx.now, i)))
                    .collect(),
                step,
                next_progress: step,
                last_call: Instant::now(),
                iterations: 0,
            }
        });
        let outcome = self.run_loop(&mut l, progress);
        self.wall_seconds += wall.elapsed().as_secs_f64();
        match outcome? {
            Step::Paused => {
                self.looping = Some(l);
                Ok(Step::Paused)
            }
            Step::Done => {
                let wall = Instant::now();
                self.finish(progress)?;
                self.wall_seconds += wall.elapsed().as_secs_f64();
                Ok(Step::Done)
            }
        }
    }

    fn run_loop(
        &mut self,
        l: &mut Looping,
        progress: &mut dyn FnMut(&str, u64, u64) -> bool,
    ) -> Result<Step> {
        // The callback also runs at least every 10 ms of wall time (Ctrl-C is honoured promptly).
        while let Some(Reverse((at, i))) = l.heap.pop() {
            let horizon = l.heap.peek().map_or(Nanos::MAX, |r| r.0 .0);
            let alive = match self.run_task(i, horizon)? {
                Ran::Blocked => {
                    l.heap.push(Reverse((at, i)));
                    return Ok(Step::Paused);
                }
                Ran::Alive => true,
                Ran::Ended => false,
            };
            self.turns += 1;
            let now = self.tasks[i].ctx.now;
            self.now = self.now.max(now);
            self.background(now)?;
            let refs = self.host.stats.references;
            l.iterations = l.iterations.wrapping_add(1);
            let wall_due = l.iterations.is_multiple_of(64)
                && l.last_call.elapsed() >= std::time::Duration::from_millis(10);
            if refs >= l.next_progress || wall_due {
                if refs >= l.next_progress {
                    l.next_progress = refs + l.step;
                }
                l.last_call = Instant::now();
                if !progress("run", refs, self.total_hint) {
                    return Err(Error::Interrupted);
                }
            }
            if refs >= self.max_refs || now >= self.max_ns {
                self.stopped_early = true;
                break;
            }
            if alive {
                l.heap.push(Reverse((now, i)));
            } else {
                let p = self.tasks[i].proc;
                self.procs[p].end_ns = self.procs[p].end_ns.max(now.0);
            }
        }
        Ok(Step::Done)
    }

    /// The end of a run: writes in flight complete, the last sample, the final checks.
    fn finish(&mut self, progress: &mut dyn FnMut(&str, u64, u64) -> bool) -> Result<()> {
        // Let writes in flight complete.
        self.host.settle(self.now)?;
        self.series.sample(self.now.0, &self.host, true);
        if self.host.verify {
            self.host.check_invariants()?;
        }
        self.host.io.finish()?;
        if let Some(w) = self.refs_out.take() {
            w.finish()?;
        }
        // The streams are done with (a tee's readers stop holding the others back).
        for t in &mut self.tasks {
            t.stream = Box::new(workloads::VecStream::new(Vec::new()));
        }
        progress("run", self.host.stats.references, self.total_hint);
        Ok(())
    }

    /// Replace thread `i`'s stream (before the run): `f` gets the one the workload built and returns
    /// the one to read — a [`tee`](workloads::tee)'s reader of the same references.
    pub fn swap_stream(
        &mut self,
        i: usize,
        f: impl FnOnce(Box<dyn RefStream>) -> Box<dyn RefStream>,
    ) {
        let t = &mut self.tasks[i];
        let old = std::mem::replace(
            &mut t.stream,
            Box::new(workloads::VecStream::new(Vec::new())),
        );
        t.stream = f(old);
    }

    /// Completions, flusher, series, verification at time `now`.
    fn background(&mut self, now: Nanos) -> Result<()> {
        self.host.background(now)?;
        self.series.sample(now.0, &self.host, false);
        if self.host.verify && self.host.stats.references >= self.next_verify {
            self.next_verify = self.host.stats.references + self.verify_every;
            self.host.check_invariants()?;
        }
        Ok(())
    }

    /// Run thread `i` for at most one chunk of references or until its clock passes `horizon`;
    /// `Ended` once its stream has ended, `Blocked` (nothing done) when it needs references its stream
    /// cannot give yet.
    fn run_task(&mut self, i: usize, horizon: Nanos) -> Result<Ran> {
        let t = &mut self.tasks[i];
        if t.pos >= t.buf.len() {
            if !t.more {
                return Ok(Ran::Ended);
            }
            if !t.stream.ready() {
                return Ok(Ran::Blocked);
            }
            t.buf.clear();
            t.pos = 0;
            t.more = t.stream.fill(&mut t.buf, CHUNK)?;
            if let (Some(w), 0) = (self.refs_out.as_mut(), t.proc) {
                for &r in &t.buf {
                    w.push(r)?;
                }
            }
            if t.buf.is_empty() {
                return Ok(Ran::alive(t.more));
            }
        }
        let host = &mut self.host;
        let ns = host.p.ns_per_ref;
        let proc = &mut self.procs[t.proc];
        let (mut refs, mut hits) = (0u64, 0u64);
        while t.pos < t.buf.len() {
            // The run of plain hits from here, in a loop of its own (the page table and the
            // buffer in registers); it stops at the first reference that needs more.
            let from = t.pos;
            t.pos = hits_from(&t.buf, from, &mut host.vm.ptes, t.base, t.pages);
            let n = (t.pos - from) as u64;
            refs += n;
            hits += n;
            t.ctx.now += Nanos(ns.0 * n);
            let Some(&r) = t.buf.get(t.pos) else {
                break;
            };
            t.pos += 1;
            if r.op <= OP_WRITE {
                // Not a hit (`hits_from` stopped here): beyond the process, or a fault.
                if r.page >= t.pages {
                    return Err(Error::Invariant(format!(
                        "process `{}` referenced page {} beyond its {} pages",
                        proc.name, r.page, t.pages
                    )));
                }
                refs += 1;
                t.ctx.now += ns;
                let vpn = t.base + r.page;
                // The references ahead that will fault on a swapped page: their swap and device
                // entries come into cache while this fault runs (thousands of cycles).
                for ahead in &t.buf[t.pos..t.buf.len().min(t.pos + PTE_LEAD)] {
                    if matches!(ahead.op, OP_READ | OP_WRITE) && ahead.page < t.pages {
                        host.prefetch_fault(t.base + ahead.page);
                    }
                }
                // The page image has seen every reference before this one.
                host.advance_contents(t.proc, proc.references + refs - 1);
                host.fault(&mut t.ctx, vpn, r.op == OP_WRITE)?;
            } else {
                match r.op {
                    OP_BEGIN => {
                        t.req_start = t.ctx.now;
                        if let Some(z) = host.store.zswap.as_mut() {
                            z.sample_density();
                        }
                    }
                    OP_END => {
                        proc.requests += 1;
                        proc.latency.record((t.ctx.now - t.req_start).0);
                        proc.first_ns = proc.first_ns.min(t.req_start.0);
                        proc.last_ns = proc.last_ns.max(t.ctx.now.0);
                    }
                    OP_SLEEP => t.ctx.now += Nanos(r.page as u64 * 1000),
                    OP_UNTIL => {
                        t.ctx.now = t.ctx.now.max(t.start_ns + Nanos(r.page as u64 * 1_000_000))
                    }
                    _ => {}
                }
            }
            if t.ctx.now > horizon {
                break;
            }
        }
        host.stats.references += refs;
        host.stats.hits += hits;
        proc.references += refs;
        Ok(Ran::alive(t.more || t.pos < t.buf.len()))
    }

    /// Turns threads have taken (a paused step's blocked thread takes none).
    pub fn turns(&self) -> u64 {
        self.turns
    }

    /// References the streams say they hold (progress), summed.
    pub fn total_hint(&self) -> u64 {
        self.total_hint
    }

    /// Every thread's stream: let it run further ahead of the other readers of the same stream
    /// ([`RefStream::widen`]).
    pub fn widen_streams(&mut self) {
        for t in &mut self.tasks {
            t.stream.widen();
        }
    }

    /// Task count (threads).
    pub fn threads(&self) -> usize {
        self.tasks.len()
    }
}

/// From `pos` on, the references of `buf` that are plain hits — a read of a present page or of the zero
/// page, a write to a present writable one — with their page-table entries marked (young; dirty for a
/// write), up to the first one that is not (a marker, a page beyond the process's `pages`, a fault) or
/// the end; returns where it stopped. `ptes[base + page]` is the process's page `page`. Reads and writes
/// interleave at random, so the op is data in the hit test (0 read, 1 write), not a branch.
#[inline]
fn hits_from(buf: &[MemRef], mut pos: usize, ptes: &mut [u32], base: u32, pages: u32) -> usize {
    const _: () = assert!(OP_READ == 0 && OP_WRITE == 1);
    while let Some(&r) = buf.get(pos) {
        // The page-table entry of the reference PTE_LEAD ahead (the table is MiBs: most references
        // would miss the cache); markers' page fields name no page, a wasted hint.
        if let Some(ahead) = buf.get(pos + PTE_LEAD) {
            nandstack_core::hint::prefetch(ptes, base as usize + ahead.page as usize);
        }
        if r.op > OP_WRITE || r.page >= pages {
            break;
        }
        let vpn = (base + r.page) as usize;
        let pte = ptes[vpn];
        let write = r.op as u32;
        let need = PTE_PRESENT | (write * PTE_WRITE);
        if pte & need == need {
            ptes[vpn] = pte | PTE_YOUNG | (write * PTE_DIRTY);
        } else if !(pte == PTE_ZERO && write == 0) {
            break;
        }
        pos += 1;
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-made page table (process at base 2 of 6 entries, 3 pages): what `hits_from` marks, and
    /// where it stops — a write to a read-only page, a marker, a read of a swapped page, a page beyond.
    #[test]
    fn hits_from_marks_hits_and_stops_at_the_first_other_reference() {
        let present = PTE_PRESENT | 7;
        let writable = PTE_PRESENT | PTE_WRITE | 8;
        let swapped = PTE_SWAP | 9;
        let table = [0, 0, present, writable, PTE_ZERO, swapped];
        let run = |buf: &[MemRef], pages: u32| {
            let mut ptes = table;
            let end = hits_from(buf, 0, &mut ptes, 2, pages);
            (end, ptes)
        };
        // Reads of present and zero pages, a write to a writable page: all hits, then the end.
        let (end, ptes) = run(
            &[
                MemRef::read(0),
                MemRef::write(1),
                MemRef::read(2),
                MemRef::read(1),
            ],
            3,
        );
        assert_eq!(end, 4);
        assert_eq!(ptes[2], present | PTE_YOUNG);
        assert_eq!(ptes[3], writable | PTE_YOUNG | PTE_DIRTY);
        assert_eq!(ptes[4], PTE_ZERO, "the zero page's entry is left alone");
        // A write to a present read-only page faults (copy on write): it stops there, unmarked.
        let (end, ptes) = run(&[MemRef::read(1), MemRef::write(0)], 3);
        assert_eq!((end, ptes[2]), (1, present));
        // A write to the zero page faults too.
        assert_eq!(run(&[MemRef::write(2)], 3).0, 0);
        // A marker, a swapped page, a page beyond the process: each stops the run.
        assert_eq!(run(&[MemRef::read(0), MemRef::marker(OP_BEGIN, 0)], 3).0, 1);
        assert_eq!(run(&[MemRef::read(0), MemRef::read(3)], 4).0, 1);
        assert_eq!(run(&[MemRef::read(0), MemRef::read(3)], 3).0, 1);
    }
}
