//! Single: every page to swap-zone 0 (ZNSwap's `ZNS_POLICY_NAIVE`): one append stream, every page's
//! lifetime mixed in the same zones.

use super::{PageInfo, ZonePolicy};

pub struct SinglePolicy;

impl ZonePolicy for SinglePolicy {
    fn name(&self) -> &'static str {
        "single"
    }
    fn place(&self, _page: &PageInfo, _streams: u32) -> u32 {
        0
    }
    fn streams_used(&self, _streams: u32, _cpus: u32) -> u32 {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_goes_to_swap_zone_zero() {
        for cpu in 0..8 {
            let p = PageInfo {
                cpu,
                vpn: cpu as u32 * 7,
                ..PageInfo::default()
            };
            assert_eq!(SinglePolicy.place(&p, 13), 0);
        }
    }
}
