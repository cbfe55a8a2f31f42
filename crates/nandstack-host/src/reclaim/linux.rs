//! Linux's classic split-LRU reclaim (`mm/vmscan.c` without MGLRU): the priority loop of
//! `do_try_to_free_pages` / `balance_pgdat`, `prepare_scan_control` (deactivation when refaults were
//! activated or the inactive list is low, cache-trim mode, tiny file cache), `get_scan_count`
//! (swappiness and reclaim-cost balance), `shrink_lruvec` (SWAP_CLUSTER_MAX batches over the four
//! lists, proportional cut-off once the target is met, rebalancing the anon lists) and
//! `shrink_active_list`. The inactive list and per-page decisions are in `linux_shrink.rs`.

use nandstack_core::{Nanos, Result};

use super::ReclaimHost;
use super::{ReclaimPolicy, ReclaimRequest};
use crate::vm::counters::Ctx;
use crate::vm::page::*;

/// `DEF_PRIORITY`: the first pass scans 1/4096 of each list.
pub const DEF_PRIORITY: u32 = 12;
/// `MAX_SWAPPINESS`.
const MAX_SWAPPINESS: u64 = 200;

/// `struct scan_control`.
pub(super) struct Sc {
    pub target: Option<u16>,
    pub nr_to_reclaim: u64,
    pub reclaimed: u64,
    pub priority: u32,
    pub may_deactivate: [bool; 2],
    pub force_deactivate: bool,
    pub skipped_deactivate: bool,
    pub cache_trim_mode: bool,
    pub file_is_tiny: bool,
    pub anon_cost: u64,
    pub file_cost: u64,
    pub kswapd: bool,
    pub may_swap: bool,
}

#[derive(Default)]
pub struct LinuxReclaim {
    pub(super) batch: Vec<u32>,
    pub(super) ret: Vec<u32>,
}

impl LinuxReclaim {
    pub fn new() -> LinuxReclaim {
        LinuxReclaim::default()
    }
}

/// Size of `list` for the target: one cgroup, or all of them (the root lruvec counts its children).
pub(super) fn lru_size<H: ReclaimHost + ?Sized>(h: &H, target: Option<u16>, list: u8) -> u64 {
    match target {
        Some(m) => h.vm().memcgs[m as usize].lru_len(list),
        None => h.vm().memcgs.iter().map(|m| m.lru_len(list)).sum(),
    }
}

/// `inactive_is_low`: inactive × ratio < active, ratio = √(10 × GiB of the two lists) (1 below 1 GiB),
/// on the sizes as last flushed ([`crate::vm::vmstats`]).
pub(super) fn inactive_is_low<H: ReclaimHost + ?Sized>(
    h: &H,
    target: Option<u16>,
    inactive: u8,
) -> bool {
    let s = h.vm().lruvec_stats(target.unwrap_or(0));
    let i = s.lru[inactive as usize];
    let a = s.lru[inactive as usize + 1];
    let gb = (i + a) >> 18;
    let ratio = if gb > 0 {
        ((10 * gb) as f64).sqrt() as u64
    } else {
        1
    };
    i * ratio < a
}

impl LinuxReclaim {
    /// `prepare_scan_control`.
    fn prepare<H: ReclaimHost + ?Sized>(&self, h: &H, sc: &mut Sc) {
        let t = sc.target;
        let root = t.unwrap_or(0) as usize;
        sc.anon_cost = h.vm().memcgs[root].anon_cost;
        sc.file_cost = h.vm().memcgs[root].file_cost;
        // The workingset and list figures as last flushed (`lruvec_page_state`).
        let flushed = h.vm().lruvec_stats(root as u16);
        if sc.force_deactivate {
            sc.may_deactivate = [true, true];
        } else {
            let act = flushed.activations;
            let snap = h.vm().memcgs[root].refaults_snapshot;
            sc.may_deactivate = [
                act[0] != snap[0] || inactive_is_low(h, t, LRU_INACTIVE_ANON),
                act[1] != snap[1] || inactive_is_low(h, t, LRU_INACTIVE_FILE),
            ];
        }
        sc.cache_trim_mode =
            (flushed.lru[LRU_INACTIVE_FILE as usize] >> sc.priority) > 0 && !sc.may_deactivate[1];
        // Global reclaim reads the node's counters here, which are exact.
        sc.file_is_tiny = if t.is_none() {
            let free = h.vm().free_pages();
            let file = lru_size(h, t, LRU_INACTIVE_FILE) + lru_size(h, t, LRU_ACTIVE_FILE);
            let anon = lru_size(h, t, LRU_INACTIVE_ANON);
            file + free <= h.vm().wmark.2 && !sc.may_deactivate[0] && (anon >> sc.priority) > 0
        } else {
            false
        };
    }

    /// `get_scan_count`: pages to scan from each list of cgroup `m` at this priority.
    fn scan_count<H: ReclaimHost + ?Sized>(&self, h: &H, sc: &Sc, m: u16) -> [u64; 4] {
        let mc = &h.vm().memcgs[m as usize];
        let swappiness = mc.swappiness as u64;
        #[derive(PartialEq)]
        enum Bal {
            Equal,
            Fract,
            Anon,
            File,
        }
        let can_anon = sc.may_swap && h.swap_free_slots() > 0;
        let bal = if !can_anon || (sc.target.is_some() && swappiness == 0) {
            Bal::File
        } else if sc.priority == 0 && swappiness > 0 {
            Bal::Equal
        } else if sc.file_is_tiny {
            Bal::Anon
        } else if sc.cache_trim_mode {
            Bal::File
        } else {
            Bal::Fract
        };
        let (mut fraction, mut denominator) = ([1u64, 1u64], 1u64);
        if bal == Bal::Fract {
            let total = sc.anon_cost + sc.file_cost;
            let anon_cost = total + sc.anon_cost;
            let file_cost = total + sc.file_cost;
            let total = anon_cost + file_cost;
            let ap = swappiness * (total + 1) / (anon_cost + 1);
            let fp = (MAX_SWAPPINESS - swappiness) * (total + 1) / (file_cost + 1);
            fraction = [ap, fp];
            denominator = (ap + fp).max(1);
        }
        let mut nr = [0u64; 4];
        for lru in 0..4u8 {
            let file = lru >= LRU_INACTIVE_FILE;
            let scan = mc.lru_len(lru) >> sc.priority;
            nr[lru as usize] = match bal {
                Bal::Equal => scan,
                Bal::Fract => scan * fraction[file as usize] / denominator,
                Bal::File => {
                    if file {
                        scan
                    } else {
                        0
                    }
                }
                Bal::Anon => {
                    if file {
                        0
                    } else {
                        scan
                    }
                }
            };
        }
        nr
    }

    /// `shrink_lruvec`.
    fn shrink_lruvec<H: ReclaimHost + ?Sized>(
        &mut self,
        h: &mut H,
        ctx: &mut Ctx,
        sc: &mut Sc,
        m: u16,
    ) -> Result<()> {
        let mut nr = self.scan_count(h, sc, m);
        let targets = nr;
        let scm = h.params().scm;
        let proportional = sc.target.is_none() && !sc.kswapd && sc.priority == DEF_PRIORITY;
        let mut reclaimed = 0u64;
        h.blk_start_plug();
        while nr[0] > 0 || nr[2] > 0 || nr[3] > 0 {
            for lru in 0..4u8 {
                let l = lru as usize;
                if nr[l] > 0 {
                    let n = nr[l].min(scm);
                    nr[l] -= n;
                    reclaimed += self.shrink_list(h, ctx, sc, m, lru, n)?;
                }
            }
            if reclaimed < sc.nr_to_reclaim || proportional {
                continue;
            }
            // Goal met: stop the smaller type, cut the larger to its original proportion.
            let nr_file = nr[2] + nr[3];
            let nr_anon = nr[0] + nr[1];
            if nr_file == 0 || nr_anon == 0 {
                break;
            }
            let (small, pct) = if nr_file > nr_anon {
                (0usize, nr_anon * 100 / (targets[0] + targets[1] + 1))
            } else {
                (2usize, nr_file * 100 / (targets[2] + targets[3] + 1))
            };
            nr[small] = 0;
            nr[small + 1] = 0;
            let big = 2 - small;
            for l in [big, big + 1] {
                let scanned = targets[l] - nr[l];
                nr[l] = targets[l] * (100 - pct) / 100;
                nr[l] -= nr[l].min(scanned);
            }
        }
        // `blk_finish_plug`: the writes of the whole pass go out now, unless an outer plug (swap-in
        // readahead) holds them.
        h.blk_finish_plug(ctx)?;
        sc.reclaimed += reclaimed;
        if h.swap_usable() > 0 && inactive_is_low(h, Some(m), LRU_INACTIVE_ANON) {
            self.shrink_active(h, ctx, sc, m, LRU_ACTIVE_ANON, scm);
        }
        Ok(())
    }

    /// `shrink_list`.
    fn shrink_list<H: ReclaimHost + ?Sized>(
        &mut self,
        h: &mut H,
        ctx: &mut Ctx,
        sc: &mut Sc,
        m: u16,
        lru: u8,
        n: u64,
    ) -> Result<u64> {
        if lru == LRU_ACTIVE_ANON || lru == LRU_ACTIVE_FILE {
            if sc.may_deactivate[(lru == LRU_ACTIVE_FILE) as usize] {
                self.shrink_active(h, ctx, sc, m, lru, n);
            } else {
                sc.skipped_deactivate = true;
            }
            return Ok(0);
        }
        self.shrink_inactive(h, ctx, sc, m, lru, n)
    }

    /// `shrink_active_list`: deactivate the oldest `n` active pages, except referenced VM_EXEC file
    /// pages, which go round the active list again. Accessed bits are cleared on the way.
    fn shrink_active<H: ReclaimHost + ?Sized>(
        &mut self,
        h: &mut H,
        ctx: &mut Ctx,
        _sc: &mut Sc,
        m: u16,
        lru: u8,
        n: u64,
    ) {
        let mut batch = std::mem::take(&mut self.batch);
        batch.clear();
        h.vm_mut().isolate_tail(m, lru, n, &mut batch);
        h.prefetch_referenced(&batch);
        let file = lru == LRU_ACTIVE_FILE;
        let mut deactivated = 0;
        for &f in &batch {
            ctx.now += h.params().scan_ns;
            let referenced = h.folio_referenced(f);
            let vm = h.vm_mut();
            let fr = &mut vm.frames[f as usize];
            if referenced > 0 && file && fr.has(F_EXEC) {
                // Back on the active list (`move_folios_to_lru` ages the workingset clock).
                vm.memcgs[fr.memcg as usize].nonresident_age += 1;
                vm.lru_add_head(f, lru);
                continue;
            }
            fr.clear(F_ACTIVE);
            fr.set(F_WORKINGSET);
            vm.lru_add_head(f, lru - 1);
            deactivated += 1;
        }
        h.stats_mut().pgdeactivate += deactivated;
        h.vm_mut().memcgs[m as usize].stats.pgdeactivate += deactivated;
        self.batch = batch;
    }
}

/// `shrink_slab` after `shrink_lruvec` of cgroup `m` (0: the root, global reclaim), as far as it
/// changes reclaim: the zswap shrinker's `zswap_shrinker_count` flushes the cgroup's statistics
/// (`mem_cgroup_flush_stats`, not rate-limited) whenever the shrinker is enabled and the cgroup's
/// shrinker bit is set (it has had an entry on zswap's LRU; for the root, any cgroup). So with zswap's
/// shrinker on, reclaim reads nearly live LRU sizes and workingset activations instead of the last
/// periodic flush. (`memcg_vmstats_needs_flush`'s threshold, 64 updates per CPU, is passed by the LRU
/// moves of any reclaim round; under cgroup v1 the count then returns 0 — the zswap charge counters
/// it scales by are v2-only — so the shrinker writes nothing back: the captures' `zswpwb` is 0.)
fn shrink_slab<H: ReclaimHost + ?Sized>(h: &mut H, m: u16) {
    if h.vm_mut().stats_flush_period_ns() == Nanos::ZERO {
        return;
    }
    if h.zswap_shrinker_counts(m) {
        h.vm_mut().flush_stats_of(m);
    }
}

impl<H: ReclaimHost + ?Sized> ReclaimPolicy<H> for LinuxReclaim {
    fn name(&self) -> &'static str {
        "linux"
    }

    fn uses_active_lists(&self) -> bool {
        true
    }

    fn reclaim(&mut self, h: &mut H, ctx: &mut Ctx, req: &ReclaimRequest) -> Result<u64> {
        let scope: Vec<u16> = match req.memcg {
            Some(m) => vec![m],
            None => (0..h.vm_mut().memcgs.len() as u16).collect(),
        };
        let mut sc = Sc {
            target: req.memcg,
            nr_to_reclaim: req.nr_to_reclaim,
            reclaimed: 0,
            priority: DEF_PRIORITY,
            may_deactivate: [false; 2],
            force_deactivate: false,
            skipped_deactivate: false,
            cache_trim_mode: false,
            file_is_tiny: false,
            anon_cost: 0,
            file_cost: 0,
            kswapd: req.kswapd,
            may_swap: req.may_swap,
        };
        let high = h.vm_mut().wmark.2;
        let written_before = h.stats_mut().pswpout;
        loop {
            for priority in (0..=DEF_PRIORITY).rev() {
                sc.priority = priority;
                self.prepare(h, &mut sc);
                for &m in &scope {
                    self.shrink_lruvec(h, ctx, &mut sc, m)?;
                    shrink_slab(h, m);
                    if !sc.kswapd && sc.reclaimed >= sc.nr_to_reclaim {
                        break;
                    }
                }
                if sc.reclaimed >= sc.nr_to_reclaim || (sc.kswapd && h.vm_mut().free_pages() > high)
                {
                    break;
                }
            }
            if sc.reclaimed == 0 && sc.skipped_deactivate && !sc.force_deactivate {
                sc.force_deactivate = true;
                sc.skipped_deactivate = false;
                continue;
            }
            break;
        }
        if !sc.kswapd {
            h.stats_mut().reclaim_lowest_priority[sc.priority as usize] += 1;
            let written = h.stats_mut().pswpout - written_before;
            h.stats_mut().reclaim_written.record(written);
            h.stats_mut().reclaim_writing_nothing += (written == 0) as u64;
        }
        // `snapshot_refaults` (of the flushed counts).
        let root = req.memcg.unwrap_or(0);
        h.vm_mut().memcgs[root as usize].refaults_snapshot =
            h.vm_mut().lruvec_stats(root).activations;
        Ok(sc.reclaimed)
    }
}
