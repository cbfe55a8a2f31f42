//! ZNSwap placement policies (`[host.swap.backend.policy]`): which swap-zone a swapped-out page is
//! appended to, and optionally which zone the GC reclaims — the paper's policy API (Table 1: `pg_inf`,
//! `zn_inf`, `swap_inf`, `rec_zn`) as a trait.
//!
//! # Contract of [`ZonePolicy`]
//! * `place` is a pure function of the page's information and the number of swap-zones: the same page
//!   on the same CPU goes to the same swap-zone (the backend asks twice: once to count the zones a
//!   submission needs, once to write it). It returns a swap-zone index below `streams`.
//! * `victim` sees every zone's statistics and may return a zone to reclaim; it returns only a zone
//!   whose `reclaimable` flag is set (a full zone, not the one being collected, not the emergency
//!   zone), or `None` to leave the choice to the default (the full zone with the most invalid +
//!   swap-cached slots).
//! * Deterministic: ties break by the lowest index.

mod cgroup;
mod hot_cold;
mod per_core;
mod single;

pub use cgroup::CgroupPolicy;
pub use hot_cold::HotColdPolicy;
pub use per_core::PerCorePolicy;
pub use single::SinglePolicy;

use super::ZonePolicyConfig;

/// What a policy knows about a page being swapped out (`pg_inf`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageInfo {
    pub vpn: u32,
    /// The page's cgroup (0 = root).
    pub memcg: u16,
    /// The CPU reclaiming it.
    pub cpu: u16,
    /// Accessed-bit samples, newest in bit 0 (one per reclaim scan of the page).
    pub history: u32,
    /// How many samples `history` holds (at most 32).
    pub samples: u8,
}

/// One zone as a policy sees it (`zn_inf`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZoneStat {
    pub zone: u32,
    /// Slots appended so far.
    pub written: u32,
    /// Slots freed since (their data is garbage).
    pub invalid: u32,
    /// Slots held only by the swap cache (the page is resident; the GC drops the copy, no write).
    pub cached: u32,
    /// The swap-zone whose data the zone holds (`u32::MAX`: none — free or emergency).
    pub stream: u32,
    /// A candidate GC victim: full, not being collected, not the emergency zone.
    pub reclaimable: bool,
    /// Holds swap data (open, full or being collected).
    pub in_use: bool,
}

impl ZoneStat {
    /// Slots the GC would have to copy.
    pub fn valid(&self) -> u32 {
        self.written - self.invalid - self.cached
    }
}

/// A placement (and reclamation) policy. See the module documentation for the contract.
pub trait ZonePolicy: Send {
    fn name(&self) -> &'static str;
    /// The swap-zone (`< streams`) of a page being swapped out.
    fn place(&self, page: &PageInfo, streams: u32) -> u32;
    /// How many of the `streams` swap-zones the policy can use with `cpus` CPUs (sizes the spare space
    /// the open zones take).
    fn streams_used(&self, streams: u32, cpus: u32) -> u32 {
        streams.min(cpus.max(1))
    }
    /// A zone to reclaim (slot capacity `cap` per zone), or `None` for the default choice.
    fn victim(&self, _zones: &[ZoneStat], _cap: u32, _streams: u32) -> Option<u32> {
        None
    }
    /// Whether the GC's I/O is charged to the pages' cgroups unless configured.
    fn accounts_gc(&self) -> bool {
        false
    }
}

/// The policy a config names; `cgroups` are the cgroup names, root first.
pub fn build(cfg: &ZonePolicyConfig, cgroups: &[String]) -> Box<dyn ZonePolicy> {
    match cfg {
        ZonePolicyConfig::Single => Box::new(SinglePolicy),
        ZonePolicyConfig::PerCore => Box::new(PerCorePolicy),
        ZonePolicyConfig::HotCold => Box::new(HotColdPolicy),
        ZonePolicyConfig::Cgroup { swap_slots } => {
            let limits = cgroups.iter().map(|n| swap_slots.get(n).copied()).collect();
            Box::new(CgroupPolicy::new(limits))
        }
    }
}

/// The default victim (ZNSwap's `find_victim_zone`): the reclaimable zone with the most invalid +
/// swap-cached slots, if it has any.
pub fn greedy_victim(zones: &[ZoneStat]) -> Option<u32> {
    let mut best: Option<(u32, u32)> = None;
    for z in zones.iter().filter(|z| z.reclaimable) {
        let r = z.invalid + z.cached;
        if r > 0 && best.is_none_or(|(_, b)| r > b) {
            best = Some((z.zone, r));
        }
    }
    best.map(|(z, _)| z)
}

#[cfg(test)]
mod conformance {
    //! Every policy: swap-zones in range, a pure `place`, victims only among reclaimable zones.
    use super::*;
    use nandstack_core::Rng;

    fn policies() -> Vec<Box<dyn ZonePolicy>> {
        let names: Vec<String> = ["root", "a", "b"].iter().map(|s| s.to_string()).collect();
        let mut slots = std::collections::BTreeMap::new();
        slots.insert("a".to_string(), 100);
        [
            ZonePolicyConfig::Single,
            ZonePolicyConfig::PerCore,
            ZonePolicyConfig::HotCold,
            ZonePolicyConfig::Cgroup { swap_slots: slots },
        ]
        .iter()
        .map(|c| build(c, &names))
        .collect()
    }

    #[test]
    fn every_policy_keeps_its_contract() {
        let mut rng = Rng::new(7);
        for p in policies() {
            for streams in [1, 2, 5, 13] {
                for _ in 0..2000 {
                    let page = PageInfo {
                        vpn: rng.below(1 << 20) as u32,
                        memcg: rng.below(3) as u16,
                        cpu: rng.below(64) as u16,
                        history: rng.next_u64() as u32,
                        samples: rng.below(33) as u8,
                    };
                    let s = p.place(&page, streams);
                    assert!(s < streams, "{}: swap-zone {s} of {streams}", p.name());
                    assert_eq!(s, p.place(&page, streams), "{}: not pure", p.name());
                }
                assert!(p.streams_used(streams, 4) <= streams);
            }
            // Victims: only reclaimable zones.
            for _ in 0..200 {
                let cap = 64;
                let zones: Vec<ZoneStat> = (0..20)
                    .map(|z| {
                        let written = rng.below(cap as u64 + 1) as u32;
                        let invalid = rng.below(written as u64 + 1) as u32;
                        let cached = rng.below((written - invalid) as u64 + 1) as u32;
                        ZoneStat {
                            zone: z,
                            written,
                            invalid,
                            cached,
                            stream: rng.below(13) as u32,
                            reclaimable: written == cap && rng.chance(0.7),
                            in_use: written > 0,
                        }
                    })
                    .collect();
                if let Some(v) = p.victim(&zones, cap, 13) {
                    assert!(zones[v as usize].reclaimable, "{}: victim {v}", p.name());
                }
                if let Some(v) = greedy_victim(&zones) {
                    let best = zones
                        .iter()
                        .filter(|z| z.reclaimable)
                        .map(|z| z.invalid + z.cached)
                        .max()
                        .unwrap();
                    assert_eq!(zones[v as usize].invalid + zones[v as usize].cached, best);
                }
            }
        }
    }
}
