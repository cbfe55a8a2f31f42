//! ZNGC's driver: the host runs ZNSwap's garbage collector (`backend::znswap`'s `Gc` holds its
//! state; the mechanism is described there) because it works on the host's own state — the slot map,
//! the swap cache and the page tables.

use super::Host;
use crate::backend::znswap::gc::{out_of_zones, Item, Phase};
use crate::backend::znswap::{policy, ZnSwap, ZoneUse};
use crate::backend::SwapPage;
use crate::swap::{map_count, MAP_CACHE};
use crate::vm::page::*;
use crate::vm::workingset::is_shadow;
use nandstack_core::{Error, Nanos, Result};
use nandstack_device::{Command, ZoneCommand};

/// kznsd re-checks the watermarks at least this often while it sleeps, ns (`schedule_timeout(HZ/10)`).
const RECHECK_NS: u64 = 100_000_000;

/// The ZNSwap backend behind `backend` (the GC's steps run only with ZNSwap as the swap backend); the one
/// place the host reaches through the backend trait to ZNSwap (#34: a narrow driver trait is still to do).
fn znswap_of(backend: &mut dyn crate::backend::SwapBackend) -> &mut ZnSwap {
    backend
        .as_any_mut()
        .and_then(|b| b.downcast_mut::<ZnSwap>())
        .expect("the ZNSwap backend")
}

impl Host {
    /// The ZNSwap backend, if that is the swap backend.
    pub(crate) fn zns(&mut self) -> Option<&mut ZnSwap> {
        self.store.backend.as_any_mut()?.downcast_mut::<ZnSwap>()
    }

    fn zn(&mut self) -> &mut ZnSwap {
        znswap_of(self.store.backend.as_mut())
    }

    /// Before a swap write of `pages` from `cpu` at `now`: make room the backend needs (ZNSwap: free
    /// zones for the swap-zones that fill up; when there are too few the submission waits for the GC —
    /// ZNSwap's suspend). The host refreshes the pages' slots afterwards (the GC may have moved some).
    pub(crate) fn swap_write_prepare(
        &mut self,
        now: u64,
        cpu: u16,
        pages: &[SwapPage],
    ) -> Result<()> {
        if self.zns().is_none() {
            return Ok(());
        }
        self.zns_service(now, Some((pages, cpu)))
    }

    /// The backend's background work up to `now` (ZNSwap: zone resets and GC steps that are due).
    pub(crate) fn swap_backend_tick(&mut self, now: u64) -> Result<()> {
        if self.zns().is_none() {
            return Ok(());
        }
        self.zns_service(now, None)
    }

    /// Apply the slot relocations the backend reports (after a write or a GC activation).
    pub(crate) fn apply_swap_moves(&mut self) -> Result<()> {
        let mut moves = Vec::new();
        self.store.backend.take_moves(&mut moves);
        for (from, to) in moves {
            self.apply_move(from, to)?;
        }
        Ok(())
    }

    /// Move the page of slot `from` to slot `to`: slot state, swap-cache frame, page-table entry.
    fn apply_move(&mut self, from: u32, to: u32) -> Result<()> {
        let (f, t) = (from as usize, to as usize);
        let m = self.swap.map[f];
        if m == 0 || self.swap.map[t] != 0 {
            return Err(Error::Invariant(format!(
                "swap move {from} → {to}: source map {m:#x}, destination map {:#x}",
                self.swap.map[t]
            )));
        }
        let (c, owner) = (self.swap.cache[f], self.swap.owner[f]);
        if map_count(m) > 0 && (owner == NONE || self.vm.ptes[owner as usize] != pte_swap(from)) {
            return Err(Error::Invariant(format!(
                "swap move {from} → {to}: the owner {owner}'s PTE does not hold slot {from}"
            )));
        }
        // Only slots whose data the backend holds move: never a zswap entry.
        debug_assert!(!self.store.zswap.as_ref().is_some_and(|z| z.contains(from)));
        self.swap.move_slot(from, to, &mut self.store);
        if c != NONE && !is_shadow(c) {
            self.vm.frames[c as usize].key = to;
        }
        if map_count(m) > 0 {
            self.vm.ptes[owner as usize] = pte_swap(to);
        }
        Ok(())
    }

    /// Every zone's statistics (swap-cache-only slots read from the slot map).
    fn zns_zone_stats(&mut self) -> Vec<crate::backend::znswap::policy::ZoneStat> {
        let map = &self.swap.map;
        znswap_of(self.store.backend.as_mut()).zone_stats(map)
    }

    fn memcg_of(&self, vpn: u32) -> u16 {
        self.vm.procs[self.vm.proc_of(vpn)].memcg
    }

    /// Resets due, then GC steps: those whose time has come (`want` = None), or as many as a write of
    /// `want` needs to find its new zones free (suspend).
    fn zns_service(&mut self, now: u64, want: Option<(&[SwapPage], u16)>) -> Result<()> {
        self.zns_resets(now)?;
        let mut suspended = false;
        loop {
            let zn = self.zn();
            let need = want.map_or(0, |(p, cpu)| zn.zones_needed(p, cpu));
            let sync = zn.tbl.free < need;
            if sync {
                if !suspended {
                    suspended = true;
                    zn.stats.suspended_writes += 1;
                }
                zn.stats.suspended_gc_steps += 1;
            } else {
                if !zn.gc.running && zn.gc.victim.is_none() && !self.zns_wake(now) {
                    break;
                }
                if self.zn().gc.clock > now {
                    break;
                }
            }
            if !self.zns_step(sync)? {
                if sync {
                    return Err(out_of_zones(self.zn()));
                }
                break;
            }
            let t = if sync {
                now.max(self.zn().gc.clock)
            } else {
                now
            };
            self.zns_resets(t)?;
        }
        Ok(())
    }

    /// `check_low_wmark`: start a GC round when free zones are below the low watermark and there is
    /// something to reclaim. Looks when a zone was taken or a while has passed since the last look.
    fn zns_wake(&mut self, now: u64) -> bool {
        let zn = self.zn();
        if zn.tbl.free >= zn.low {
            return false;
        }
        let g = &zn.gc;
        let due = zn.tbl.taken != g.taken_seen
            || (zn.changes != g.changes_seen && now >= g.last_check_ns + RECHECK_NS);
        if !due {
            return false;
        }
        let stats = self.zns_zone_stats();
        let zn = self.zn();
        zn.gc.taken_seen = zn.tbl.taken;
        zn.gc.changes_seen = zn.changes;
        zn.gc.last_check_ns = now;
        if ZnSwap::potential(&stats, zn.cap()) < 2 {
            return false;
        }
        zn.gc.running = true;
        zn.gc.wakeups += 1;
        zn.gc.clock = zn.gc.clock.max(now);
        true
    }

    /// One GC step (a phase of a batch, or finishing a victim); false when there is nothing to do.
    fn zns_step(&mut self, sync: bool) -> Result<bool> {
        let zn = self.zn();
        match zn.gc.phase {
            Phase::Idle => {
                if zn.gc.victim.is_none() && !self.zns_pick_victim(sync) {
                    return Ok(false);
                }
                self.zns_gather();
                if self.zn().gc.batch.is_empty() {
                    self.zns_finish_victim()?;
                } else {
                    self.zns_read_batch()?;
                }
            }
            Phase::Read => self.zns_write_batch()?,
            Phase::Write => self.zns_activate()?,
        }
        Ok(true)
    }

    /// Choose the next victim (`find_victim_zone`); in the background the round ends at the high
    /// watermark or when less than two zones' worth is reclaimable.
    fn zns_pick_victim(&mut self, sync: bool) -> bool {
        let stats = self.zns_zone_stats();
        let zn = self.zn();
        if !sync && (zn.tbl.free >= zn.high || ZnSwap::potential(&stats, zn.cap()) < 2) {
            zn.gc.running = false;
            return false;
        }
        let v = zn
            .policy
            .victim(&stats, zn.cap(), zn.streams)
            .filter(|&v| stats[v as usize].reclaimable)
            .or_else(|| policy::greedy_victim(&stats));
        let Some(v) = v else {
            zn.gc.running = false;
            return false;
        };
        zn.tbl.zones[v as usize].state = ZoneUse::Victim;
        zn.gc.victim = Some(v);
        zn.gc.pos = 0;
        zn.gc.victims += 1;
        true
    }

    /// Drop the swap-cache copy of a resident, mapped page whose only reference is the swap cache
    /// (the GC does not copy it). True when dropped.
    fn zns_drop_cached(&mut self, slot: u32) -> bool {
        if self.swap.map[slot as usize] != MAP_CACHE {
            return false;
        }
        let c = self.swap.cache[slot as usize];
        if c == NONE || is_shadow(c) {
            return false;
        }
        let fr = &self.vm.frames[c as usize];
        if !fr.has(F_MAPPED) || fr.has(F_WRITEBACK) || !self.free_swap_cache(c, 0) {
            return false;
        }
        self.zn().gc.cache_dropped += 1;
        true
    }

    /// Gather: walk the victim from where the last batch stopped; drop swap-cache-only slots, collect
    /// the slots in use.
    fn zns_gather(&mut self) {
        let zn = self.zn();
        let v = zn.gc.victim.expect("a victim");
        let (cap, limit, s0) = (zn.cap(), zn.batch_pages as usize, zn.slot_of(v, 0));
        let mut pos = zn.gc.pos;
        let mut batch = std::mem::take(&mut zn.gc.batch);
        batch.clear();
        while pos < cap && batch.len() < limit {
            let slot = s0 + pos;
            pos += 1;
            if self.swap.map[slot as usize] == 0 || self.zns_drop_cached(slot) {
                continue;
            }
            let vpn = self.swap.owner[slot as usize];
            batch.push(Item {
                src: slot,
                dst: NONE,
                vpn,
                memcg: self.memcg_of(vpn),
            });
        }
        let zn = self.zn();
        zn.gc.pos = pos;
        zn.gc.batch = batch;
    }

    /// Read the batch with its metadata at the GC clock.
    fn zns_read_batch(&mut self) -> Result<()> {
        let Host { store, io, vm, .. } = self;
        let zn = znswap_of(store.backend.as_mut());
        let pages: Vec<SwapPage> = zn
            .gc
            .batch
            .iter()
            .map(|it| SwapPage {
                slot: it.src,
                vpn: it.vpn,
                memcg: it.memcg,
            })
            .collect();
        let acct = zn.accounting;
        let memcgs = &mut vm.memcgs;
        let mut dispatch = |m: u16, b: u64, t: u64| {
            if acct {
                crate::host::throttle(memcgs, m, false, b, t)
            } else {
                t
            }
        };
        let mut done = Vec::with_capacity(pages.len());
        let (clock, comm) = (zn.gc.clock, zn.comm);
        zn.read_pages(io, &pages, clock, comm, &mut dispatch, &mut done)?;
        zn.gc.clock = done.iter().copied().fold(clock, u64::max);
        zn.gc.pages_read += pages.len() as u64;
        for p in &pages {
            zn.account_gc(if acct { p.memcg } else { 0 }, false, 1);
        }
        zn.gc.phase = Phase::Read;
        zn.gc.batches += 1;
        Ok(())
    }

    /// Write: re-examine each page, append the ones still in use to the victim's swap-zone (or the GC
    /// zone) at the reads' completion.
    fn zns_write_batch(&mut self) -> Result<()> {
        let mut batch = std::mem::take(&mut self.zn().gc.batch);
        let mut keep = Vec::with_capacity(batch.len());
        for (i, it) in batch.iter_mut().enumerate() {
            it.dst = NONE;
            if self.swap.map[it.src as usize] != 0 && !self.zns_drop_cached(it.src) {
                keep.push(i);
            }
        }
        let Host { store, io, vm, .. } = self;
        let zn = znswap_of(store.backend.as_mut());
        let v = zn.gc.victim.expect("a victim");
        let stream = zn.tbl.zones[v as usize].stream;
        let (acct, comm, clock) = (zn.accounting, zn.comm, zn.gc.clock);
        let mut end = clock;
        let mut metas = Vec::new();
        let mut k = 0;
        while k < keep.len() {
            let z = match zn.tbl.gc_destination(stream) {
                Some(z) => z,
                None => return Err(out_of_zones(zn)),
            };
            let n = (keep.len() - k)
                .min(zn.tbl.room(z) as usize)
                .min(io.max_req_pages as usize);
            metas.clear();
            metas.extend(keep[k..k + n].iter().map(|&i| zn.meta_word(batch[i].vpn)));
            let m = batch[keep[k]].memcg;
            let ready = clock.max(zn.tbl.zones[z as usize].ready_ns);
            let start = if acct {
                crate::host::throttle(&mut vm.memcgs, m, true, n as u64 * 4096, ready)
            } else {
                ready
            };
            let (off, d) = zn.append(io, z, &metas, start, comm)?;
            for (j, &i) in keep[k..k + n].iter().enumerate() {
                batch[i].dst = zn.slot_of(z, off + j as u32);
                zn.account_gc(if acct { batch[i].memcg } else { 0 }, true, 1);
            }
            end = end.max(d);
            k += n;
        }
        zn.gc.pages_written += keep.len() as u64;
        zn.gc.clock = end;
        zn.gc.batch = batch;
        zn.gc.phase = Phase::Write;
        Ok(())
    }

    /// Activate: move each page still in use to its copy; a copy of a slot freed meanwhile is garbage.
    fn zns_activate(&mut self) -> Result<()> {
        let batch = std::mem::take(&mut self.zn().gc.batch);
        for it in &batch {
            if it.dst == NONE {
                continue;
            }
            if self.swap.map[it.src as usize] == 0 {
                let zn = self.zn();
                let (z, _) = zn.zone_of(it.dst).expect("a zone slot");
                zn.tbl.invalidate(z);
                zn.changes += 1;
                zn.gc.pages_freed_in_flight += 1;
            } else {
                self.apply_move(it.src, it.dst)?;
                self.zn().gc.pages_moved += 1;
            }
        }
        let zn = self.zn();
        zn.gc.clock += batch.len() as u64 * zn.gc_page_ns;
        zn.gc.batch = batch;
        zn.gc.batch.clear();
        zn.gc.phase = Phase::Idle;
        Ok(())
    }

    /// The victim has been traversed: every slot is free; reset it at the GC clock.
    fn zns_finish_victim(&mut self) -> Result<()> {
        let zn = self.zn();
        let v = zn.gc.victim.take().expect("a victim");
        zn.gc.pos = 0;
        let at = zn.gc.clock;
        self.zns_reset_zone(v, at)?;
        self.zn().gc.resets += 1;
        Ok(())
    }

    /// Reset the zones whose every slot became garbage, at `now`.
    fn zns_resets(&mut self, now: u64) -> Result<()> {
        while let Some(z) = self.zn().tbl.to_reset.pop() {
            self.zns_reset_zone(z, now)?;
            self.zn().stats.free_resets += 1;
        }
        Ok(())
    }

    /// Reset zone `z` on the device at `at`; it is free (or the emergency zone) from the completion.
    fn zns_reset_zone(&mut self, z: u32, at: u64) -> Result<()> {
        let zn = self.zn();
        let s0 = zn.slot_of(z, 0) as usize;
        let cap = zn.cap() as usize;
        if let Some(o) = self.swap.map[s0..s0 + cap].iter().position(|&m| m != 0) {
            return Err(Error::Invariant(format!(
                "ZNSwap: zone {z} reset with slot {o} still in use (a live page would be lost)"
            )));
        }
        let done = self
            .io
            .dev
            .submit(Nanos(at), Command::Zone(ZoneCommand::Reset { zone: z }))?;
        let zn = self.zn();
        zn.tbl.reset(z, done.done.0.max(at));
        zn.changes += 1;
        Ok(())
    }
}

#[cfg(test)]
impl Host {
    /// Collect full zone `z` now: the GC's steps back to back, whatever the clock.
    pub(crate) fn zns_collect(&mut self, z: u32) -> Result<()> {
        let zn = self.zn();
        assert_eq!(zn.tbl.zones[z as usize].state, ZoneUse::Full);
        zn.tbl.zones[z as usize].state = ZoneUse::Victim;
        zn.gc.victim = Some(z);
        zn.gc.pos = 0;
        zn.gc.victims += 1;
        while self.zn().gc.victim.is_some() {
            self.zns_step(true)?;
        }
        Ok(())
    }

    /// One GC step now, whatever the clock.
    pub(crate) fn zns_step_now(&mut self) -> Result<bool> {
        self.zns_step(true)
    }
}
