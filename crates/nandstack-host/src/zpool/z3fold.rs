//! z3fold (`mm/z3fold.c`, in Linux until 6.14; the pool ezswap runs on): up to three objects per page.
//!
//! * A page is 64 chunks of 64 bytes; the first holds the header, so 63 are usable (`NCHUNKS`). An object
//!   takes `ceil(len / 64)` chunks as the page's *first* buddy (right after the header), its *last* (at the
//!   page's end) or its *middle* (starting right after the first).
//! * Objects above 4096 − 64 − 64 = 3,968 bytes get a page of their own without a header (*headless*).
//! * Pages with a free buddy sit on `unbuddied[n]` lists by their free chunks `n` (the larger gap around a
//!   middle object, else 63 − first − last); `z3fold_alloc` takes the first page of the first list with
//!   `n ≥ chunks` and picks the buddy: first if it is free and fits (before a middle object), else last,
//!   else middle; with none, a new page gets the object as its first buddy. Lists are
//!   last-in-first-out (`list_add`); the kernel's per-CPU lists are one list here.
//! * On free (`z3fold_free` → `do_compact_page`): an emptied page is released; a page left with a single
//!   object tries to move it into another page with room (`compact_single_buddy`), releasing the page;
//!   otherwise a middle object slides to the front when the first and last are gone, or next to the first
//!   (or last) when that closes a gap of at least `BIG_CHUNK_GAP` = 3 chunks (`z3fold_compact_page`).
//! * [`Z3fold::as_merged`] is z3fold as first merged (Linux 4.8, the allocator the ezswap paper ran
//!   beside 4.7's zswap; the posted v4 patch, May 2016): the same chunks, buddies, headless pages,
//!   allocation and LIFO unbuddied lists, but on free only a middle object left alone moves to the
//!   front (`z3fold_compact_page` had that one case); no gap slides (`BIG_CHUNK_GAP` came with 4.10's
//!   "extend compaction function") and no moving a lone object to another page
//!   (`compact_single_buddy`, 5.x).

use nandstack_core::{Error, Result};

use super::{bad_handle, check_len, Extent, Handle, Handles, OrderedList, Slab, Zpool, PAGE_BYTES};

const CHUNK_BYTES: u32 = 64;
const TOTAL_CHUNKS: u32 = PAGE_BYTES / CHUNK_BYTES;
const ZHDR_CHUNKS: u32 = 1;
const NCHUNKS: u32 = TOTAL_CHUNKS - ZHDR_CHUNKS;
const BIG_CHUNK_GAP: u32 = 3;
/// Largest object kept with others; above it, a headless page.
pub const MAX_BUDDY_BYTES: u32 = PAGE_BYTES - ZHDR_CHUNKS * CHUNK_BYTES - CHUNK_BYTES;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bud {
    First = 0,
    Middle = 1,
    Last = 2,
}

#[derive(Debug, Clone, Default)]
struct Page {
    headless: bool,
    /// Chunks of the first, middle and last buddies.
    chunks: [u32; 3],
    start_middle: u32,
    objs: [Option<(Handle, u32)>; 3],
    /// (free chunks list, key) while on an unbuddied list.
    listed: Option<(u32, i64)>,
}

impl Page {
    fn free_chunks(&self) -> u32 {
        let [first, middle, last] = self.chunks;
        if middle != 0 {
            let before = if first != 0 {
                0
            } else {
                self.start_middle - ZHDR_CHUNKS
            };
            let after = if last != 0 {
                0
            } else {
                TOTAL_CHUNKS - (self.start_middle + middle)
            };
            before.max(after)
        } else {
            NCHUNKS - first - last
        }
    }

    fn has_free_buddy(&self) -> bool {
        self.chunks.contains(&0)
    }

    fn live(&self) -> usize {
        self.objs.iter().filter(|o| o.is_some()).count()
    }

    /// The buddy an object of `chunks` goes to (`z3fold_alloc`), if any is free.
    fn pick(&self, chunks: u32) -> Option<Bud> {
        let [first, middle, last] = self.chunks;
        if first == 0 {
            Some(if middle != 0 && chunks >= self.start_middle {
                Bud::Last
            } else {
                Bud::First
            })
        } else if last == 0 {
            Some(Bud::Last)
        } else if middle == 0 {
            Some(Bud::Middle)
        } else {
            None
        }
    }

    fn offset_chunks(&self, bud: Bud) -> u32 {
        match bud {
            Bud::First => ZHDR_CHUNKS,
            Bud::Middle => self.start_middle,
            Bud::Last => TOTAL_CHUNKS - self.chunks[2],
        }
    }
}

#[derive(Debug, Clone)]
pub struct Z3fold {
    pages: Slab<Page>,
    unbuddied: Vec<OrderedList>,
    handles: Handles<(u32, Bud)>,
    seq: i64,
    /// Objects moved to another page since the last `take_moved`.
    moved: Vec<Handle>,
    /// Linux 4.8's z3fold ([`Z3fold::as_merged`]): only a lone middle object is compacted.
    as_merged: bool,
}

impl Default for Z3fold {
    fn default() -> Self {
        Self::new()
    }
}

impl Z3fold {
    pub fn new() -> Z3fold {
        Z3fold {
            pages: Slab::default(),
            unbuddied: vec![OrderedList::default(); NCHUNKS as usize + 1],
            handles: Handles::default(),
            seq: 0,
            moved: Vec::new(),
            as_merged: false,
        }
    }

    /// z3fold as first merged (Linux 4.8): see the module documentation.
    pub fn as_merged() -> Z3fold {
        Z3fold {
            as_merged: true,
            ..Z3fold::new()
        }
    }

    fn page(&mut self, id: u32) -> &mut Page {
        self.pages.get_mut(id)
    }

    fn new_page(&mut self, headless: bool) -> u32 {
        self.pages.insert(Page {
            headless,
            ..Page::default()
        })
    }

    fn unlist(&mut self, id: u32) {
        if let Some((n, key)) = self.page(id).listed.take() {
            self.unbuddied[n as usize].remove(key);
        }
    }

    /// `add_to_unbuddied`, if a buddy is free.
    fn relist(&mut self, id: u32) {
        self.unlist(id);
        let p = self.pages.get(id).expect("live page");
        if p.has_free_buddy() {
            let n = p.free_chunks();
            let key = self.unbuddied[n as usize].push_front(&mut self.seq, id);
            self.page(id).listed = Some((n, key));
        }
    }

    /// The first listed page (other than `except`) with room for `chunks`, and the buddy to use.
    fn find(&self, chunks: u32, except: Option<u32>) -> Option<(u32, Bud)> {
        for n in chunks..NCHUNKS {
            for &id in self.unbuddied[n as usize].by_key.values() {
                if Some(id) == except {
                    continue;
                }
                let p = self.pages.get(id).expect("listed page");
                if let Some(bud) = p.pick(chunks) {
                    return Some((id, bud));
                }
            }
        }
        None
    }

    fn place(&mut self, id: u32, bud: Bud, h: Handle, len: u32) {
        let chunks = len.div_ceil(CHUNK_BYTES);
        let p = self.page(id);
        if bud == Bud::Middle {
            p.start_middle = p.chunks[0] + ZHDR_CHUNKS;
        }
        p.chunks[bud as usize] = chunks;
        p.objs[bud as usize] = Some((h, len));
        self.handles.set(h, (id, bud));
    }

    fn release(&mut self, id: u32) {
        self.unlist(id);
        self.pages.remove(id);
    }

    /// `compact_single_buddy`: move a lone object to another page with room; true if the page emptied.
    fn move_single(&mut self, id: u32) -> bool {
        let p = self.pages.get(id).expect("live page");
        let Some(bud) = (0..3).find(|&b| p.objs[b].is_some()) else {
            return false;
        };
        let (h, len) = p.objs[bud].expect("found above");
        let Some((dst, dst_bud)) = self.find(len.div_ceil(CHUNK_BYTES), Some(id)) else {
            return false;
        };
        self.unlist(dst);
        self.place(dst, dst_bud, h, len);
        self.relist(dst);
        self.release(id);
        self.moved.push(h);
        true
    }

    /// `z3fold_compact_page`: slide the middle object when that pays.
    fn compact_page(&mut self, id: u32) {
        let as_merged = self.as_merged;
        let p = self.page(id);
        let [first, middle, last] = p.chunks;
        if middle == 0 {
            return;
        }
        if first == 0 && last == 0 {
            p.chunks = [middle, 0, 0];
            p.objs[0] = p.objs[1].take();
            p.start_middle = 0;
            let h = p.objs[0].expect("middle object").0;
            self.handles.set(h, (id, Bud::First));
        } else if as_merged {
            // 4.8: nothing else moves.
        } else if first != 0 && last == 0 && p.start_middle - (first + ZHDR_CHUNKS) >= BIG_CHUNK_GAP
        {
            p.start_middle = first + ZHDR_CHUNKS;
        } else if last != 0
            && first == 0
            && TOTAL_CHUNKS - (last + p.start_middle + middle) >= BIG_CHUNK_GAP
        {
            p.start_middle = TOTAL_CHUNKS - last - middle;
        }
    }
}

impl Zpool for Z3fold {
    fn name(&self) -> &'static str {
        if self.as_merged {
            "z3fold_4_8"
        } else {
            "z3fold"
        }
    }

    fn max_object_bytes(&self) -> u32 {
        PAGE_BYTES
    }

    fn alloc(&mut self, len_bytes: u32) -> Result<Handle> {
        check_len("z3fold", len_bytes, PAGE_BYTES)?;
        let h = self.handles.insert((0, Bud::First));
        if len_bytes > MAX_BUDDY_BYTES {
            let id = self.new_page(true);
            self.page(id).objs[0] = Some((h, len_bytes));
            self.handles.set(h, (id, Bud::First));
            return Ok(h);
        }
        let (id, bud) = match self.find(len_bytes.div_ceil(CHUNK_BYTES), None) {
            Some(found) => found,
            None => (self.new_page(false), Bud::First),
        };
        self.unlist(id);
        self.place(id, bud, h, len_bytes);
        self.relist(id);
        Ok(h)
    }

    fn free(&mut self, handle: Handle) -> Result<()> {
        let (id, bud) = self
            .handles
            .remove(handle)
            .ok_or_else(|| bad_handle("z3fold", handle))?;
        let p = self.page(id);
        if p.headless {
            self.release(id);
            return Ok(());
        }
        p.objs[bud as usize] = None;
        p.chunks[bud as usize] = 0;
        if bud == Bud::Middle {
            p.start_middle = 0;
        }
        match p.live() {
            0 => self.release(id),
            1 if !self.as_merged && self.move_single(id) => {}
            _ => {
                self.unlist(id);
                self.compact_page(id);
                self.relist(id);
            }
        }
        Ok(())
    }

    fn total_pages(&self) -> u64 {
        self.pages.held
    }

    fn objects(&self) -> u64 {
        self.handles.live
    }

    fn take_moved(&mut self, out: &mut Vec<Handle>) {
        out.append(&mut self.moved);
    }

    fn extent(&self, handle: Handle) -> Option<Extent> {
        let (id, bud) = self.handles.get(handle)?;
        let p = self.pages.get(id)?;
        let (_, len) = p.objs[bud as usize]?;
        let offset_bytes = if p.headless {
            0
        } else {
            p.offset_chunks(bud) * CHUNK_BYTES
        };
        Some(Extent {
            container: id as u64,
            offset_bytes,
            len_bytes: len,
        })
    }

    fn container_bytes(&self, container: u64) -> u32 {
        self.pages.get(container as u32).map_or(0, |_| PAGE_BYTES)
    }

    fn check(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Invariant(format!("z3fold: {m}")));
        let mut held = 0;
        let mut objs = 0;
        for (id, p) in self.pages.iter() {
            held += 1;
            objs += p.live() as u64;
            if p.live() == 0 {
                return bad(format!("page {id} is empty but held"));
            }
            for b in 0..3 {
                let want = p.objs[b].map_or(0, |(_, len)| len.div_ceil(CHUNK_BYTES));
                if !p.headless && p.chunks[b] != want {
                    return bad(format!("page {id}: buddy {b} chunk count"));
                }
            }
            let should_list = !p.headless && p.has_free_buddy();
            match p.listed {
                Some((n, key)) if should_list => {
                    if n != p.free_chunks()
                        || self.unbuddied[n as usize].by_key.get(&key) != Some(&id)
                    {
                        return bad(format!("page {id} is on the wrong unbuddied list"));
                    }
                }
                None if !should_list => {}
                _ => {
                    return bad(format!(
                        "page {id}: listed {:?}, should be {should_list}",
                        p.listed
                    ))
                }
            }
        }
        let listed: usize = self.unbuddied.iter().map(|l| l.len()).sum();
        let should: usize = self
            .pages
            .iter()
            .filter(|(_, p)| p.listed.is_some())
            .count();
        if held != self.pages.held || objs != self.handles.live || listed != should {
            return bad(format!(
                "pages {held}/{}, objects {objs}/{}",
                self.pages.held, self.handles.live
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_objects_share_a_page_in_first_last_middle_order() {
        let mut z = Z3fold::new();
        // 1000 B = 16 chunks; 63 usable: first 16, last 16, middle 16 (31 free before the last).
        let a = z.alloc(1000).unwrap();
        let b = z.alloc(1000).unwrap();
        let c = z.alloc(1000).unwrap();
        assert_eq!(z.total_pages(), 1);
        assert_eq!(z.extent(a).unwrap().offset_bytes, 64);
        assert_eq!(z.extent(b).unwrap().offset_bytes, 4096 - 16 * 64);
        assert_eq!(z.extent(c).unwrap().offset_bytes, 64 + 16 * 64);
        // A fourth needs a new page.
        z.alloc(64).unwrap();
        assert_eq!(z.total_pages(), 2);
        z.check().unwrap();
    }

    #[test]
    fn big_objects_go_headless_and_a_middle_object_slides_forward() {
        let mut z = Z3fold::new();
        let h = z.alloc(MAX_BUDDY_BYTES + 1).unwrap();
        assert_eq!(z.extent(h).unwrap().offset_bytes, 0);
        assert_eq!(z.total_pages(), 1);
        z.free(h).unwrap();
        assert_eq!(z.total_pages(), 0);
        let a = z.alloc(640).unwrap(); // first, 10 chunks
        let b = z.alloc(640).unwrap(); // last
        let c = z.alloc(640).unwrap(); // middle at chunk 11
        assert_eq!(z.extent(c).unwrap().offset_bytes, 11 * 64);
        // Middle and last remain; the gap after the middle (64 - 10 - 11 - 10 = 33 chunks) is at least 3:
        // the middle slides against the last.
        z.free(a).unwrap();
        assert_eq!(z.extent(c).unwrap().offset_bytes, (64 - 10 - 10) * 64);
        z.free(b).unwrap(); // c alone: no other page to move to; becomes the first buddy
        assert_eq!(z.extent(c).unwrap().offset_bytes, 64);
        z.check().unwrap();
    }

    #[test]
    fn a_lone_object_moves_to_another_page_on_free() {
        let mut z = Z3fold::new();
        let a = z.alloc(2000).unwrap(); // page 0 first (32 chunks)
        let b = z.alloc(2000).unwrap(); // page 0 has 31 free: new page 1
        let c = z.alloc(64).unwrap(); // page 1 (31 free, newest at the head) last
        assert_eq!(z.total_pages(), 2);
        assert_eq!(
            z.extent(c).unwrap().container,
            z.extent(b).unwrap().container
        );
        let mut moved = Vec::new();
        z.take_moved(&mut moved);
        assert!(moved.is_empty());
        z.free(b).unwrap(); // page 1 keeps only c: c moves into page 0, page 1 goes
        assert_eq!(z.total_pages(), 1);
        // The move is reported once.
        z.take_moved(&mut moved);
        assert_eq!(moved, vec![c]);
        moved.clear();
        z.take_moved(&mut moved);
        assert!(moved.is_empty());
        assert_eq!(
            z.extent(c).unwrap().container,
            z.extent(a).unwrap().container
        );
        z.check().unwrap();
    }

    #[test]
    fn as_merged_in_4_8_only_a_lone_middle_object_moves_to_the_front() {
        // The same calls as above: 4.8's z3fold leaves c where it is (no compact_single_buddy).
        let mut z = Z3fold::as_merged();
        assert_eq!(z.name(), "z3fold_4_8");
        let a = z.alloc(2000).unwrap();
        let b = z.alloc(2000).unwrap();
        let c = z.alloc(64).unwrap();
        let before = z.extent(c).unwrap();
        z.free(b).unwrap();
        assert_eq!(z.total_pages(), 2);
        assert_eq!(z.extent(c).unwrap(), before);
        let mut moved = Vec::new();
        z.take_moved(&mut moved);
        assert!(moved.is_empty());
        assert_ne!(
            z.extent(c).unwrap().container,
            z.extent(a).unwrap().container
        );
        z.check().unwrap();

        // First (10 chunks at chunk 1), last (10 at 54), middle (10 right after the first, at 11).
        // When the first goes, today's z3fold slides the middle next to the last (a gap of 33 ≥
        // BIG_CHUNK_GAP), 4.8's leaves it; a middle object left alone moves to the front in both.
        for (mut z, after_first) in [(Z3fold::new(), 44), (Z3fold::as_merged(), 11)] {
            let f = z.alloc(640).unwrap();
            let l = z.alloc(640).unwrap();
            let m = z.alloc(640).unwrap();
            assert_eq!(z.total_pages(), 1, "{}", z.name());
            let chunk = |z: &Z3fold, h| z.extent(h).unwrap().offset_bytes / CHUNK_BYTES;
            assert_eq!((chunk(&z, f), chunk(&z, l), chunk(&z, m)), (1, 54, 11));
            z.free(f).unwrap();
            assert_eq!(chunk(&z, m), after_first, "{}", z.name());
            z.free(l).unwrap();
            assert_eq!(chunk(&z, m), 1, "{}", z.name());
            z.check().unwrap();
        }
    }
}
