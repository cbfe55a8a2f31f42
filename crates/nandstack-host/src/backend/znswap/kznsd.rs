//! kznsd, ZNGC's driver: the garbage collector's steps (`gc.rs` describes the mechanism and holds its
//! state), run by [`SwapBackend::service`] on the host's slots through [`SlotHost`] — the slot map tells
//! which slots are garbage, the swap cache which pages are resident, and the host moves a page's slot
//! after its copy. The backend never sees the host itself.

use nandstack_core::{Error, Nanos, Result};
use nandstack_device::{Command, ZoneCommand};

use super::gc::{out_of_zones, Item, Phase};
use super::{policy, ZnSwap, ZoneUse};
use crate::backend::{FreedTo, SlotHost, SwapPage};
use crate::vm::page::NONE;

/// kznsd re-checks the watermarks at least this often while it sleeps, ns (`schedule_timeout(HZ/10)`).
const RECHECK_NS: Nanos = Nanos(100_000_000);

impl ZnSwap {
    /// Resets due, then GC steps: those whose time has come (`want` = None), or as many as a write of
    /// `want` needs to find its new zones free (suspend).
    pub(crate) fn kznsd(
        &mut self,
        host: &mut dyn SlotHost,
        now: Nanos,
        want: Option<(&[SwapPage], u16)>,
    ) -> Result<()> {
        self.resets(host, now)?;
        let mut suspended = false;
        loop {
            let need = want.map_or(0, |(p, cpu)| self.zones_needed(p, cpu));
            let sync = self.tbl.free < need;
            if sync {
                if !suspended {
                    suspended = true;
                    self.stats.suspended_writes += 1;
                }
                self.stats.suspended_gc_steps += 1;
            } else {
                if !self.gc.running && self.gc.victim.is_none() && !self.wake(host, now) {
                    break;
                }
                if self.gc.clock > now {
                    break;
                }
            }
            if !self.step(host, sync)? {
                if sync {
                    return Err(out_of_zones(self));
                }
                break;
            }
            let t = if sync { now.max(self.gc.clock) } else { now };
            self.resets(host, t)?;
        }
        Ok(())
    }

    /// `check_low_wmark`: start a GC round when free zones are below the low watermark and there is
    /// something to reclaim. Looks when a zone was taken or a while has passed since the last look.
    fn wake(&mut self, host: &mut dyn SlotHost, now: Nanos) -> bool {
        if self.tbl.free >= self.low {
            return false;
        }
        let g = &self.gc;
        let due = self.tbl.taken != g.taken_seen
            || (self.changes != g.changes_seen && now >= g.last_check_ns + RECHECK_NS);
        if !due {
            return false;
        }
        let stats = self.zone_stats(host.slot_map());
        self.gc.taken_seen = self.tbl.taken;
        self.gc.changes_seen = self.changes;
        self.gc.last_check_ns = now;
        if ZnSwap::potential(&stats, self.cap()) < 2 {
            return false;
        }
        self.gc.running = true;
        self.gc.wakeups += 1;
        self.gc.clock = self.gc.clock.max(now);
        true
    }

    /// One GC step (a phase of a batch, or finishing a victim); false when there is nothing to do.
    pub(crate) fn step(&mut self, host: &mut dyn SlotHost, sync: bool) -> Result<bool> {
        match self.gc.phase {
            Phase::Idle => {
                if self.gc.victim.is_none() && !self.pick_victim(host, sync) {
                    return Ok(false);
                }
                self.gather(host);
                if self.gc.batch.is_empty() {
                    self.finish_victim(host)?;
                } else {
                    self.read_batch(host)?;
                }
            }
            Phase::Read => self.write_batch(host)?,
            Phase::Write => self.activate(host)?,
        }
        Ok(true)
    }

    /// Choose the next victim (`find_victim_zone`); in the background the round ends at the high
    /// watermark or when less than two zones' worth is reclaimable.
    fn pick_victim(&mut self, host: &mut dyn SlotHost, sync: bool) -> bool {
        let stats = self.zone_stats(host.slot_map());
        if !sync && (self.tbl.free >= self.high || ZnSwap::potential(&stats, self.cap()) < 2) {
            self.gc.running = false;
            return false;
        }
        let v = self
            .policy
            .victim(&stats, self.cap(), self.streams)
            .filter(|&v| stats[v as usize].reclaimable)
            .or_else(|| policy::greedy_victim(&stats));
        let Some(v) = v else {
            self.gc.running = false;
            return false;
        };
        self.take_victim(v);
        true
    }

    /// Zone `v` becomes the victim, traversed from its first slot.
    pub(crate) fn take_victim(&mut self, v: u32) {
        self.tbl.zones[v as usize].state = ZoneUse::Victim;
        self.gc.victim = Some(v);
        self.gc.pos = 0;
        self.gc.victims += 1;
    }

    /// Drop the swap-cache copy of `slot` if only the swap cache holds it and its page is resident and
    /// mapped (the GC does not copy it). True when dropped.
    fn drop_cached(&mut self, host: &mut dyn SlotHost, slot: u32) -> bool {
        if !host.drop_cached(slot, &mut FreedTo(self)) {
            return false;
        }
        self.gc.cache_dropped += 1;
        true
    }

    /// Gather: walk the victim from where the last batch stopped; drop swap-cache-only slots, collect
    /// the slots in use.
    fn gather(&mut self, host: &mut dyn SlotHost) {
        let v = self.gc.victim.expect("a victim");
        let (cap, limit, s0) = (self.cap(), self.batch_pages as usize, self.slot_of(v, 0));
        let mut pos = self.gc.pos;
        let mut batch = std::mem::take(&mut self.gc.batch);
        batch.clear();
        while pos < cap && batch.len() < limit {
            let slot = s0 + pos;
            pos += 1;
            if host.slot_map()[slot as usize] == 0 || self.drop_cached(host, slot) {
                continue;
            }
            let (vpn, memcg) = host.slot_owner(slot);
            batch.push(Item {
                src: slot,
                dst: NONE,
                vpn,
                memcg,
            });
        }
        self.gc.pos = pos;
        self.gc.batch = batch;
    }

    /// Read the batch with its metadata at the GC clock.
    fn read_batch(&mut self, host: &mut dyn SlotHost) -> Result<()> {
        let pages: Vec<SwapPage> = self
            .gc
            .batch
            .iter()
            .map(|it| SwapPage {
                slot: it.src,
                vpn: it.vpn,
                memcg: it.memcg,
            })
            .collect();
        let acct = self.accounting;
        let mut done = Vec::with_capacity(pages.len());
        let (clock, comm) = (self.gc.clock, self.comm);
        host.with_io(&mut |io, throttle| {
            let mut dispatch = |m: u16, b: u64, t: Nanos| {
                if acct {
                    throttle(m, false, b, t)
                } else {
                    t
                }
            };
            self.read_pages(io, &pages, clock, comm, &mut dispatch, &mut done)
        })?;
        self.gc.clock = done.iter().copied().fold(clock, Nanos::max);
        self.gc.pages_read += pages.len() as u64;
        for p in &pages {
            self.account_gc(if acct { p.memcg } else { 0 }, false, 1);
        }
        self.gc.phase = Phase::Read;
        self.gc.batches += 1;
        Ok(())
    }

    /// Write: re-examine each page, append the ones still in use to the victim's swap-zone (or the GC
    /// zone) at the reads' completion.
    fn write_batch(&mut self, host: &mut dyn SlotHost) -> Result<()> {
        let mut batch = std::mem::take(&mut self.gc.batch);
        let mut keep = Vec::with_capacity(batch.len());
        for (i, it) in batch.iter_mut().enumerate() {
            it.dst = NONE;
            if host.slot_map()[it.src as usize] != 0 && !self.drop_cached(host, it.src) {
                keep.push(i);
            }
        }
        let v = self.gc.victim.expect("a victim");
        let stream = self.tbl.zones[v as usize].stream;
        let clock = self.gc.clock;
        let mut end = clock;
        host.with_io(&mut |io, throttle| {
            self.append_kept(io, throttle, stream, &mut batch, &keep, &mut end)
        })?;
        self.gc.pages_written += keep.len() as u64;
        self.gc.clock = end;
        self.gc.batch = batch;
        self.gc.phase = Phase::Write;
        Ok(())
    }

    /// Append the pages `keep` of `batch` to swap-zone `stream`'s GC destinations from the GC clock;
    /// each page's `dst` is its copy's slot; `end` the last completion.
    fn append_kept(
        &mut self,
        io: &mut crate::block::BlockLayer,
        throttle: &mut crate::backend::Dispatch,
        stream: u32,
        batch: &mut [Item],
        keep: &[usize],
        end: &mut Nanos,
    ) -> Result<()> {
        let (acct, comm, clock) = (self.accounting, self.comm, self.gc.clock);
        let mut metas = Vec::new();
        let mut k = 0;
        while k < keep.len() {
            let z = match self.tbl.gc_destination(stream) {
                Some(z) => z,
                None => return Err(out_of_zones(self)),
            };
            let n = (keep.len() - k)
                .min(self.tbl.room(z) as usize)
                .min(io.max_req_pages as usize);
            metas.clear();
            metas.extend(keep[k..k + n].iter().map(|&i| self.meta_word(batch[i].vpn)));
            let m = batch[keep[k]].memcg;
            let ready = clock.max(self.tbl.zones[z as usize].ready_ns);
            let start = if acct {
                throttle(m, true, n as u64 * 4096, ready)
            } else {
                ready
            };
            let (off, d) = self.append(io, z, &metas, start, comm)?;
            for (j, &i) in keep[k..k + n].iter().enumerate() {
                batch[i].dst = self.slot_of(z, off + j as u32);
                self.account_gc(if acct { batch[i].memcg } else { 0 }, true, 1);
            }
            *end = (*end).max(d);
            k += n;
        }
        Ok(())
    }

    /// Activate: move each page still in use to its copy; a copy of a slot freed meanwhile is garbage.
    fn activate(&mut self, host: &mut dyn SlotHost) -> Result<()> {
        let batch = std::mem::take(&mut self.gc.batch);
        for it in &batch {
            if it.dst == NONE {
                continue;
            }
            if host.slot_map()[it.src as usize] == 0 {
                let (z, _) = self.zone_of(it.dst).expect("a zone slot");
                self.tbl.invalidate(z);
                self.changes += 1;
                self.gc.pages_freed_in_flight += 1;
            } else {
                host.move_slot(it.src, it.dst, &mut FreedTo(self))?;
                self.gc.pages_moved += 1;
            }
        }
        self.gc.clock += batch.len() as u64 * self.gc_page_ns;
        self.gc.batch = batch;
        self.gc.batch.clear();
        self.gc.phase = Phase::Idle;
        Ok(())
    }

    /// The victim has been traversed: every slot is free; reset it at the GC clock.
    fn finish_victim(&mut self, host: &mut dyn SlotHost) -> Result<()> {
        let v = self.gc.victim.take().expect("a victim");
        self.gc.pos = 0;
        let at = self.gc.clock;
        self.reset_zone(host, v, at)?;
        self.gc.resets += 1;
        Ok(())
    }

    /// Reset the zones whose every slot became garbage, at `now`.
    fn resets(&mut self, host: &mut dyn SlotHost, now: Nanos) -> Result<()> {
        while let Some(z) = self.tbl.to_reset.pop() {
            self.reset_zone(host, z, now)?;
            self.stats.free_resets += 1;
        }
        Ok(())
    }

    /// Reset zone `z` on the device at `at`; it is free (or the emergency zone) from the completion.
    fn reset_zone(&mut self, host: &mut dyn SlotHost, z: u32, at: Nanos) -> Result<()> {
        let s0 = self.slot_of(z, 0) as usize;
        let cap = self.cap() as usize;
        if let Some(o) = host.slot_map()[s0..s0 + cap].iter().position(|&m| m != 0) {
            return Err(Error::Invariant(format!(
                "ZNSwap: zone {z} reset with slot {o} still in use (a live page would be lost)"
            )));
        }
        let mut done = at;
        host.with_io(&mut |io, _| {
            let c = io
                .dev
                .submit(at, Command::Zone(ZoneCommand::Reset { zone: z }))?;
            done = c.done;
            Ok(())
        })?;
        self.tbl.reset(z, done.max(at));
        self.changes += 1;
        Ok(())
    }
}
