//! Virtual memory: page tables, page frames, LRU lists, memory cgroups, processes and their mappings.
//!
//! Everything is Vec-indexed: a PTE array over global virtual page numbers, a frame array and beside
//! it the frames' intrusive LRU links, a stack of free frames. No hashing, no allocation on the hit path.

pub mod counters;
pub mod fault;
pub mod memcg;
pub mod page;
pub mod vmstats;
pub mod workingset;

use memcg::{ListHead, Memcg};
use page::*;

/// What a virtual memory area maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VmaKind {
    /// Private anonymous memory.
    Anon,
    /// A file mapped from page `offset` of file `file`; `shared` mappings write to the file (dirty
    /// page-cache pages), private ones copy on write into anonymous pages; `exec` marks VM_EXEC.
    File {
        file: u32,
        offset: u32,
        shared: bool,
        exec: bool,
    },
}

/// Swap readahead state of a VMA (`vma->swap_readahead_info`): last fault or hit, window, hits.
#[derive(Clone, Copy, Debug)]
pub struct VmaRa {
    pub prev_vpn: u32,
    pub win: u32,
    pub hits: u32,
}
impl Default for VmaRa {
    fn default() -> Self {
        VmaRa {
            prev_vpn: NONE,
            win: 0,
            hits: 0,
        }
    }
}

/// A mapping of a process, in global vpns `[start, start + pages)`.
#[derive(Clone, Debug)]
pub struct Vma {
    pub start: u32,
    pub pages: u32,
    pub kind: VmaKind,
    pub ra: VmaRa,
}
impl Vma {
    pub fn end(&self) -> u32 {
        self.start + self.pages
    }
}

/// A process: a vpn range, its mappings, its cgroup, and which page-table pages exist.
#[derive(Clone, Debug)]
pub struct Process {
    pub name: String,
    pub memcg: u16,
    pub base: u32,
    pub pages: u32,
    /// Sorted by start, non-overlapping, inside `[base, base + pages)`.
    pub vmas: Vec<Vma>,
    /// One bit per 2 MiB region: a PTE page was allocated for it.
    pub pte_pages: Vec<u64>,
    /// One bit per 1 GiB region: a PMD page was allocated for it.
    pub pmd_pages: Vec<u64>,
}

impl Process {
    /// Index of the VMA holding `vpn`.
    pub fn vma_of(&self, vpn: u32) -> Option<usize> {
        let i = self.vmas.partition_point(|v| v.start <= vpn);
        (i > 0 && vpn < self.vmas[i - 1].end()).then(|| i - 1)
    }
}

/// Page tables, frames, cgroups and processes.
pub struct Vm {
    pub ptes: Vec<u32>,
    pub frames: Vec<Frame>,
    /// The LRU links of each frame (`links[f]` is frame f's; [`Link::NONE`] off every list).
    pub links: Vec<Link>,
    /// Free frames (a stack: the most recently freed is reused first).
    pub free: Vec<u32>,
    pub memcgs: Vec<Memcg>,
    pub procs: Vec<Process>,
    /// Watermarks in pages: (min, low, high).
    pub wmark: (u64, u64, u64),
    /// Pages of page tables.
    pub kernel_pages: u64,
    /// Owner process of each vpn range start (for reverse lookup), sorted by base.
    proc_bases: Vec<(u32, u16)>,
    /// The memcg statistics reclaim reads, and their periodic flush.
    pub stats_flush: vmstats::StatsFlush,
}

impl Vm {
    pub fn new(frames: u32, wmark: (u64, u64, u64), memcgs: Vec<Memcg>) -> Vm {
        Self::new_polled(frames, wmark, memcgs, &mut |_, _| Ok(())).expect("no poll fails")
    }

    /// [`Vm::new`], calling `poll(frames done, frames)` between chunks of 2^16 frames when the table
    /// has more than 2^22 (16 GiB of RAM; a smaller one is built in well under a second), so that a
    /// host with a large RAM can be interrupted while it is built (the poll's error is returned).
    pub fn new_polled(
        frames: u32,
        wmark: (u64, u64, u64),
        memcgs: Vec<Memcg>,
        poll: &mut dyn FnMut(u64, u64) -> nandstack_core::Result<()>,
    ) -> nandstack_core::Result<Vm> {
        const CHUNK: u32 = 1 << 16;
        let mut table = Vec::with_capacity(frames as usize);
        let mut links = Vec::with_capacity(frames as usize);
        let mut free = Vec::with_capacity(frames as usize);
        let mut done = 0u32;
        while done < frames {
            if frames > 1 << 22 {
                poll(done as u64, frames as u64)?;
            }
            let n = CHUNK.min(frames - done);
            table.resize(table.len() + n as usize, Frame::FREE);
            links.resize(links.len() + n as usize, Link::NONE);
            // Lowest frame index on top of the stack: the stack holds frames − 1 down to 0.
            free.extend((frames - done - n..frames - done).rev());
            done += n;
        }
        Ok(Vm {
            ptes: Vec::new(),
            frames: table,
            links,
            free,
            memcgs,
            procs: Vec::new(),
            wmark,
            kernel_pages: 0,
            proc_bases: Vec::new(),
            stats_flush: vmstats::StatsFlush::default(),
        })
    }

    /// Add a process whose mappings are given relative to its own page 0; returns its index.
    pub fn add_process(&mut self, name: &str, memcg: u16, pages: u32, vmas: Vec<Vma>) -> usize {
        let base = self.ptes.len() as u32;
        self.ptes.resize(self.ptes.len() + pages as usize, PTE_NONE);
        let vmas = vmas
            .into_iter()
            .map(|mut v| {
                v.start += base;
                v
            })
            .collect();
        let regions = (pages as usize).div_ceil(512);
        self.procs.push(Process {
            name: name.into(),
            memcg,
            base,
            pages,
            vmas,
            pte_pages: vec![0; regions.div_ceil(64)],
            pmd_pages: vec![0; regions.div_ceil(512).div_ceil(64)],
        });
        self.proc_bases.push((base, (self.procs.len() - 1) as u16));
        self.procs.len() - 1
    }

    /// Process owning `vpn`.
    pub fn proc_of(&self, vpn: u32) -> usize {
        let i = self.proc_bases.partition_point(|&(b, _)| b <= vpn);
        self.proc_bases[i - 1].1 as usize
    }

    #[inline]
    pub fn free_pages(&self) -> u64 {
        self.free.len() as u64
    }

    // ---- LRU lists ----------------------------------------------------------------------------

    fn head_mut(&mut self, memcg: u16, list: u8) -> &mut ListHead {
        &mut self.memcgs[memcg as usize].lru[list as usize]
    }

    /// Put `f` at the head (most recent end) of `list` of its cgroup.
    pub fn lru_add_head(&mut self, f: u32, list: u8) {
        debug_assert!(
            self.frames[f as usize].list == LIST_NONE
                || self.frames[f as usize].list == LIST_ISOLATED
        );
        let memcg = self.frames[f as usize].memcg;
        self.frames[f as usize].list = list;
        let h = &mut self.memcgs[memcg as usize].lru[list as usize];
        let old = h.head;
        h.head = f;
        if h.tail == NONE {
            h.tail = f;
        }
        h.len += 1;
        self.links[f as usize] = Link {
            prev: NONE,
            next: old,
        };
        if old != NONE {
            self.links[old as usize].prev = f;
        }
    }

    /// Put `f` at the tail (next to be scanned) of `list` of its cgroup.
    pub fn lru_add_tail(&mut self, f: u32, list: u8) {
        let memcg = self.frames[f as usize].memcg;
        self.frames[f as usize].list = list;
        let h = &mut self.memcgs[memcg as usize].lru[list as usize];
        let old = h.tail;
        h.tail = f;
        if h.head == NONE {
            h.head = f;
        }
        h.len += 1;
        self.links[f as usize] = Link {
            prev: old,
            next: NONE,
        };
        if old != NONE {
            self.links[old as usize].next = f;
        }
    }

    /// Unlink `f` from `list` of cgroup `memcg` (where it is) through the links alone; the frame's
    /// own `list` is the caller's to update.
    #[inline]
    fn unlink(&mut self, f: u32, memcg: u16, list: u8) {
        let Link { prev, next } = std::mem::replace(&mut self.links[f as usize], Link::NONE);
        if prev != NONE {
            self.links[prev as usize].next = next;
        }
        if next != NONE {
            self.links[next as usize].prev = prev;
        }
        let h = self.head_mut(memcg, list);
        if h.head == f {
            h.head = next;
        }
        if h.tail == f {
            h.tail = prev;
        }
        h.len -= 1;
    }

    /// Unlink `f` from its list (it must be on one); leaves it LIST_NONE.
    pub fn lru_del(&mut self, f: u32) {
        let fr = &mut self.frames[f as usize];
        let (list, memcg) = (fr.list, fr.memcg);
        debug_assert!((list as usize) < NR_LRU, "frame {f} not on a list");
        fr.list = LIST_NONE;
        self.unlink(f, memcg, list);
    }

    /// Move `f` to the tail of the list it is on (`folio_rotate_reclaimable`).
    pub fn lru_move_tail(&mut self, f: u32) {
        let list = self.frames[f as usize].list;
        if (list as usize) < NR_LRU {
            self.lru_del(f);
            self.lru_add_tail(f, list);
        }
    }

    /// Isolate up to `n` frames from the tail of `list` (oldest first) into `out`.
    pub fn isolate_tail(&mut self, memcg: u16, list: u8, n: u64, out: &mut Vec<u32>) -> u64 {
        let mut taken = 0;
        while taken < n {
            let t = self.memcgs[memcg as usize].lru[list as usize].tail;
            if t == NONE {
                break;
            }
            // The list and cgroup are known: the walk follows the links alone, and the frame is
            // only written (no load of it on the walk's chain of dependent loads).
            debug_assert!({
                let fr = &self.frames[t as usize];
                fr.list == list && fr.memcg == memcg
            });
            self.unlink(t, memcg, list);
            self.frames[t as usize].list = LIST_ISOLATED;
            out.push(t);
            taken += 1;
        }
        taken
    }

    /// Allocate a free frame for `memcg` (the caller has charged it). None when RAM is exhausted.
    pub fn take_frame(&mut self, memcg: u16) -> Option<u32> {
        let f = self.free.pop()?;
        let fr = &mut self.frames[f as usize];
        debug_assert!(!fr.has(F_INUSE));
        *fr = Frame::FREE;
        fr.flags = F_INUSE;
        fr.memcg = memcg;
        Some(f)
    }

    /// Return a frame (off every list) to the free stack and uncharge it.
    pub fn release_frame(&mut self, f: u32) {
        let fr = &mut self.frames[f as usize];
        debug_assert!(fr.list == LIST_NONE || fr.list == LIST_ISOLATED);
        let memcg = fr.memcg;
        *fr = Frame::FREE;
        debug_assert_eq!(self.links[f as usize], Link::NONE);
        self.free.push(f);
        let m = &mut self.memcgs[memcg as usize];
        m.usage -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_frame_table_is_the_plain_one() {
        // 600,000 frames: ten chunks of 2^16, the last partial.
        let n = 600_000u32;
        let vm = Vm::new(n, (0, 0, 0), vec![Memcg::new("root", u64::MAX, 60)]);
        assert_eq!(vm.frames.len(), n as usize);
        assert!(vm
            .frames
            .iter()
            .all(|f| { (f.vpn, f.key, f.flags, f.list) == (NONE, NONE, 0, LIST_NONE) }));
        assert!(vm.links.iter().all(|&l| l == Link::NONE));
        // The free stack pops frame 0 first, then 1, …
        let want: Vec<u32> = (0..n).rev().collect();
        assert_eq!(vm.free, want);
    }

    #[test]
    fn a_large_frame_table_polls_and_stops_when_asked() {
        let n = (1u32 << 22) + 5;
        let mut calls = Vec::new();
        let r = Vm::new_polled(n, (0, 0, 0), Vec::new(), &mut |done, total| {
            calls.push((done, total));
            if calls.len() == 3 {
                Err(nandstack_core::Error::Interrupted)
            } else {
                Ok(())
            }
        });
        assert!(matches!(r, Err(nandstack_core::Error::Interrupted)));
        let step = 1u64 << 16;
        assert_eq!(
            calls,
            vec![(0, n as u64), (step, n as u64), (2 * step, n as u64)]
        );
        // Small tables are not polled.
        let mut polled = false;
        Vm::new_polled(1 << 20, (0, 0, 0), Vec::new(), &mut |_, _| {
            polled = true;
            Ok(())
        })
        .unwrap();
        assert!(!polled);
    }
}
