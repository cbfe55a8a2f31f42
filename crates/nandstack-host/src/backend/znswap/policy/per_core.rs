//! Per-core: swap-zone = the reclaiming CPU mod the swap-zones (`ZNS_POLICY_CPU`), as Linux gives each
//! CPU its own swap cluster; with more CPUs than swap-zones they share.

use super::{PageInfo, ZonePolicy};

pub struct PerCorePolicy;

impl ZonePolicy for PerCorePolicy {
    fn name(&self) -> &'static str {
        "per_core"
    }
    fn place(&self, page: &PageInfo, streams: u32) -> u32 {
        page.cpu as u32 % streams
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_picks_the_swap_zone() {
        let at = |cpu| {
            PerCorePolicy.place(
                &PageInfo {
                    cpu,
                    ..PageInfo::default()
                },
                13,
            )
        };
        assert_eq!([at(0), at(1), at(12), at(13), at(27)], [0, 1, 12, 0, 1]);
        assert_eq!(PerCorePolicy.streams_used(13, 4), 4);
        assert_eq!(PerCorePolicy.streams_used(13, 64), 13);
    }
}
