//! Hot/cold by access history (`ZNS_POLICY_STATIC_HEAT`): the page's accessed bit is sampled at every
//! reclaim scan (newest sample in bit 0); a page with at most one sample goes to swap-zone 0, otherwise
//! to the number of its previous 16 samples that were set (the newest one left out), capped at the last
//! swap-zone. Pages referenced equally often — similar lifetimes in swap — share zones.

use super::{PageInfo, ZonePolicy};

pub struct HotColdPolicy;

/// The temperature class of a page: referenced samples among its previous 16.
pub fn heat(page: &PageInfo) -> u32 {
    if page.samples <= 1 {
        return 0;
    }
    ((page.history >> 1) & 0xffff).count_ones()
}

impl ZonePolicy for HotColdPolicy {
    fn name(&self) -> &'static str {
        "hot_cold"
    }
    fn place(&self, page: &PageInfo, streams: u32) -> u32 {
        heat(page).min(streams - 1)
    }
    fn streams_used(&self, streams: u32, _cpus: u32) -> u32 {
        streams.min(17)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(history: u32, samples: u8) -> PageInfo {
        PageInfo {
            history,
            samples,
            ..PageInfo::default()
        }
    }

    #[test]
    fn hotter_pages_go_to_higher_swap_zones() {
        let p = HotColdPolicy;
        assert_eq!(p.place(&page(0xffff_ffff, 1), 13), 0); // one sample: no history yet
        assert_eq!(p.place(&page(0b1, 5), 13), 0); // only the newest sample set
        assert_eq!(p.place(&page(0b0110, 5), 13), 2);
        assert_eq!(p.place(&page(0b1111_1110, 9), 13), 7);
        assert_eq!(p.place(&page(0xffff_ffff, 32), 13), 12); // 16 hot samples, capped
        assert_eq!(p.place(&page(0xffff_ffff, 32), 20), 16);
        // Samples older than 16 do not count.
        assert_eq!(heat(&page(0xfffe_0000, 32)), 0);
    }
}
