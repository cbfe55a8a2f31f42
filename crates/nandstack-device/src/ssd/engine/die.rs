//! What an idle die does next, and the channel.
//!
//! # GC rules (tiers of candidates, before the scheduler)
//! The scheduler is shown the die's transactions of one tier at a time, in this order, and the first
//! tier where it picks a (ready) transaction wins:
//! 1. the prioritised GC job (non-preemptive GC, or urgent semi-preemptible GC) that has started on the
//!    die: nothing overtakes a started victim, as in the direct engine ("a victim once started is
//!    finished");
//! 2. urgent GC, before everything else;
//! 3. everything, except that semi-preemptible GC that is not urgent yields: while a host transaction
//!    is ready on the die, GC transactions are not candidates (host work interleaves between GC page
//!    moves);
//! 4. everything. A transaction only ever waits for older ones (the physical order per block can make
//!    urgent GC wait for a yielding GC read, or a started job for an older host program), so this last
//!    tier — where `fifo` starts the die's oldest transaction as soon as it is ready — guarantees
//!    progress: no tier can shut out the transaction another one waits for.
//!
//! # Suspension (Wu & He, FAST'12; MQSim's model)
//! A host or mapping read that is ready for a die running a program (erase) suspends it when that is
//! enabled, the operation has at least the minimum time left, has been suspended fewer than
//! `max_per_operation` times, is not urgent GC, and the die has no other suspended operation. The die
//! is then reserved for the suspend latency, serves every ready read (in scheduler order), and resumes
//! the operation (resume latency + the time it had left) when no read is ready.
//!
//! # Multi-plane commands
//! With `multi_plane`, the transaction the scheduler picks takes along ready transactions of the same
//! kind on the die's other planes (reads and programs: the same page index; erases: any block), one per
//! plane: one array time for all (the longest), read data out one plane after another.

use super::config::ns;
use super::sched::{Cand, Class};
use super::{Active, ChanReq, Engine, Ev, Kind, St, NONE};
use crate::nand::Timelines;

/// The GC rules as tiers of candidates, tried in order until the scheduler picks one.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Tier {
    /// The started prioritised GC job of the die.
    Job,
    /// Urgent GC.
    Urgent,
    /// Everything, but semi-preemptible GC yields while a host transaction is ready.
    Yield,
    /// Everything (so a transaction a higher tier waits for is never shut out).
    All,
}

impl Engine {
    /// The array time of a transaction.
    fn service_ns(&self, tl: &Timelines, id: u32) -> u64 {
        let t = &self.txns[id as usize];
        match t.kind {
            Kind::Read => tl.read_ns(t.page),
            Kind::Program => tl.program_ns(t.page),
            Kind::Erase => tl.t_erase,
            _ => 0,
        }
    }

    fn cand_of(&self, tl: &Timelines, id: u32) -> Cand {
        let t = &self.txns[id as usize];
        Cand {
            class: t.class,
            ready: t.st == St::Ready,
            seq: t.seq,
            flow: t.flow,
            arrival_ns: self.cmds[t.cmd as usize].arrival_ns,
            service_ns: self.service_ns(tl, id),
        }
    }

    /// Fill `cands` / `cand_ids` with the die's candidates of GC-rule tier `tier` (see the module
    /// documentation); returns whether one of them is ready.
    fn candidates(&mut self, tl: &Timelines, d: u32, tier: Tier) -> bool {
        self.cands.clear();
        self.cand_ids.clear();
        let die = &self.dies[d as usize];
        let job = die.gc_job;
        let host_ready = tier == Tier::Yield
            && die.pending.iter().any(|&id| {
                let t = &self.txns[id as usize];
                t.st == St::Ready && t.class != Class::Gc
            });
        let mut any_ready = false;
        for &id in &die.pending {
            let t = &self.txns[id as usize];
            let keep = match tier {
                Tier::Job => t.cmd == job && t.prio_gc,
                Tier::Urgent => t.urgent,
                Tier::Yield => {
                    !(self.preemptible && host_ready && t.class == Class::Gc && !t.prio_gc)
                }
                Tier::All => true,
            };
            if keep {
                any_ready |= t.st == St::Ready;
                self.cands.push(self.cand_of(tl, id));
                self.cand_ids.push(id);
            }
        }
        any_ready
    }

    /// Decide what die `d` does now.
    pub(super) fn dispatch(&mut self, tl: &mut Timelines, d: u32) {
        let die = &self.dies[d as usize];
        if die.suspending_until > self.now {
            return;
        }
        if die.active.is_some() {
            self.maybe_suspend(tl, d);
            return;
        }
        if die.pending.is_empty() && die.suspended.is_none() {
            return;
        }
        if self.dies[d as usize].suspended.is_some() {
            // Serve the ready reads, oldest first, while the program / erase is suspended (the GC rules do
            // not apply: the die is in the suspended operation's time); resume when none is left.
            self.cands.clear();
            self.cand_ids.clear();
            let read = self.dies[d as usize].pending.iter().copied().find(|&id| {
                let t = &self.txns[id as usize];
                t.st == St::Ready && t.class == Class::Read
            });
            match read {
                Some(id) => {
                    self.counters.reads_during_suspension += 1;
                    self.cand_ids.push(id);
                    self.cands.push(self.cand_of(tl, id));
                    self.start(tl, d, 0);
                }
                None => self.resume(d),
            }
            return;
        }
        let die = &self.dies[d as usize];
        let job = die.gc_job;
        if job != NONE
            && !die.pending.iter().any(|&id| {
                let t = &self.txns[id as usize];
                t.cmd == job && t.prio_gc
            })
        {
            self.dies[d as usize].gc_job = NONE;
        }
        for tier in [Tier::Job, Tier::Urgent, Tier::Yield, Tier::All] {
            if tier == Tier::Job && self.dies[d as usize].gc_job == NONE {
                continue;
            }
            if !self.candidates(tl, d, tier) {
                continue;
            }
            if let Some(i) = self.sched.pick(self.now, d, &self.cands) {
                debug_assert!(self.cands[i].ready);
                self.start(tl, d, i);
                return;
            }
        }
    }

    /// Start candidate `i` on die `d` (with its multi-plane partners).
    fn start(&mut self, tl: &mut Timelines, d: u32, i: usize) {
        let first = self.cand_ids[i];
        let (kind, page, plane0) = {
            let t = &self.txns[first as usize];
            (t.kind, t.page, t.plane)
        };
        let mut group = vec![first];
        if self.multi_plane && self.planes_per_array > 1 {
            let mut planes = vec![plane0];
            for (k, &id) in self.cand_ids.iter().enumerate() {
                if group.len() as u32 >= self.planes_per_array {
                    break;
                }
                let t = &self.txns[id as usize];
                if k != i
                    && self.cands[k].ready
                    && t.kind == kind
                    && !planes.contains(&t.plane)
                    && (kind == Kind::Erase || t.page == page)
                {
                    planes.push(t.plane);
                    group.push(id);
                }
            }
            if group.len() > 1 {
                let c = &mut self.counters;
                match kind {
                    Kind::Read => c.multi_plane_reads += 1,
                    Kind::Program => c.multi_plane_programs += 1,
                    _ => c.multi_plane_erases += 1,
                }
            }
        }
        let dur = group
            .iter()
            .map(|&id| self.service_ns(tl, id))
            .max()
            .unwrap_or(0);
        let end = self.now + dur;
        let mut urgent = false;
        for &id in &group {
            let t = &mut self.txns[id as usize];
            t.st = St::Running;
            urgent |= t.urgent;
            if t.prio_gc {
                self.dies[d as usize].gc_job = t.cmd;
            }
            if t.class == Class::Gc {
                tl.mark_gc(t.plane, end);
            }
        }
        let die = &mut self.dies[d as usize];
        die.pending.retain(|x| !group.contains(x));
        die.active = Some(Active {
            txns: group,
            kind,
            seg_start: self.now,
            end,
            out_phase: false,
            urgent,
            suspensions: 0,
        });
        die.token += 1;
        let token = die.token;
        self.push(end, Ev::DieEnd(d, token));
    }

    /// The array part of die `d`'s operation is over: reads move their data out, the rest is done.
    pub(super) fn array_done(&mut self, tl: &mut Timelines, d: u32) {
        let a = self.dies[d as usize].active.as_ref().expect("active");
        if a.kind == Kind::Read {
            let bytes: u64 = a.txns.iter().map(|&id| self.txns[id as usize].bytes).sum();
            if bytes > 0 {
                let c = self.channel_of(self.txns[a.txns[0] as usize].plane);
                self.dies[d as usize]
                    .active
                    .as_mut()
                    .expect("active")
                    .out_phase = true;
                self.request_channel(
                    tl,
                    c,
                    ChanReq {
                        die: d,
                        txn: NONE,
                        bytes,
                    },
                );
                return;
            }
        }
        self.finish_active(tl, d);
    }

    fn finish_active(&mut self, tl: &mut Timelines, d: u32) {
        let a = self.dies[d as usize].active.take().expect("active");
        tl.array_busy_ns += self.now - a.seg_start;
        for &id in &a.txns {
            self.complete(tl, id);
        }
        self.mark(d);
    }

    /// Queue a transfer on channel `c`; start it if the channel is free.
    pub(super) fn request_channel(&mut self, tl: &mut Timelines, c: u32, r: ChanReq) {
        self.chans[c as usize].queue.push_back(r);
        if self.chans[c as usize].cur.is_none() {
            self.next_transfer(tl, c);
        }
    }

    fn next_transfer(&mut self, tl: &mut Timelines, c: u32) {
        let Some(r) = self.chans[c as usize].queue.pop_front() else {
            return;
        };
        let dur = tl.transfer_ns(r.bytes);
        tl.channel_busy_ns += dur;
        if r.txn != NONE {
            self.txns[r.txn as usize].st = St::Running;
        }
        self.chans[c as usize].cur = Some(r);
        self.push(self.now + dur, Ev::ChanEnd(c));
    }

    pub(super) fn channel_done(&mut self, tl: &mut Timelines, c: u32) {
        let r = self.chans[c as usize].cur.take().expect("a transfer");
        if r.die != NONE {
            self.finish_active(tl, r.die);
        } else {
            self.complete(tl, r.txn);
        }
        // Completing may already have started the next transfer (a dependent asked for the channel).
        if self.chans[c as usize].cur.is_none() {
            self.next_transfer(tl, c);
        }
    }

    /// A read is waiting for die `d`, which is busy: suspend its program or erase if the rules allow.
    fn maybe_suspend(&mut self, tl: &mut Timelines, d: u32) {
        let s = &self.susp;
        if !(s.program || s.erase) {
            return;
        }
        let die = &self.dies[d as usize];
        let a = die.active.as_ref().expect("active");
        let (allowed, suspend_us, min_left_us) = match a.kind {
            Kind::Program => (s.program, s.program_suspend_us, s.program_min_remaining_us),
            Kind::Erase => (s.erase, s.erase_suspend_us, s.erase_min_remaining_us),
            _ => return,
        };
        if !allowed
            || die.suspended.is_some()
            || a.urgent
            || a.suspensions >= s.max_per_operation
            || a.end.saturating_sub(self.now) < ns(min_left_us)
        {
            return;
        }
        let read_waiting = die.pending.iter().any(|&id| {
            let t = &self.txns[id as usize];
            t.st == St::Ready && t.class == Class::Read
        });
        if !read_waiting {
            return;
        }
        let now = self.now;
        let until = now + ns(suspend_us);
        let die = &mut self.dies[d as usize];
        let mut a = die.active.take().expect("active");
        let busy = now - a.seg_start;
        a.end -= now; // time left
        a.suspensions += 1;
        let kind = a.kind;
        die.suspended = Some(a);
        die.suspending_until = until;
        die.token += 1;
        let token = die.token;
        tl.array_busy_ns += busy;
        match kind {
            Kind::Program => self.counters.program_suspensions += 1,
            _ => self.counters.erase_suspensions += 1,
        }
        self.push(until, Ev::SuspendReady(d, token));
    }

    /// Resume die `d`'s suspended operation.
    fn resume(&mut self, d: u32) {
        let now = self.now;
        let resume = ns(self.susp.resume_us);
        let die = &mut self.dies[d as usize];
        let mut a = die.suspended.take().expect("suspended");
        a.seg_start = now;
        a.end += now + resume;
        let end = a.end;
        die.active = Some(a);
        die.token += 1;
        let token = die.token;
        self.push(end, Ev::DieEnd(d, token));
    }
}
