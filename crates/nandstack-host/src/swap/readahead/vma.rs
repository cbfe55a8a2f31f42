//! VMA-based swap readahead (`swap_vma_readahead`): read the swapped-out neighbours of the faulting
//! virtual page, inside its VMA and its 2 MiB (PMD) region. The window comes from the VMA's readahead
//! hits: after a fault that follows the previous one (+1) the window starts at the fault, after one that
//! precedes it (−1) it ends at the fault, otherwise it is centred. Swap-cache hits update the VMA's last
//! address and count readahead hits.

use super::{swapin_nr_pages, RaInput, Readahead};
use crate::vm::page::{is_swap, pte_slot};
use crate::vm::VmaRa;

/// Pages per PMD region (2 MiB / 4 KiB).
const PMD_PAGES: u32 = 512;
/// `SWAP_RA_HITS_MAX`.
const HITS_MAX: u32 = 255;

pub struct VmaReadahead {
    max_win: u32,
}

impl VmaReadahead {
    pub fn new(page_cluster: u32) -> VmaReadahead {
        VmaReadahead {
            max_win: 1 << page_cluster.min(5),
        }
    }
}

impl Readahead for VmaReadahead {
    fn name(&self) -> &'static str {
        "vma"
    }

    fn window(&mut self, inp: &RaInput, ra: &mut VmaRa, out: &mut Vec<(u32, u32)>) -> u32 {
        let f = inp.fault_vpn;
        if self.max_win == 1 {
            ra.win = 1;
            out.push((f, inp.slot));
            return 1;
        }
        let win = swapin_nr_pages(ra.prev_vpn, f, ra.hits, self.max_win, ra.win);
        let prev = ra.prev_vpn;
        *ra = VmaRa {
            prev_vpn: f,
            win,
            hits: 0,
        };
        if win == 1 {
            out.push((f, inp.slot));
            return 1;
        }
        let (lo, hi) = if prev != u32::MAX && f == prev.wrapping_add(1) {
            (f as i64, f as i64 + win as i64)
        } else if prev != u32::MAX && prev == f.wrapping_add(1) {
            (f as i64 - win as i64 + 1, f as i64 + 1)
        } else {
            let left = (win as i64 - 1) / 2;
            (f as i64 - left, f as i64 + win as i64 - left)
        };
        let pmd = (f / PMD_PAGES * PMD_PAGES) as i64;
        let start = lo.max(inp.vma_start as i64).max(pmd) as u32;
        let end = hi.min(inp.vma_end as i64).min(pmd + PMD_PAGES as i64) as u32;
        for v in start..end {
            let pte = inp.ptes[v as usize];
            if v == f {
                out.push((f, inp.slot));
            } else if is_swap(pte) {
                out.push((v, pte_slot(pte)));
            }
        }
        win
    }

    fn hit(&mut self, ra: &mut VmaRa, vpn: u32, readahead: bool) {
        ra.prev_vpn = vpn;
        if readahead {
            ra.hits = (ra.hits + 1).min(HITS_MAX);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::page::pte_swap;

    #[test]
    fn sequential_faults_read_forward_windows() {
        let ptes: Vec<u32> = (0..1024).map(|v| pte_swap(v + 1)).collect();
        let map = vec![1u8; 2048];
        let owner = vec![0u32; 2048];
        let mut ra = VmaRa::default();
        let mut ra_pol = VmaReadahead::new(3);
        let mut win = |f: u32, ra: &mut VmaRa| {
            let mut out = Vec::new();
            let inp = RaInput {
                ptes: &ptes,
                vma_start: 0,
                vma_end: 1024,
                fault_vpn: f,
                slot: f + 1,
                map: &map,
                owner: &owner,
                nslots: 2048,
            };
            ra_pol.window(&inp, ra, &mut out);
            out.iter().map(|p| p.0).collect::<Vec<_>>()
        };
        assert_eq!(win(0, &mut ra), vec![0]);
        assert_eq!(win(1, &mut ra), vec![1, 2]);
        // Page 2 was read ahead and is hit; then 3 faults with one hit: window 4 forward.
        VmaReadahead::new(3).hit(&mut ra, 2, true);
        assert_eq!(win(3, &mut ra), vec![3, 4, 5, 6]);
        for v in 4..7 {
            VmaReadahead::new(3).hit(&mut ra, v, true);
        }
        assert_eq!(win(7, &mut ra), (7..15).collect::<Vec<_>>());
        // The 2 MiB region bounds the window.
        ra = VmaRa {
            prev_vpn: 508,
            win: 8,
            hits: 7,
        };
        assert_eq!(win(509, &mut ra), vec![509, 510, 511]);
    }
}
