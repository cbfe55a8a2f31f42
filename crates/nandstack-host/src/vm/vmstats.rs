//! Memory-cgroup statistics as reclaim reads them (`lruvec_page_state`, `mm/memcontrol.c`).
//!
//! Linux counts each cgroup's LRU sizes and workingset events per CPU and folds them into the totals
//! that `lruvec_page_state` returns only when the statistics are flushed (rstat). Linux 6.18's reclaim
//! heuristics flush in a rate-limited way only (`mem_cgroup_flush_stats_ratelimited`: only when the
//! periodic flusher is a whole cycle late), so they read the totals of the last periodic flush, which
//! runs every `FLUSH_TIME` = 2 s (`flush_memcg_stats_dwork`, first queued at boot). The readers:
//! * `prepare_scan_control`: workingset activations against the snapshot taken at the end of the last
//!   reclaim, and `inactive_is_low` (together: whether the active lists may be deactivated); the
//!   inactive file size for cache-trim mode;
//! * `shrink_lruvec`: `inactive_is_low` before it ages the active anon list;
//! * `snapshot_refaults` at the end of a reclaim;
//! * `workingset_test_recent`: the workingset size a refault distance is compared with;
//! * `lru_note_cost`: the LRU size that decays the reclaim-cost averages.
//!
//! The list sizes that size each scan (`lruvec_lru_size`) are exact; they are read from the lists.
//! A cgroup created while the program starts reads zeros until the first flush; so until then its
//! active anon list is never deactivated (no activation is seen, and 0 < 0 is false) and no refault is
//! activated (a workingset of size 0): pages become active only by being referenced twice on the
//! inactive list, and stay active. The root's figures are hierarchical (its own pages and every
//! child's). A flush period of 0 reads the live values (every read flushed).

use super::memcg::Memcg;
use super::page::NR_LRU;
use super::Vm;
use nandstack_core::Nanos;

/// The statistics of one lruvec that reclaim reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LruvecStats {
    /// `NR_INACTIVE_ANON`, `NR_ACTIVE_ANON`, `NR_INACTIVE_FILE`, `NR_ACTIVE_FILE` (isolated pages
    /// are on no list).
    pub lru: [u64; NR_LRU],
    /// `WORKINGSET_ACTIVATE_ANON`, `WORKINGSET_ACTIVATE_FILE`.
    pub activations: [u64; 2],
}

impl LruvecStats {
    fn of(m: &Memcg) -> LruvecStats {
        LruvecStats {
            lru: std::array::from_fn(|l| m.lru_len(l as u8)),
            activations: m.activations(),
        }
    }
    fn add(&mut self, o: &LruvecStats) {
        for (a, b) in self.lru.iter_mut().zip(o.lru) {
            *a += b;
        }
        for (a, b) in self.activations.iter_mut().zip(o.activations) {
            *a += b;
        }
    }
    /// All four lists.
    pub fn lru_pages(&self) -> u64 {
        self.lru.iter().sum()
    }
}

/// The periodic flusher and the flushed totals of every cgroup.
#[derive(Clone, Debug, Default)]
pub struct StatsFlush {
    /// Flush period, ns (0: every read sees the live values).
    period_ns: Nanos,
    next_ns: Nanos,
    /// Flushes so far.
    pub flushes: u64,
    /// Flushed totals per cgroup (index 0, the root: hierarchical).
    flushed: Vec<LruvecStats>,
}

impl Vm {
    /// Flush every `period_ns` (the first flush one period after the start), or read live values
    /// when 0.
    pub fn set_stats_flush(&mut self, period_ns: Nanos) {
        self.set_stats_flush_from(period_ns, period_ns);
    }

    /// Flush every `period_ns`, the first at `first_ns` (clamped to one period).
    pub fn set_stats_flush_from(&mut self, period_ns: Nanos, first_ns: Nanos) {
        self.stats_flush = StatsFlush {
            period_ns,
            next_ns: first_ns.min(period_ns),
            flushes: 0,
            flushed: vec![LruvecStats::default(); self.memcgs.len()],
        };
    }

    /// The flush period, ns (0: live values).
    pub fn stats_flush_period_ns(&self) -> Nanos {
        self.stats_flush.period_ns
    }

    /// Run the periodic flush if it fell due by `now` (the lists have not changed since it did:
    /// the host calls this before every fault and reclaim).
    pub fn tick_stats_flush(&mut self, now: Nanos) {
        let s = &mut self.stats_flush;
        if s.period_ns == Nanos::ZERO || now < s.next_ns {
            return;
        }
        s.next_ns += s.period_ns * ((now - s.next_ns) / s.period_ns) + s.period_ns;
        self.flush_stats();
    }

    /// Fold the live values into the totals reclaim reads.
    pub fn flush_stats(&mut self) {
        let mut flushed = std::mem::take(&mut self.stats_flush.flushed);
        flushed.clear();
        flushed.extend((0..self.memcgs.len()).map(|m| self.live_stats(m as u16)));
        self.stats_flush.flushed = flushed;
        self.stats_flush.flushes += 1;
    }

    /// `mem_cgroup_flush_stats(m)`: fold the live values of cgroup `m` and its descendants into the
    /// totals reclaim reads (the root: every cgroup). The model's cgroups are the root's children, so
    /// a child's flush leaves the root's hierarchical totals as they were.
    pub fn flush_stats_of(&mut self, m: u16) {
        if m == 0 {
            self.flush_stats();
            return;
        }
        if self.stats_flush.flushed.len() > m as usize {
            self.stats_flush.flushed[m as usize] = self.live_stats(m);
        }
    }

    /// The live values of cgroup `m` (the root: hierarchical).
    fn live_stats(&self, m: u16) -> LruvecStats {
        if m != 0 {
            return LruvecStats::of(&self.memcgs[m as usize]);
        }
        let mut s = LruvecStats::default();
        for c in &self.memcgs {
            s.add(&LruvecStats::of(c));
        }
        s
    }

    /// `lruvec_page_state` of cgroup `m` (0: the root, hierarchical) as of the last flush.
    pub fn lruvec_stats(&self, m: u16) -> LruvecStats {
        match self.stats_flush.flushed.get(m as usize) {
            Some(s) if self.stats_flush.period_ns > Nanos::ZERO => *s,
            _ => self.live_stats(m),
        }
    }

    /// `lru_note_cost`: add the cost of `nr_io` I/Os (×SWAP_CLUSTER_MAX) and `nr_rotated` rotations
    /// to cgroup `m` and its parent, the root; a cgroup whose averages exceed a quarter of its LRU
    /// size (as flushed) halves them. Nothing happens without cost.
    pub fn lru_note_cost(&mut self, m: u16, file: bool, nr_io: u64, nr_rotated: u64, scm: u64) {
        let cost = nr_io * scm + nr_rotated;
        if cost == 0 {
            return;
        }
        let mut c = m;
        loop {
            let lrusize = self.lruvec_stats(c).lru_pages();
            let mc = &mut self.memcgs[c as usize];
            if file {
                mc.file_cost += cost;
            } else {
                mc.anon_cost += cost;
            }
            if mc.file_cost + mc.anon_cost > lrusize / 4 {
                mc.file_cost /= 2;
                mc.anon_cost /= 2;
            }
            if c == 0 {
                break;
            }
            c = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::page::{LRU_ACTIVE_ANON, LRU_INACTIVE_ANON};

    fn vm() -> Vm {
        let memcgs = vec![Memcg::new("root", u64::MAX, 60), Memcg::new("c", 100, 60)];
        Vm::new(8, (0, 0, 0), memcgs)
    }

    fn put(vm: &mut Vm, m: u16, list: u8) {
        let f = vm.take_frame(m).expect("frame");
        vm.memcgs[m as usize].usage += 1;
        vm.lru_add_head(f, list);
    }

    #[test]
    fn reads_the_last_periodic_flush() {
        let mut vm = vm();
        vm.set_stats_flush(Nanos(2_000));
        put(&mut vm, 1, LRU_INACTIVE_ANON);
        put(&mut vm, 0, LRU_ACTIVE_ANON);
        // Before the first flush everything reads zero.
        assert_eq!(vm.lruvec_stats(1), LruvecStats::default());
        vm.tick_stats_flush(Nanos(1_999));
        assert_eq!(vm.stats_flush.flushes, 0);
        vm.tick_stats_flush(Nanos(2_000));
        assert_eq!(vm.stats_flush.flushes, 1);
        assert_eq!(vm.lruvec_stats(1).lru, [1, 0, 0, 0]);
        // The root is hierarchical.
        assert_eq!(vm.lruvec_stats(0).lru, [1, 1, 0, 0]);
        // Later changes are not seen until the next flush, which is due at 4 000 (not 2 000 after
        // a late tick).
        put(&mut vm, 1, LRU_INACTIVE_ANON);
        vm.memcgs[1].stats.workingset_activate_anon += 3;
        vm.tick_stats_flush(Nanos(3_999));
        assert_eq!(vm.lruvec_stats(1).lru, [1, 0, 0, 0]);
        assert_eq!(vm.lruvec_stats(1).activations, [0, 0]);
        vm.tick_stats_flush(Nanos(9_000));
        assert_eq!(vm.stats_flush.flushes, 2);
        assert_eq!(vm.lruvec_stats(1).lru, [2, 0, 0, 0]);
        assert_eq!(vm.lruvec_stats(0).activations, [3, 0]);
        vm.tick_stats_flush(Nanos(9_999));
        assert_eq!(vm.stats_flush.flushes, 2);
        vm.tick_stats_flush(Nanos(10_000));
        assert_eq!(vm.stats_flush.flushes, 3);
    }

    #[test]
    fn the_first_flush_can_come_early_in_the_period() {
        let mut vm = vm();
        vm.set_stats_flush_from(Nanos(2_000), Nanos(300));
        put(&mut vm, 1, LRU_ACTIVE_ANON);
        vm.tick_stats_flush(Nanos(299));
        assert_eq!(vm.stats_flush.flushes, 0);
        vm.tick_stats_flush(Nanos(300));
        assert_eq!(
            (vm.stats_flush.flushes, vm.lruvec_stats(1).lru),
            (1, [0, 1, 0, 0])
        );
        // Then every period from there: 2 300, 4 300.
        vm.tick_stats_flush(Nanos(2_299));
        assert_eq!(vm.stats_flush.flushes, 1);
        vm.tick_stats_flush(Nanos(4_300));
        assert_eq!(vm.stats_flush.flushes, 2);
        // A first flush past the period is clamped to one period.
        vm.set_stats_flush_from(Nanos(1_000), Nanos(5_000));
        vm.tick_stats_flush(Nanos(1_000));
        assert_eq!(vm.stats_flush.flushes, 1);
    }

    #[test]
    fn period_zero_reads_live_values() {
        let mut vm = vm();
        vm.set_stats_flush(Nanos(0));
        put(&mut vm, 1, LRU_ACTIVE_ANON);
        assert_eq!(vm.lruvec_stats(1).lru, [0, 1, 0, 0]);
        vm.tick_stats_flush(Nanos::MAX);
        assert_eq!(vm.stats_flush.flushes, 0);
    }

    #[test]
    fn note_cost_decays_against_the_flushed_size_and_reaches_the_root() {
        let mut vm = vm();
        vm.set_stats_flush(Nanos(1_000));
        for _ in 0..4 {
            put(&mut vm, 1, LRU_INACTIVE_ANON);
        }
        // Flushed size 0: any cost is halved at once (4 > 0 → 2).
        vm.lru_note_cost(1, false, 0, 4, 32);
        assert_eq!(vm.memcgs[1].anon_cost, 2);
        assert_eq!(vm.memcgs[0].anon_cost, 2);
        vm.flush_stats();
        // Flushed size 4: a cost of 1 stays (1 ≤ 4 / 4 after 2 + 1 = 3 > 1 halves to 1).
        vm.lru_note_cost(1, true, 0, 1, 32);
        assert_eq!((vm.memcgs[1].anon_cost, vm.memcgs[1].file_cost), (1, 0));
        // No cost, no decay.
        vm.memcgs[1].anon_cost = 100;
        vm.lru_note_cost(1, false, 0, 0, 32);
        assert_eq!(vm.memcgs[1].anon_cost, 100);
    }
}
