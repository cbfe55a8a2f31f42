//! Linux's swap slot allocator before the 6.12 rework (`scan_swap_map_slots` with `cluster_info`, as in
//! 5.x, the kernel the ZNSwap paper measured): the allocator of its Linux-swap-on-block-SSD baseline.
//!
//! * Each CPU allocates from its own cluster (`percpu_cluster`), slot after slot from where it left off
//!   (`scan_swap_map_try_ssd_cluster`); when the cluster has no free slot left, the CPU takes the head of
//!   the **free-cluster list** (clusters with no slot in use, FIFO). Slots freed in clusters still in use
//!   are not reused while a free cluster exists — so, without discard, the allocator walks over the
//!   whole partition and the SSD ends up holding every slot it ever wrote.
//! * With no free cluster: clusters waiting for their discard are discarded first and the allocation
//!   waits for it (`swap_do_scheduled_discard`); otherwise a linear scan for any free slot from the CPU's
//!   scan base (`cluster_next_cpu`), wrapping.
//! * A cluster whose last slot is freed goes to the free-list tail (`__free_cluster`) or, with
//!   whole-cluster discard (`swapon --discard=pages`), is withheld until its discard completes
//!   (`swap_cluster_schedule_discard`), then freed.
//! * The clusters holding the header and the padding past the end never become free (their bad slots
//!   count as used, `inc_cluster_info_page` at swapon); the others start on the free list in index order.
//! * Scan base ([`ScanBase`], `[host.swap.cluster_v5]`): one per CPU (5.8+) or one global (before 5.8);
//!   with the trunk re-draw (5.8+ `set_cluster_next`) every allocation moves it past its slot, and a move
//!   into another 64 MiB trunk re-draws it uniformly between the lowest and highest free slot, aligned
//!   down to a trunk. Without it the base moves only with the scan.

use std::collections::VecDeque;

use nandstack_core::{Nanos, Rng};

use super::SlotAllocator;
use crate::swap::MAP_BAD;

const NO: u32 = u32::MAX;

/// The random stream of the trunk re-draw (`Rng::derive(seed, SWAP_TRUNK_STREAM)`).
pub const SWAP_TRUNK_STREAM: u64 = 0x7377_7074_7275_6e6b;

/// `SWAP_ADDRESS_SPACE_PAGES`: slots per trunk of the 5.8+ scan-base re-draw (64 MiB).
pub const TRUNK_SLOTS: u32 = 1 << 14;

/// Where the linear scan starts: one base per CPU or one for all, with or without the trunk re-draw.
pub struct ScanBase {
    pub global: bool,
    /// The re-draw's random stream and trunk size in slots; `None`: no re-draw.
    pub redraw: Option<(Rng, u32)>,
}

#[derive(Default)]
struct Stats {
    from_cluster: u64,
    from_scan: u64,
    clusters_taken_free: u64,
    discard_waits: u64,
}

pub struct ClusterV5Allocator {
    cs: u32,
    /// Slots in use per cluster (bad slots included).
    count: Vec<u32>,
    /// Free-cluster list (FIFO) and membership.
    free: VecDeque<u32>,
    on_free: Vec<bool>,
    /// Clusters withheld for their discard, in order, and when each discard completes (`u64::MAX`:
    /// not issued yet).
    discarding: VecDeque<u32>,
    withheld: Vec<bool>,
    discard_done: Vec<Nanos>,
    /// When a cluster's discard completed (a cluster taken from the free list is usable from then).
    ready: Vec<Nanos>,
    /// Per CPU: current cluster and the next offset in it.
    pcp: Vec<(u32, u32)>,
    /// Per CPU (or one, `global`): where the linear scan starts (`cluster_next_cpu`).
    scan_base: Vec<u32>,
    global: bool,
    redraw: Option<(Rng, u32)>,
    discard_clusters: bool,
    pending: Vec<u32>,
    stats: Stats,
}

impl ClusterV5Allocator {
    /// `map` covers whole clusters; bad slots (header, padding) are already marked.
    pub fn new(map: &[u8], cluster_slots: u32, cpus: usize, discard_clusters: bool) -> Self {
        let cs = cluster_slots;
        assert!(map.len().is_multiple_of(cs as usize) && !map.is_empty());
        let ncl = map.len() / cs as usize;
        let mut count = vec![0u32; ncl];
        let mut free = VecDeque::new();
        let mut on_free = vec![false; ncl];
        for (c, n) in count.iter_mut().enumerate() {
            *n = map[c * cs as usize..(c + 1) * cs as usize]
                .iter()
                .filter(|&&m| m == MAP_BAD)
                .count() as u32;
            if *n == 0 {
                free.push_back(c as u32);
                on_free[c] = true;
            }
        }
        ClusterV5Allocator {
            cs,
            count,
            free,
            on_free,
            discarding: VecDeque::new(),
            withheld: vec![false; ncl],
            discard_done: vec![Nanos::ZERO; ncl],
            ready: vec![Nanos::ZERO; ncl],
            pcp: vec![(NO, 0); cpus.max(1)],
            scan_base: vec![1; cpus.max(1)],
            global: false,
            redraw: None,
            discard_clusters,
            pending: Vec::new(),
            stats: Stats::default(),
        }
    }

    /// The allocator with scan base `base` (default: per CPU, no re-draw).
    pub fn with_scan_base(mut self, base: ScanBase) -> Self {
        self.global = base.global;
        self.redraw = base.redraw;
        self
    }

    fn base_of(&self, cpu: usize) -> usize {
        if self.global {
            0
        } else {
            cpu
        }
    }

    /// `set_cluster_next(si, taken + 1)` of 5.8+, after slot `taken` was allocated (`map` does not mark
    /// it yet): a base moving into another trunk is re-drawn between the lowest and highest free slot
    /// (fewer than two free: left where it was), aligned down to its trunk and not below the lowest.
    fn set_next(&mut self, cpu: usize, taken: u32, map: &[u8]) {
        let (i, next) = (self.base_of(cpu), taken + 1);
        let Some((rng, trunk)) = self.redraw.as_mut() else {
            self.scan_base[i] = next;
            return;
        };
        if self.scan_base[i] / *trunk == next / *trunk {
            self.scan_base[i] = next;
            return;
        }
        let free = |(j, &m): (usize, &u8)| m == 0 && j != taken as usize;
        let lo = map.iter().enumerate().position(free);
        let hi = map.iter().enumerate().rposition(free);
        if let (Some(lo), Some(hi)) = (lo, hi) {
            if hi > lo {
                let drawn = lo as u64 + rng.below((hi - lo + 1) as u64);
                self.scan_base[i] = (drawn as u32 / *trunk * *trunk).max(lo as u32);
            }
        }
    }

    fn take(&mut self, s: u32) {
        let c = (s / self.cs) as usize;
        self.count[c] += 1;
        if self.on_free[c] {
            // `alloc_cluster`: the cluster leaves the free list with its first slot.
            self.on_free[c] = false;
            self.free.retain(|&x| x as usize != c);
        }
    }

    /// Discards completed by `now` free their clusters.
    fn settle(&mut self, now: Nanos) {
        while let Some(&c) = self.discarding.front() {
            if self.discard_done[c as usize] > now {
                return;
            }
            self.discarding.pop_front();
            self.withheld[c as usize] = false;
            self.ready[c as usize] = self.discard_done[c as usize];
            self.free.push_back(c);
            self.on_free[c as usize] = true;
        }
    }

    /// From the CPU's cluster, taking free clusters from the head of the list as needed.
    fn alloc_in_clusters(&mut self, cpu: usize, map: &[u8]) -> Option<(u32, Nanos)> {
        loop {
            let (mut c, mut next) = self.pcp[cpu];
            if c == NO {
                c = *self.free.front()?;
                next = c * self.cs;
                self.stats.clusters_taken_free += 1;
            }
            let end = (c + 1) * self.cs;
            if !self.withheld[c as usize] {
                if let Some(s) = (next..end).find(|&s| map[s as usize] == 0) {
                    self.take(s);
                    self.pcp[cpu] = (c, s + 1);
                    return Some((s, self.ready[c as usize]));
                }
            }
            self.pcp[cpu] = (NO, 0);
        }
    }

    /// Any free slot, scanning from the CPU's scan base and wrapping (no free cluster left).
    fn scan(&mut self, cpu: usize, map: &[u8]) -> Option<u32> {
        let n = map.len() as u32;
        let base = self.scan_base[self.base_of(cpu)] % n;
        for i in 0..n {
            let s = (base + i) % n;
            if map[s as usize] == 0 && !self.withheld[(s / self.cs) as usize] {
                self.take(s);
                self.set_next(cpu, s, map);
                return Some(s);
            }
        }
        None
    }
}

impl SlotAllocator for ClusterV5Allocator {
    fn name(&self) -> &'static str {
        "cluster_v5"
    }

    fn alloc(&mut self, cpu: usize, map: &[u8], now: Nanos) -> Option<(u32, Nanos)> {
        let cpu = cpu % self.pcp.len();
        let mut t = now;
        loop {
            self.settle(t);
            if let Some((s, ready)) = self.alloc_in_clusters(cpu, map) {
                self.stats.from_cluster += 1;
                if self.redraw.is_some() {
                    self.set_next(cpu, s, map);
                }
                return Some((s, t.max(ready)));
            }
            // No free cluster: discard the withheld ones now and wait (if any were issued).
            if let Some(&c) = self.discarding.front() {
                if self.discard_done[c as usize] != Nanos::MAX {
                    self.stats.discard_waits += 1;
                    t = t.max(self.discard_done[c as usize]);
                    continue;
                }
            }
            let s = self.scan(cpu, map)?;
            self.stats.from_scan += 1;
            return Some((s, t));
        }
    }

    fn free(&mut self, slot: u32) {
        let c = (slot / self.cs) as usize;
        debug_assert!(self.count[c] > 0);
        self.count[c] -= 1;
        if self.count[c] == 0 {
            if self.discard_clusters {
                self.withheld[c] = true;
                self.discard_done[c] = Nanos::MAX;
                self.discarding.push_back(c as u32);
                self.pending.push(c as u32);
            } else {
                self.free.push_back(c as u32);
                self.on_free[c] = true;
            }
        }
    }

    fn take_discards(&mut self, out: &mut Vec<u32>) {
        out.append(&mut self.pending);
    }

    fn discard_issued(&mut self, cluster: u32, done: Nanos) {
        self.discard_done[cluster as usize] = done;
    }

    fn stats(&self) -> Vec<(&'static str, u64)> {
        let s = &self.stats;
        vec![
            ("from_cluster", s.from_cluster),
            ("from_scan", s.from_scan),
            ("clusters_taken_free", s.clusters_taken_free),
            ("discard_waits", s.discard_waits),
            ("free_clusters", self.free.len() as u64),
            ("discard_clusters", self.discarding.len() as u64),
        ]
    }

    fn verify(&self, map: &[u8]) -> Result<(), String> {
        for (c, &n) in self.count.iter().enumerate() {
            let used = map[c * self.cs as usize..(c + 1) * self.cs as usize]
                .iter()
                .filter(|&&m| m != 0)
                .count() as u32;
            if used != n {
                return Err(format!("cluster {c}: {used} slots in use but counted {n}"));
            }
            let listed = self.free.iter().filter(|&&x| x as usize == c).count();
            if listed != self.on_free[c] as usize {
                return Err(format!("cluster {c}: free-list membership disagrees"));
            }
            if self.on_free[c] && n != 0 {
                return Err(format!(
                    "cluster {c}: on the free list with {n} slots in use"
                ));
            }
            if self.withheld[c] && (n != 0 || self.on_free[c]) {
                return Err(format!(
                    "cluster {c}: withheld for discard but in use or free"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(n: usize) -> Vec<u8> {
        let mut m = vec![0u8; n];
        m[0] = MAP_BAD;
        m
    }

    #[test]
    fn conformance() {
        for discard in [false, true] {
            super::super::conformance::run(
                &|n| {
                    let cs = 64;
                    let mut m = map((n as usize).div_ceil(cs) * cs);
                    for x in m.iter_mut().skip(n as usize) {
                        *x = MAP_BAD;
                    }
                    (
                        Box::new(ClusterV5Allocator::new(&m, cs as u32, 3, discard))
                            as Box<dyn SlotAllocator>,
                        m,
                    )
                },
                17,
            );
        }
    }

    #[test]
    fn free_clusters_come_first_so_the_whole_area_gets_written() {
        // 4 clusters of 4 slots; slot 0 is the header (cluster 0 is never free).
        let mut m = map(16);
        let mut a = ClusterV5Allocator::new(&m, 4, 1, false);
        let alloc = |m: &mut Vec<u8>, a: &mut ClusterV5Allocator| {
            let (s, _) = a.alloc(0, m, Nanos(0)).unwrap();
            m[s as usize] = 1;
            s
        };
        // The free list is clusters 1, 2, 3: the CPU takes cluster 1 first.
        let got: Vec<u32> = (0..4).map(|_| alloc(&mut m, &mut a)).collect();
        assert_eq!(got, [4, 5, 6, 7]);
        // A slot freed in cluster 1 is not reused while clusters 2 and 3 are free.
        m[5] = 0;
        a.free(5);
        assert_eq!(alloc(&mut m, &mut a), 8);
        // Cluster 1 emptied: it goes to the free-list tail, after cluster 3.
        for s in [4, 6, 7] {
            m[s] = 0;
            a.free(s as u32);
        }
        let got: Vec<u32> = (0..7).map(|_| alloc(&mut m, &mut a)).collect();
        assert_eq!(got, [9, 10, 11, 12, 13, 14, 15]);
        assert_eq!(alloc(&mut m, &mut a), 4); // now cluster 1
        a.verify(&m).unwrap();
        // No free cluster left: a linear scan finds the header cluster's free slots.
        for _ in 0..3 {
            alloc(&mut m, &mut a);
        }
        assert_eq!(alloc(&mut m, &mut a), 1);
    }

    #[test]
    fn an_emptied_cluster_is_withheld_until_its_discard_completes() {
        let mut m = map(12);
        let mut a = ClusterV5Allocator::new(&m, 4, 1, true);
        for _ in 0..8 {
            let (s, _) = a.alloc(0, &m, Nanos(0)).unwrap();
            m[s as usize] = 1;
        }
        for (s, x) in m.iter_mut().enumerate().take(8).skip(4) {
            *x = 0;
            a.free(s as u32);
        }
        let mut d = Vec::new();
        a.take_discards(&mut d);
        assert_eq!(d, [1]);
        a.discard_issued(1, Nanos(500));
        // Cluster 0's free slots are found by the scan only once no cluster can come back: here the
        // discard of cluster 1 is waited for first.
        let (s, t) = a.alloc(0, &m, Nanos(100)).unwrap();
        assert_eq!((s, t), (4, Nanos(500)));
        a.verify(&{
            let mut m2 = m.clone();
            m2[4] = 1;
            m2
        })
        .unwrap();
    }

    /// `set_cluster_next` by hand: 64 slots, trunks of 16, one CPU.
    #[test]
    fn the_scan_base_is_redrawn_between_the_free_ends_when_it_crosses_a_trunk() {
        let m = map(64);
        let redraw = |seed| ScanBase {
            global: false,
            redraw: Some((Rng::derive(seed, 1), 16)),
        };
        // Without the re-draw the base is the slot after the one taken.
        let mut a = ClusterV5Allocator::new(&m, 4, 1, false);
        a.set_next(0, 9, &m);
        assert_eq!(a.scan_base[0], 10);
        // Within a trunk: the next slot. Free slots only 35 and 38 (17 is the one being taken): a move
        // into trunk 1 draws in [35, 38], aligned down to 32, raised to the lowest free slot: 35.
        let mut used = vec![1u8; 64];
        for s in [17, 35, 38] {
            used[s] = 0;
        }
        let mut a = ClusterV5Allocator::new(&m, 4, 1, false).with_scan_base(redraw(3));
        a.scan_base[0] = 3;
        a.set_next(0, 9, &used);
        assert_eq!(a.scan_base[0], 10);
        a.set_next(0, 17, &used);
        assert_eq!(a.scan_base[0], 35);
        // One free slot besides the taken one: the kernel leaves the base (highest_bit <= lowest_bit).
        used[17] = 1;
        used[38] = 1;
        a.set_next(0, 50, &used);
        assert_eq!(a.scan_base[0], 35);
        // Free slots 5 and 60: the draw is uniform over [5, 60], so the base is a trunk start (16, 32,
        // 48) or the lowest free slot (5, for draws below 16) — each seen, nothing else.
        let mut wide = vec![1u8; 64];
        wide[5] = 0;
        wide[60] = 0;
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..200 {
            let mut a = ClusterV5Allocator::new(&m, 4, 1, false).with_scan_base(redraw(seed));
            a.set_next(0, 30, &wide); // base 1 (trunk 0) → 31 (trunk 1): re-drawn
            seen.insert(a.scan_base[0]);
        }
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), [5, 16, 32, 48]);
    }

    /// A global scan base (before 5.8): a scan on one CPU continues where another CPU's scan stopped.
    #[test]
    fn a_global_scan_base_is_shared_by_the_cpus() {
        // 2 clusters of 4, slot 0 the header: cluster 1 is taken whole, then the scan finds 1, 2, 3 and
        // leaves CPU 0's base at 4. Free 2, 6, 7: CPU 0 scans from 4 and takes 6 (base 7).
        for (global, second) in [(true, 7), (false, 2)] {
            let mut m = map(8);
            let mut a = ClusterV5Allocator::new(&m, 4, 2, false).with_scan_base(ScanBase {
                global,
                redraw: None,
            });
            for _ in 0..7 {
                let (s, _) = a.alloc(0, &m, Nanos(0)).unwrap();
                m[s as usize] = 1;
            }
            for s in [2, 6, 7] {
                m[s] = 0;
                a.free(s as u32);
            }
            let (s, _) = a.alloc(0, &m, Nanos(0)).unwrap();
            assert_eq!(s, 6);
            m[6] = 1;
            // CPU 1 scans from the shared base 7, or from its own base 1.
            let (s, _) = a.alloc(1, &m, Nanos(0)).unwrap();
            assert_eq!(s, second, "global = {global}");
        }
    }
}
