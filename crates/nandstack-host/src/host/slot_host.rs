//! The host as a swap backend's own work sees it ([`SlotHost`]): ZNSwap's garbage collector runs in the
//! backend (`backend::znswap::kznsd`) and reaches the slot map, the swap cache and the page tables only
//! through this view, lent by [`Host::backend_service`] with the backend borrowed apart.

use nandstack_core::{Error, Nanos, Result};

use super::Host;
use crate::backend::{Dispatch, SlotHost, SwapPage};
use crate::block::BlockLayer;
use crate::host::SwapStore;
use crate::swap::{map_count, SlotFreed, SwapArea, MAP_CACHE};
use crate::vm::page::*;
use crate::vm::workingset::is_shadow;
use crate::vm::Vm;
use crate::zswap::Zswap;

/// The host's slots, pages and block layer, without the backend (which is running).
struct HostSlots<'a> {
    vm: &'a mut Vm,
    swap: &'a mut SwapArea,
    zswap: Option<&'a mut Zswap>,
    io: &'a mut BlockLayer,
}

/// A freed slot's listeners while the backend is lent out: zswap's entry goes first, then the backend
/// (as [`SwapStore`] tells them).
struct Listeners<'a, 'b> {
    zswap: Option<&'a mut Zswap>,
    backend: &'a mut (dyn SlotFreed + 'b),
}

impl SlotFreed for Listeners<'_, '_> {
    fn slot_freed(&mut self, slot: u32) {
        if let Some(z) = self.zswap.as_deref_mut() {
            z.invalidate(slot);
        }
        self.backend.slot_freed(slot);
    }
}

impl SlotHost for HostSlots<'_> {
    fn slot_map(&self) -> &[u8] {
        &self.swap.map
    }

    fn slot_owner(&self, slot: u32) -> (u32, u16) {
        let vpn = self.swap.owner[slot as usize];
        (vpn, self.vm.procs[self.vm.proc_of(vpn)].memcg)
    }

    fn drop_cached(&mut self, slot: u32, freed: &mut dyn SlotFreed) -> bool {
        if self.swap.map[slot as usize] != MAP_CACHE {
            return false;
        }
        let c = self.swap.cache[slot as usize];
        if c == NONE || is_shadow(c) {
            return false;
        }
        let fr = &self.vm.frames[c as usize];
        if !fr.has(F_MAPPED) || fr.has(F_WRITEBACK) {
            return false;
        }
        let mut to = Listeners {
            zswap: self.zswap.as_deref_mut(),
            backend: freed,
        };
        free_swap_cache(self.vm, self.swap, &mut to, c, 0)
    }

    fn move_slot(&mut self, from: u32, to: u32, freed: &mut dyn SlotFreed) -> Result<()> {
        // Only slots whose data the backend holds move: never a zswap entry.
        debug_assert!(!self.zswap.as_ref().is_some_and(|z| z.contains(from)));
        let mut to_ = Listeners {
            zswap: self.zswap.as_deref_mut(),
            backend: freed,
        };
        move_page(self.vm, self.swap, &mut to_, from, to)
    }

    fn with_io(
        &mut self,
        f: &mut dyn FnMut(&mut BlockLayer, &mut Dispatch) -> Result<()>,
    ) -> Result<()> {
        let memcgs = &mut self.vm.memcgs;
        let mut dispatch = |m, w, b, t| crate::host::throttle(memcgs, m, w, b, t);
        f(self.io, &mut dispatch)
    }
}

/// `folio_free_swap`: drop the swap-cache copy of frame `f` (its slot is freed, told to `freed`; the
/// frame is dirty). Refused while the page is under writeback or a PTE still references the slot.
pub(crate) fn free_swap_cache(
    vm: &mut Vm,
    swap: &mut SwapArea,
    freed: &mut dyn SlotFreed,
    f: u32,
    cpu: u16,
) -> bool {
    let fr = &vm.frames[f as usize];
    // An unmapped page whose slot only the swap cache holds (the old page of a `cow_copy` write
    // fault) would leave the swap cache and be no one's: reclaim frees it, with its slot.
    if !fr.has(F_SWAPCACHE) || fr.has(F_WRITEBACK) || !fr.has(F_MAPPED) {
        return false;
    }
    let slot = fr.key;
    if map_count(swap.map[slot as usize]) > 0 {
        return false;
    }
    swap.cache[slot as usize] = NONE;
    swap.put_cache(slot, cpu as usize, freed);
    let fr = &mut vm.frames[f as usize];
    fr.clear(F_SWAPCACHE);
    fr.key = NONE;
    fr.set(F_DIRTY);
    true
}

/// Move the page of slot `from` to slot `to`: slot state, swap-cache frame, page-table entry; `from`
/// is freed (told to `freed`).
fn move_page(
    vm: &mut Vm,
    swap: &mut SwapArea,
    freed: &mut dyn SlotFreed,
    from: u32,
    to: u32,
) -> Result<()> {
    let (f, t) = (from as usize, to as usize);
    let m = swap.map[f];
    if m == 0 || swap.map[t] != 0 {
        return Err(Error::Invariant(format!(
            "swap move {from} → {to}: source map {m:#x}, destination map {:#x}",
            swap.map[t]
        )));
    }
    let (c, owner) = (swap.cache[f], swap.owner[f]);
    if map_count(m) > 0 && (owner == NONE || vm.ptes[owner as usize] != pte_swap(from)) {
        return Err(Error::Invariant(format!(
            "swap move {from} → {to}: the owner {owner}'s PTE does not hold slot {from}"
        )));
    }
    swap.move_slot(from, to, freed);
    if c != NONE && !is_shadow(c) {
        vm.frames[c as usize].key = to;
    }
    if map_count(m) > 0 {
        vm.ptes[owner as usize] = pte_swap(to);
    }
    Ok(())
}

impl Host {
    /// The swap backend's own work ([`crate::backend::SwapBackend::service`]) at `now`: before a swap
    /// write of `want` (ZNSwap: free zones for the swap-zones that fill up; when there are too few the
    /// submission waits for the GC — ZNSwap's suspend), or what is due (`None`: zone resets, GC
    /// steps). The caller refreshes the pages' slots afterwards (the GC may have moved some).
    pub(crate) fn backend_service(
        &mut self,
        now: Nanos,
        want: Option<(&[SwapPage], u16)>,
    ) -> Result<()> {
        let (backend, mut slots) = self.lend();
        backend.service(&mut slots, now, want)
    }

    /// The backend, and the rest of the host as its [`SlotHost`].
    fn lend(&mut self) -> (&mut dyn crate::backend::SwapBackend, HostSlots<'_>) {
        let Host {
            vm,
            swap,
            store: SwapStore { backend, zswap },
            io,
            ..
        } = self;
        let slots = HostSlots {
            vm,
            swap,
            zswap: zswap.as_deref_mut(),
            io,
        };
        (backend.as_mut(), slots)
    }

    /// Apply the slot relocations the backend reports (after a write).
    pub(crate) fn apply_swap_moves(&mut self) -> Result<()> {
        let mut moves = Vec::new();
        self.store.backend.take_moves(&mut moves);
        for (from, to) in moves {
            // Only slots whose data the backend holds move: never a zswap entry.
            debug_assert!(!self.store.zswap.as_ref().is_some_and(|z| z.contains(from)));
            move_page(&mut self.vm, &mut self.swap, &mut self.store, from, to)?;
        }
        Ok(())
    }
}

#[cfg(test)]
impl Host {
    /// The ZNSwap backend, if that is the swap backend.
    pub(crate) fn zns(&mut self) -> Option<&mut crate::backend::ZnSwap> {
        self.store.backend.as_any_mut()?.downcast_mut()
    }

    /// `f` on the ZNSwap backend with the host's slots lent to it.
    fn with_zns<R>(
        &mut self,
        f: impl FnOnce(&mut crate::backend::ZnSwap, &mut dyn SlotHost) -> R,
    ) -> R {
        let (backend, mut slots) = self.lend();
        let zn = backend
            .as_any_mut()
            .and_then(|b| b.downcast_mut::<crate::backend::ZnSwap>())
            .expect("the ZNSwap backend");
        f(zn, &mut slots)
    }

    /// Collect full zone `z` now: the GC's steps back to back, whatever the clock.
    pub(crate) fn zns_collect(&mut self, z: u32) -> Result<()> {
        self.with_zns(|zn, host| {
            assert_eq!(
                zn.tbl.zones[z as usize].state,
                crate::backend::znswap::ZoneUse::Full
            );
            zn.take_victim(z);
            while zn.gc.victim.is_some() {
                zn.step(host, true)?;
            }
            Ok(())
        })
    }

    /// One GC step now, whatever the clock.
    pub(crate) fn zns_step_now(&mut self) -> Result<bool> {
        self.with_zns(|zn, host| zn.step(host, true))
    }

    /// The backend's due work at `now` (as the event loop's tick).
    pub(crate) fn swap_backend_tick(&mut self, now: Nanos) -> Result<()> {
        self.backend_service(now, None)
    }
}
