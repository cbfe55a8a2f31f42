//! Per-cgroup (the paper's §4.3 example policy): the swap-zones are split among the cgroups — cgroup
//! `m` owns the swap-zones `s` with `s mod groups = m mod groups`, where `groups` = min(cgroups,
//! swap-zones) — and within its share a page goes by CPU. So a cgroup's data, and the GC copies of it,
//! stay in its own zones. With swap-slot allocations set, the GC victim comes from the cgroup whose
//! zones exceed its allocation (⌈slots / zone capacity⌉ zones) the most: its full zone with the fewest
//! valid slots. The GC's I/O is charged to the owning cgroup (`zns_cgroup_account`).

use super::{PageInfo, ZonePolicy, ZoneStat};

pub struct CgroupPolicy {
    /// Swap-slot allocation per cgroup (root first); `None` = unlimited.
    limits: Vec<Option<u64>>,
}

impl CgroupPolicy {
    pub fn new(limits: Vec<Option<u64>>) -> CgroupPolicy {
        CgroupPolicy { limits }
    }

    fn groups(&self, streams: u32) -> u32 {
        (self.limits.len().max(1) as u32).min(streams)
    }

    /// The allocation of group `g` in zones: the sum over its cgroups, unlimited if any is.
    fn allocation_zones(&self, g: u32, groups: u32, cap: u32) -> Option<u64> {
        let mut slots = 0u64;
        for (m, l) in self.limits.iter().enumerate() {
            if m as u32 % groups == g {
                slots += (*l)?;
            }
        }
        Some(slots.div_ceil(cap as u64))
    }
}

impl ZonePolicy for CgroupPolicy {
    fn name(&self) -> &'static str {
        "cgroup"
    }

    fn place(&self, page: &PageInfo, streams: u32) -> u32 {
        let groups = self.groups(streams);
        let g = page.memcg as u32 % groups;
        // Swap-zones g, g + groups, g + 2·groups, … below `streams`.
        let share = (streams - g).div_ceil(groups);
        g + groups * (page.cpu as u32 % share)
    }

    fn streams_used(&self, streams: u32, _cpus: u32) -> u32 {
        streams
    }

    fn victim(&self, zones: &[ZoneStat], cap: u32, streams: u32) -> Option<u32> {
        let groups = self.groups(streams);
        let mut used = vec![0u64; groups as usize];
        for z in zones.iter().filter(|z| z.in_use && z.stream < streams) {
            used[(z.stream % groups) as usize] += 1;
        }
        // The group furthest over its allocation.
        let mut worst: Option<(u32, u64)> = None;
        for g in 0..groups {
            let Some(alloc) = self.allocation_zones(g, groups, cap) else {
                continue;
            };
            let over = used[g as usize].saturating_sub(alloc);
            if over > 0 && worst.is_none_or(|(_, w)| over > w) {
                worst = Some((g, over));
            }
        }
        let (g, _) = worst?;
        // Its full zone with the fewest valid slots (that has something to reclaim).
        zones
            .iter()
            .filter(|z| {
                z.reclaimable
                    && z.stream < streams
                    && z.stream % groups == g
                    && z.valid() < z.written
            })
            .min_by_key(|z| (z.valid(), z.zone))
            .map(|z| z.zone)
    }

    fn accounts_gc(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cgroup_gets_its_own_swap_zones() {
        let p = CgroupPolicy::new(vec![None, None, None]); // root, a, b
        let at = |memcg, cpu| {
            p.place(
                &PageInfo {
                    memcg,
                    cpu,
                    ..PageInfo::default()
                },
                13,
            )
        };
        // 3 groups over 13 swap-zones: root {0,3,6,9,12}, a {1,4,7,10}, b {2,5,8,11}.
        assert_eq!(
            (0..6).map(|c| at(1, c)).collect::<Vec<_>>(),
            [1, 4, 7, 10, 1, 4]
        );
        assert_eq!(
            (0..6).map(|c| at(2, c)).collect::<Vec<_>>(),
            [2, 5, 8, 11, 2, 5]
        );
        assert_eq!(
            (0..6).map(|c| at(0, c)).collect::<Vec<_>>(),
            [0, 3, 6, 9, 12, 0]
        );
        // More cgroups than swap-zones: they share.
        let p = CgroupPolicy::new(vec![None; 5]);
        assert_eq!(
            p.place(
                &PageInfo {
                    memcg: 4,
                    ..PageInfo::default()
                },
                2
            ),
            0
        );
    }

    fn zone(zone: u32, stream: u32, invalid: u32, cached: u32) -> ZoneStat {
        ZoneStat {
            zone,
            written: 10,
            invalid,
            cached,
            stream,
            reclaimable: true,
            in_use: true,
        }
    }

    #[test]
    fn the_victim_comes_from_the_cgroup_most_over_its_allocation() {
        // Capacity 10 slots per zone; a (group 1) may use 20 slots = 2 zones, b (group 2) 10 = 1 zone.
        let p = CgroupPolicy::new(vec![None, Some(20), Some(10)]);
        // a holds 3 zones (1 over), b holds 3 zones (2 over): the victim is b's emptiest zone.
        let zones = [
            zone(0, 1, 9, 0),
            zone(1, 1, 1, 0),
            zone(2, 4, 0, 0),
            zone(3, 2, 2, 1), // b: 7 valid
            zone(4, 5, 5, 0), // b: 5 valid ← fewest
            zone(5, 8, 1, 1), // b: 8 valid
        ];
        assert_eq!(p.victim(&zones, 10, 13), Some(4));
        // Nobody over: the default choice.
        let p = CgroupPolicy::new(vec![None, Some(100), None]);
        assert_eq!(p.victim(&zones, 10, 13), None);
        // A zone being collected is not a candidate.
        let p = CgroupPolicy::new(vec![None, Some(20), Some(10)]);
        let mut z = zones;
        z[4].reclaimable = false;
        assert_eq!(p.victim(&z, 10, 13), Some(3));
    }
}
