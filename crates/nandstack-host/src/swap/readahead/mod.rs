//! Swap readahead policies.
//!
//! # Contract of [`Readahead`]
//! * `window(input, ra, out)` is called on each major swap fault (the faulting page is not in the swap
//!   cache). It appends `(vpn, slot)` pairs to read, in ascending order of the policy's address
//!   (virtual for VMA readahead, slot for cluster readahead), and must include the faulting page. It
//!   may list pages whose slot is already in the swap cache; the swap layer skips those. Every listed
//!   slot must be in use and referenced by exactly the listed vpn's PTE. It returns the window size
//!   in pages: 1 means no readahead (the kernel then reads the faulting page alone, without a block
//!   plug: `goto skip` in `swap_vma_readahead` / `swap_cluster_readahead`), more means the window's
//!   reads are submitted under one plug.
//! * `hit(ra, vpn, readahead)` is called when a fault finds its page in the swap cache; `readahead` is
//!   true when the page carried PG_readahead (first use of a readahead page).
//! * The window never exceeds 2^page_cluster pages; state is deterministic.

mod cluster;
mod vma;

pub use cluster::ClusterReadahead;
pub use vma::VmaReadahead;

use crate::vm::VmaRa;

/// What a readahead policy may look at.
pub struct RaInput<'a> {
    pub ptes: &'a [u32],
    /// VMA bounds in global vpns.
    pub vma_start: u32,
    pub vma_end: u32,
    pub fault_vpn: u32,
    pub slot: u32,
    /// Swap map (counts), owners of slots, number of slots.
    pub map: &'a [u8],
    pub owner: &'a [u32],
    pub nslots: u32,
}

pub trait Readahead {
    fn name(&self) -> &'static str;
    fn window(&mut self, input: &RaInput, ra: &mut VmaRa, out: &mut Vec<(u32, u32)>) -> u32;
    fn hit(&mut self, ra: &mut VmaRa, vpn: u32, readahead: bool);
}

/// `__swapin_nr_pages`: the window from the hits of the last window, the distance between this fault
/// and the previous one, the largest window and the previous window (halved at most per step).
pub fn swapin_nr_pages(prev: u32, cur: u32, hits: u32, max_pages: u32, prev_win: u32) -> u32 {
    let mut pages = hits + 2;
    if pages == 2 {
        if !adjacent(prev, cur) {
            pages = 1;
        }
    } else {
        let mut roundup = 4;
        while roundup < pages {
            roundup <<= 1;
        }
        pages = roundup;
    }
    pages = pages.min(max_pages);
    let last_ra = prev_win / 2;
    pages.max(last_ra)
}

/// `cur` follows or precedes `prev` by one page (`prev == u32::MAX`: no previous fault).
pub fn adjacent(prev: u32, cur: u32) -> bool {
    prev != u32::MAX && (cur == prev.wrapping_add(1) || cur.wrapping_add(1) == prev)
}

/// No readahead: only the faulting page.
pub struct NoReadahead;

impl Readahead for NoReadahead {
    fn name(&self) -> &'static str {
        "off"
    }
    fn window(&mut self, input: &RaInput, _ra: &mut VmaRa, out: &mut Vec<(u32, u32)>) -> u32 {
        out.push((input.fault_vpn, input.slot));
        1
    }
    fn hit(&mut self, _ra: &mut VmaRa, _vpn: u32, _readahead: bool) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_grows_with_hits_and_shrinks_by_halves() {
        // No hits, not adjacent: one page.
        assert_eq!(swapin_nr_pages(100, 500, 0, 8, 0), 1);
        // No hits but adjacent: two.
        assert_eq!(swapin_nr_pages(100, 101, 0, 8, 0), 2);
        // Hits round up to a power of two ≥ 4, capped by the maximum.
        assert_eq!(swapin_nr_pages(0, 500, 1, 8, 0), 4);
        assert_eq!(swapin_nr_pages(0, 500, 7, 8, 0), 8);
        // Random faults after a window of 8 decay 8 → 4 → 2 → 1.
        assert_eq!(swapin_nr_pages(0, 500, 0, 8, 8), 4);
        assert_eq!(swapin_nr_pages(0, 500, 0, 8, 4), 2);
        assert_eq!(swapin_nr_pages(0, 500, 0, 8, 2), 1);
    }
}
