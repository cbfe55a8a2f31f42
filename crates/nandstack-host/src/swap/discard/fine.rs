//! Fine-grained discard: each aligned group of N slots is discarded as soon as its last slot is freed
//! (a group that is reused and emptied again is discarded again). Not in upstream Linux; the ZNSwap
//! artefact's `trim_4k` knob (5.12 `mark_bio_swap_discard`) and the DISS-style alternative that
//! invalidates stale swap data early. With `skip_emptied_clusters` (the artefact's
//! `dec_cluster_info_page`), a group whose whole cluster is free once the slot is freed is not
//! discarded: the emptied cluster goes back to the free list instead. The artefact also withholds the
//! group from allocation until its TRIM completes; that is not modelled.

use super::DiscardPolicy;

pub struct FineDiscard {
    n: u32,
    /// Slots per cluster when an emptied cluster's group is not discarded.
    skip_emptied: Option<u32>,
}

impl FineDiscard {
    pub fn new(n: u32) -> FineDiscard {
        assert!(n >= 1);
        FineDiscard {
            n,
            skip_emptied: None,
        }
    }

    /// Groups of clusters (of `cluster_slots`) emptied by the free are not discarded.
    pub fn skip_emptied_clusters(mut self, cluster_slots: u32) -> FineDiscard {
        self.skip_emptied = Some(cluster_slots);
        self
    }
}

impl DiscardPolicy for FineDiscard {
    fn name(&self) -> &'static str {
        "fine"
    }
    fn slot_freed(&mut self, slot: u32, map: &[u8], out: &mut Vec<(u32, u32)>) {
        let first = slot / self.n * self.n;
        let end = (first + self.n).min(map.len() as u32);
        if !map[first as usize..end as usize].iter().all(|&m| m == 0) {
            return;
        }
        if let Some(cs) = self.skip_emptied {
            let c0 = slot / cs * cs;
            let c1 = (c0 + cs).min(map.len() as u32);
            if map[c0 as usize..c1 as usize].iter().all(|&m| m == 0) {
                return;
            }
        }
        out.push((first, end - first));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discards_a_group_when_its_last_slot_is_freed() {
        let mut map = vec![1u8; 32];
        let mut d = FineDiscard::new(8);
        let mut out = Vec::new();
        for s in 8..15 {
            map[s] = 0;
            d.slot_freed(s as u32, &map, &mut out);
        }
        assert!(out.is_empty());
        map[15] = 0;
        d.slot_freed(15, &map, &mut out);
        assert_eq!(out, vec![(8, 8)]);
    }

    /// Clusters of 16: freeing group 8..16 discards it while slot 0 is in use; once the cluster is
    /// empty its last group is not discarded (the artefact's emptied-cluster path).
    #[test]
    fn an_emptied_clusters_last_group_is_not_discarded_when_skipping() {
        let mut map = vec![1u8; 32];
        let mut d = FineDiscard::new(8).skip_emptied_clusters(16);
        let mut out = Vec::new();
        for s in 8..16 {
            map[s] = 0;
            d.slot_freed(s as u32, &map, &mut out);
        }
        assert_eq!(out, vec![(8, 8)]);
        out.clear();
        for s in 0..8 {
            map[s] = 0;
            d.slot_freed(s as u32, &map, &mut out);
        }
        assert!(out.is_empty(), "{out:?}");
        // The other cluster, same order, without skipping: both groups discarded.
        let mut d = FineDiscard::new(8);
        for s in (24..32).chain(16..24) {
            map[s] = 0;
            d.slot_freed(s as u32, &map, &mut out);
        }
        assert_eq!(out, vec![(24, 8), (16, 8)]);
    }
}
