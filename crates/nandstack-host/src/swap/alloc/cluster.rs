//! Linux's cluster allocator for swap on SSDs (`mm/swapfile.c`, 6.12+ reworked allocator as in 6.18).
//!
//! The swap area is cut into clusters of `SWAPFILE_CLUSTER` slots. Each cluster is on one list:
//! free (no slot used), nonfull (a slot was freed in it), frag (the allocator left it with free slots),
//! full, or discard (waiting for its discard). Order of allocation (`cluster_alloc_swap_entry`):
//! 1. the CPU's current cluster (one global cluster on rotational devices), from its next offset;
//! 2. with whole-cluster discard: a free cluster;
//! 3. every nonfull cluster in list order (scanned from its start);
//! 4. without discard: a free cluster;
//! 5. the frag clusters;
//! 6. with clusters being discarded: wait for the discard and start over.
//!
//! After allocating from a cluster it moves to full, or to frag if slots remain (`relocate_cluster`);
//! freeing a slot moves a cluster to nonfull (`partial_free_cluster`), freeing its last slot to the
//! free list tail or, with discard, to the discard list (`free_cluster`). At swapon the cluster holding
//! the header (and the one holding the padding past the end) start on nonfull, the others on free in
//! index order.

use super::SlotAllocator;
use crate::swap::MAP_BAD;
use nandstack_core::Nanos;

const NO: u32 = u32::MAX;
// Lists; a cluster's flag is its list + 1, 0 when isolated (on no list).
const L_FREE: usize = 0;
const L_NONFULL: usize = 1;
const L_FRAG: usize = 2;
const L_FULL: usize = 3;
const L_DISCARD: usize = 4;
const ISOLATED: u8 = 0;
const LIST_NAMES: [&str; 5] = ["free", "nonfull", "frag", "full", "discard"];

#[derive(Clone, Copy)]
struct List {
    head: u32,
    tail: u32,
    len: u32,
}

#[derive(Default)]
struct Stats {
    from_current: u64,
    from_free: u64,
    from_nonfull: u64,
    from_frag: u64,
    discard_waits: u64,
    clusters_taken_free: u64,
}

pub struct ClusterAllocator {
    cs: u32,
    ncl: u32,
    count: Vec<u32>,
    flag: Vec<u8>,
    prev: Vec<u32>,
    next: Vec<u32>,
    lists: [List; 5],
    discard_done: Vec<Nanos>,
    /// Next offset of each CPU's current cluster (0 = none: slot 0 is never allocatable).
    pcp: Vec<u32>,
    solid_state: bool,
    discard_clusters: bool,
    pending_discards: Vec<u32>,
    stats: Stats,
}

impl ClusterAllocator {
    /// `map` covers whole clusters; bad slots (header, padding) are already marked.
    pub fn new(
        map: &[u8],
        cluster_slots: u32,
        cpus: usize,
        solid_state: bool,
        discard_clusters: bool,
    ) -> ClusterAllocator {
        let cs = cluster_slots;
        assert!(map.len().is_multiple_of(cs as usize) && !map.is_empty());
        let ncl = (map.len() / cs as usize) as u32;
        let empty = List {
            head: NO,
            tail: NO,
            len: 0,
        };
        let mut a = ClusterAllocator {
            cs,
            ncl,
            count: vec![0; ncl as usize],
            flag: vec![ISOLATED; ncl as usize],
            prev: vec![NO; ncl as usize],
            next: vec![NO; ncl as usize],
            lists: [empty; 5],
            discard_done: vec![Nanos::ZERO; ncl as usize],
            pcp: vec![0; if solid_state { cpus.max(1) } else { 1 }],
            solid_state,
            discard_clusters,
            pending_discards: Vec::new(),
            stats: Stats::default(),
        };
        for c in 0..ncl {
            let bad = map[(c * cs) as usize..((c + 1) * cs) as usize]
                .iter()
                .filter(|&&m| m == MAP_BAD)
                .count() as u32;
            a.count[c as usize] = bad;
            let list = if bad == cs {
                L_FULL
            } else if bad > 0 {
                L_NONFULL
            } else {
                L_FREE
            };
            a.push_tail(c, list);
        }
        a
    }

    fn unlink(&mut self, c: u32) {
        let f = self.flag[c as usize];
        if f == ISOLATED {
            return;
        }
        let l = (f - 1) as usize;
        let (p, n) = (self.prev[c as usize], self.next[c as usize]);
        if p != NO {
            self.next[p as usize] = n;
        } else {
            self.lists[l].head = n;
        }
        if n != NO {
            self.prev[n as usize] = p;
        } else {
            self.lists[l].tail = p;
        }
        self.lists[l].len -= 1;
        self.prev[c as usize] = NO;
        self.next[c as usize] = NO;
        self.flag[c as usize] = ISOLATED;
    }

    fn push_tail(&mut self, c: u32, l: usize) {
        debug_assert_eq!(self.flag[c as usize], ISOLATED);
        let t = self.lists[l].tail;
        self.prev[c as usize] = t;
        self.next[c as usize] = NO;
        if t != NO {
            self.next[t as usize] = c;
        } else {
            self.lists[l].head = c;
        }
        self.lists[l].tail = c;
        self.lists[l].len += 1;
        self.flag[c as usize] = l as u8 + 1;
    }

    /// `move_cluster` to the tail of `l` (from wherever it is).
    fn move_to(&mut self, c: u32, l: usize) {
        self.unlink(c);
        self.push_tail(c, l);
    }

    fn on_list(&self, c: u32, l: usize) -> bool {
        self.flag[c as usize] == l as u8 + 1
    }

    /// `free_cluster`: to the discard list (withheld) or the free list.
    fn free_cluster(&mut self, c: u32) {
        if self.discard_clusters {
            self.move_to(c, L_DISCARD);
            self.discard_done[c as usize] = Nanos::MAX;
            self.pending_discards.push(c);
        } else {
            self.move_to(c, L_FREE);
        }
    }

    /// `relocate_cluster` after an allocation attempt.
    fn relocate(&mut self, c: u32) {
        if self.on_list(c, L_DISCARD) {
            return;
        }
        let n = self.count[c as usize];
        if n == 0 {
            if !self.on_list(c, L_FREE) {
                self.free_cluster(c);
            }
        } else if n < self.cs {
            if !self.on_list(c, L_FRAG) {
                self.move_to(c, L_FRAG);
            }
        } else if !self.on_list(c, L_FULL) {
            self.move_to(c, L_FULL);
        }
    }

    /// `alloc_swap_scan_cluster`: first free slot of `c` at or after `start`; sets the CPU's next offset.
    fn scan(&mut self, c: u32, start: u32, map: &[u8], pcp: usize) -> Option<u32> {
        let end = (c + 1) * self.cs;
        let mut found = None;
        let mut next = 0;
        if self.count[c as usize] < self.cs {
            for off in start..end {
                if map[off as usize] == 0 {
                    found = Some(off);
                    self.count[c as usize] += 1;
                    if self.count[c as usize] < self.cs && off + 1 < end {
                        next = off + 1;
                    }
                    break;
                }
            }
        }
        self.relocate(c);
        self.pcp[pcp] = next;
        found
    }

    /// Isolate clusters from the head of list `l` and scan each from its start; only the first unless
    /// `all`.
    fn scan_list(&mut self, l: usize, all: bool, map: &[u8], pcp: usize) -> Option<u32> {
        loop {
            let c = self.lists[l].head;
            if c == NO {
                return None;
            }
            self.unlink(c);
            if let Some(s) = self.scan(c, c * self.cs, map, pcp) {
                return Some(s);
            }
            if !all {
                return None;
            }
        }
    }

    /// Clusters whose discard completed by `now` become free, in discard-list order.
    fn settle(&mut self, now: Nanos) {
        loop {
            let c = self.lists[L_DISCARD].head;
            if c == NO || self.discard_done[c as usize] > now {
                return;
            }
            self.move_to(c, L_FREE);
        }
    }

    fn try_alloc(&mut self, cpu: usize, map: &[u8]) -> Option<u32> {
        let pcp = if self.solid_state {
            cpu % self.pcp.len()
        } else {
            0
        };
        let off = self.pcp[pcp];
        if off != 0 {
            let c = off / self.cs;
            let usable = self.flag[c as usize] <= L_FRAG as u8 + 1;
            if usable {
                if let Some(s) = self.scan(c, off, map, pcp) {
                    self.stats.from_current += 1;
                    return Some(s);
                }
            }
        }
        if self.discard_clusters {
            if let Some(s) = self.scan_list(L_FREE, false, map, pcp) {
                self.stats.from_free += 1;
                self.stats.clusters_taken_free += 1;
                return Some(s);
            }
        }
        if let Some(s) = self.scan_list(L_NONFULL, true, map, pcp) {
            self.stats.from_nonfull += 1;
            return Some(s);
        }
        if !self.discard_clusters {
            if let Some(s) = self.scan_list(L_FREE, false, map, pcp) {
                self.stats.from_free += 1;
                self.stats.clusters_taken_free += 1;
                return Some(s);
            }
        }
        if let Some(s) = self.scan_list(L_FRAG, true, map, pcp) {
            self.stats.from_frag += 1;
            return Some(s);
        }
        None
    }
}

impl SlotAllocator for ClusterAllocator {
    fn name(&self) -> &'static str {
        "cluster"
    }

    fn alloc(&mut self, cpu: usize, map: &[u8], now: Nanos) -> Option<(u32, Nanos)> {
        let mut t = now;
        loop {
            self.settle(t);
            if let Some(s) = self.try_alloc(cpu, map) {
                return Some((s, t));
            }
            // Nothing free: wait for the oldest pending discard (`swap_do_scheduled_discard`).
            let c = self.lists[L_DISCARD].head;
            if c == NO || self.discard_done[c as usize] == Nanos::MAX {
                return None;
            }
            self.stats.discard_waits += 1;
            t = t.max(self.discard_done[c as usize]);
        }
    }

    fn free(&mut self, slot: u32) {
        let c = slot / self.cs;
        debug_assert!(self.count[c as usize] > 0);
        self.count[c as usize] -= 1;
        if self.count[c as usize] == 0 {
            self.free_cluster(c);
        } else if !self.on_list(c, L_NONFULL) {
            self.move_to(c, L_NONFULL);
        }
    }

    fn take_discards(&mut self, out: &mut Vec<u32>) {
        out.append(&mut self.pending_discards);
    }

    fn discard_issued(&mut self, cluster: u32, done: Nanos) {
        self.discard_done[cluster as usize] = done;
    }

    fn stats(&self) -> Vec<(&'static str, u64)> {
        let s = &self.stats;
        let mut v = vec![
            ("alloc_from_current_cluster", s.from_current),
            ("alloc_from_free_cluster", s.from_free),
            ("alloc_from_nonfull_cluster", s.from_nonfull),
            ("alloc_from_frag_cluster", s.from_frag),
            ("discard_waits", s.discard_waits),
            ("clusters_taken_free", s.clusters_taken_free),
        ];
        let names = [
            "clusters_free",
            "clusters_nonfull",
            "clusters_frag",
            "clusters_full",
            "clusters_discard",
        ];
        for (i, n) in names.iter().enumerate() {
            v.push((n, self.lists[i].len as u64));
        }
        v
    }

    fn verify(&self, map: &[u8]) -> Result<(), String> {
        let mut lens = [0u32; 5];
        for c in 0..self.ncl {
            let used = map[(c * self.cs) as usize..((c + 1) * self.cs) as usize]
                .iter()
                .filter(|&&m| m != 0)
                .count() as u32;
            if used != self.count[c as usize] {
                return Err(format!(
                    "cluster {c}: count {} but {used} slots used",
                    self.count[c as usize]
                ));
            }
            let f = self.flag[c as usize];
            if f == ISOLATED {
                return Err(format!("cluster {c} is on no list"));
            }
            let l = (f - 1) as usize;
            lens[l] += 1;
            let ok = match l {
                L_FREE => used == 0,
                L_FULL => used == self.cs,
                L_DISCARD => used == 0,
                _ => true,
            };
            if !ok {
                return Err(format!(
                    "cluster {c} on the {} list with {used} slots used",
                    LIST_NAMES[l]
                ));
            }
        }
        for (l, len) in lens.iter().enumerate() {
            if *len != self.lists[l].len {
                return Err(format!("{} list length mismatch", LIST_NAMES[l]));
            }
            let mut n = 0;
            let mut c = self.lists[l].head;
            while c != NO {
                n += 1;
                if n > self.ncl {
                    return Err(format!("{} list has a cycle", LIST_NAMES[l]));
                }
                c = self.next[c as usize];
            }
            if n != *len {
                return Err(format!("{} list links broken", LIST_NAMES[l]));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area(nslots: u32, cs: u32) -> Vec<u8> {
        let mut map = vec![0u8; nslots.div_ceil(cs) as usize * cs as usize];
        map[0] = MAP_BAD;
        for m in map.iter_mut().skip(nslots as usize) {
            *m = MAP_BAD;
        }
        map
    }

    #[test]
    fn conformance() {
        for (solid, discard) in [(true, false), (false, false), (true, true)] {
            super::super::conformance::run(
                &|n| {
                    let map = area(n, 256);
                    (
                        Box::new(ClusterAllocator::new(&map, 256, 3, solid, discard))
                            as Box<dyn SlotAllocator>,
                        map,
                    )
                },
                7,
            );
        }
    }

    #[test]
    fn starts_after_the_header_and_fills_clusters_in_order() {
        let mut map = area(4 * 256, 256);
        let mut a = ClusterAllocator::new(&map, 256, 1, true, false);
        let mut got = Vec::new();
        for _ in 0..300 {
            let (s, _) = a.alloc(0, &map, Nanos(0)).unwrap();
            map[s as usize] = 1;
            got.push(s);
        }
        // Cluster 0 (with the header) is nonfull: slots 1..255, then cluster 1.
        assert_eq!(got[0], 1);
        assert_eq!(got[254], 255);
        assert_eq!(got[255], 256);
        assert_eq!(got[299], 300);
    }

    #[test]
    fn with_discard_free_clusters_come_first_and_an_emptied_cluster_is_withheld() {
        let mut map = area(4 * 256, 256);
        let mut a = ClusterAllocator::new(&map, 256, 1, true, true);
        let (s, _) = a.alloc(0, &map, Nanos(0)).unwrap();
        assert_eq!(s, 256, "discard mode skips the header's nonfull cluster");
        map[s as usize] = 1;
        // Free it: the cluster is emptied and must be discarded before reuse.
        map[s as usize] = 0;
        a.free(s);
        let mut d = Vec::new();
        a.take_discards(&mut d);
        assert_eq!(d, vec![1]);
        a.discard_issued(1, Nanos(500));
        // Before the discard ends, cluster 2 is used; cluster 1 returns to the free tail at 500.
        let (s, t) = a.alloc(0, &map, Nanos(10)).unwrap();
        assert_eq!((s, t), (512, Nanos(10)));
        a.verify(&{
            let mut m = map.clone();
            m[s as usize] = 1;
            m
        })
        .unwrap();
    }

    #[test]
    fn freed_slots_in_a_full_cluster_are_reused_before_free_clusters() {
        let mut map = area(4 * 256, 256);
        let mut a = ClusterAllocator::new(&map, 256, 1, true, false);
        for _ in 0..255 + 256 {
            let (s, _) = a.alloc(0, &map, Nanos(0)).unwrap();
            map[s as usize] = 1;
        }
        // Clusters 0 and 1 are full; free two slots of cluster 0.
        for s in [10, 20] {
            map[s] = 0;
            a.free(s as u32);
        }
        let mut got = Vec::new();
        for _ in 0..3 {
            let (s, _) = a.alloc(0, &map, Nanos(0)).unwrap();
            map[s as usize] = 1;
            got.push(s);
        }
        assert_eq!(got, vec![10, 20, 512]);
    }
}
