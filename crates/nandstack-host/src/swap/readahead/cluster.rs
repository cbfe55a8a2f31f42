//! Physical (cluster) swap readahead (`swap_cluster_readahead`): read the aligned block of
//! `swapin_nr_pages` slots around the faulting slot, skipping the header, free slots and slots already
//! cached. One global state: the previous faulting slot, the last window, and the readahead hits since.

use super::{swapin_nr_pages, RaInput, Readahead};
use crate::swap::map_count;
use crate::vm::VmaRa;

pub struct ClusterReadahead {
    max_pages: u32,
    prev_offset: u32,
    last_pages: u32,
    hits: u32,
}

impl ClusterReadahead {
    pub fn new(page_cluster: u32) -> ClusterReadahead {
        ClusterReadahead {
            max_pages: 1 << page_cluster.min(5),
            prev_offset: 0,
            last_pages: 0,
            hits: 0,
        }
    }
}

impl Readahead for ClusterReadahead {
    fn name(&self) -> &'static str {
        "cluster"
    }

    fn window(&mut self, inp: &RaInput, _ra: &mut VmaRa, out: &mut Vec<(u32, u32)>) -> u32 {
        let offset = inp.slot;
        let pages = if self.max_pages <= 1 {
            1
        } else {
            let hits = std::mem::take(&mut self.hits);
            let p = swapin_nr_pages(
                self.prev_offset,
                offset,
                hits,
                self.max_pages,
                self.last_pages,
            );
            if hits == 0 {
                self.prev_offset = offset;
            }
            self.last_pages = p;
            p
        };
        let mask = pages - 1;
        if mask == 0 {
            out.push((inp.fault_vpn, offset));
            return 1;
        }
        let start = (offset & !mask).max(1);
        let end = (offset | mask).min(inp.nslots - 1);
        for s in start..=end {
            if s == offset {
                out.push((inp.fault_vpn, s));
            } else if map_count(inp.map[s as usize]) > 0 {
                out.push((inp.owner[s as usize], s));
            }
        }
        pages
    }

    fn hit(&mut self, _ra: &mut VmaRa, _vpn: u32, readahead: bool) {
        if readahead {
            self.hits += 1;
        }
    }
}
