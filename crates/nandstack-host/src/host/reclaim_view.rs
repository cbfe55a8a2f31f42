//! The host as reclaim policies see it ([`crate::reclaim::ReclaimHost`]).

use nandstack_core::{Nanos, Result};

use super::{Ctx, Host, HostStats, Params};
use crate::vm::Vm;

impl crate::reclaim::ReclaimHost for Host {
    fn vm(&self) -> &Vm {
        &self.vm
    }
    fn vm_mut(&mut self) -> &mut Vm {
        &mut self.vm
    }
    fn stats_mut(&mut self) -> &mut HostStats {
        &mut self.stats
    }
    fn params(&self) -> &Params {
        &self.p
    }
    fn swap_usable(&self) -> u64 {
        self.swap.usable
    }
    fn swap_free_slots(&self) -> u64 {
        self.swap.free_slots()
    }
    fn swap_is_full(&self) -> bool {
        self.swap.is_full()
    }
    fn zswap_shrinker_counts(&self, m: u16) -> bool {
        self.store
            .zswap
            .as_ref()
            .is_some_and(|z| z.shrinker_counts(m))
    }
    fn wake_flusher(&mut self) {
        self.pc.wakeup = true;
    }
    fn read_locked(&self, f: u32, now: Nanos) -> bool {
        Host::read_locked(self, f, now)
    }
    fn folio_referenced(&mut self, f: u32) -> u32 {
        Host::folio_referenced(self, f)
    }
    fn prefetch_referenced(&self, batch: &[u32]) {
        Host::prefetch_referenced(self, batch)
    }
    fn evict_sync(&mut self, ctx: &mut Ctx, f: u32) -> Result<bool> {
        Host::evict_sync(self, ctx, f)
    }
    fn blk_start_plug(&mut self) {
        Host::blk_start_plug(self)
    }
    fn blk_finish_plug(&mut self, ctx: &Ctx) -> Result<()> {
        Host::blk_finish_plug(self, ctx)
    }
    fn process_completions(&mut self, now: Nanos) {
        Host::process_completions(self, now)
    }
    fn free_swap_cache(&mut self, f: u32, cpu: u16) -> bool {
        Host::free_swap_cache(self, f, cpu)
    }
    fn end_writeback(&mut self, f: u32, at: Nanos) {
        Host::end_writeback(self, f, at)
    }
    fn wait_writeback(&mut self, ctx: &mut Ctx, f: u32) -> Result<()> {
        Host::wait_writeback(self, ctx, f)
    }
    fn add_to_swap(&mut self, ctx: &mut Ctx, f: u32) -> bool {
        Host::add_to_swap(self, ctx, f)
    }
    fn try_to_unmap(&mut self, f: u32, now: Nanos) {
        Host::try_to_unmap(self, f, now)
    }
    fn pageout(&mut self, ctx: &mut Ctx, f: u32) -> Result<()> {
        Host::pageout(self, ctx, f)
    }
    fn apa_evict(&mut self, ctx: &mut Ctx, f: u32) -> Result<()> {
        Host::apa_evict(self, ctx, f)
    }
    fn remove_mapping(&mut self, f: u32, cpu: u16) {
        Host::remove_mapping(self, f, cpu)
    }
}
