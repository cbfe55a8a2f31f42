//! zbud (`mm/zbud.c`, in Linux until 6.14): at most two objects per page.
//!
//! A page is 64 chunks of 64 bytes, the first for the header: 63 usable. The first buddy starts after the
//! header, the last ends at the page's end. Objects above 4096 − 64 − 64 = 3,968 bytes are refused
//! (`-ENOSPC`; zswap then rejects the page). Pages with one free buddy sit on `unbuddied[n]` by free
//! chunks `n` = 63 − first − last; `zbud_alloc` takes the first page of the first list with `n ≥ chunks`
//! (first buddy if free, else last), else a new page. A page is released when both buddies are free.

use nandstack_core::{Error, Result};

use super::{bad_handle, check_len, Extent, Handle, Handles, OrderedList, Slab, Zpool, PAGE_BYTES};

const CHUNK_BYTES: u32 = 64;
const NCHUNKS: u32 = PAGE_BYTES / CHUNK_BYTES - 1;
/// Largest object zbud stores.
pub const MAX_OBJECT_BYTES: u32 = PAGE_BYTES - 2 * CHUNK_BYTES;

#[derive(Debug, Clone, Default)]
struct Page {
    /// Chunks and objects of the first and last buddies.
    chunks: [u32; 2],
    objs: [Option<(Handle, u32)>; 2],
    listed: Option<(u32, i64)>,
}

#[derive(Debug, Clone)]
pub struct Zbud {
    pages: Slab<Page>,
    unbuddied: Vec<OrderedList>,
    handles: Handles<(u32, usize)>,
    seq: i64,
}

impl Default for Zbud {
    fn default() -> Self {
        Self::new()
    }
}

impl Zbud {
    pub fn new() -> Zbud {
        Zbud {
            pages: Slab::default(),
            unbuddied: vec![OrderedList::default(); NCHUNKS as usize + 1],
            handles: Handles::default(),
            seq: 0,
        }
    }

    fn page(&mut self, id: u32) -> &mut Page {
        self.pages.get_mut(id)
    }

    fn unlist(&mut self, id: u32) {
        if let Some((n, key)) = self.page(id).listed.take() {
            self.unbuddied[n as usize].remove(key);
        }
    }

    fn relist(&mut self, id: u32) {
        self.unlist(id);
        let p = self.page(id);
        if p.objs.iter().any(|o| o.is_none()) {
            let n = NCHUNKS - p.chunks[0] - p.chunks[1];
            let key = self.unbuddied[n as usize].push_front(&mut self.seq, id);
            self.page(id).listed = Some((n, key));
        }
    }
}

impl Zpool for Zbud {
    fn name(&self) -> &'static str {
        "zbud"
    }

    fn max_object_bytes(&self) -> u32 {
        MAX_OBJECT_BYTES
    }

    fn alloc(&mut self, len_bytes: u32) -> Result<Handle> {
        check_len("zbud", len_bytes, MAX_OBJECT_BYTES)?;
        let chunks = len_bytes.div_ceil(CHUNK_BYTES);
        let found =
            (chunks..NCHUNKS).find_map(|n| self.unbuddied[n as usize].front().map(|(_, id)| id));
        let id = match found {
            Some(id) => id,
            None => self.pages.insert(Page::default()),
        };
        let p = self.page(id);
        let bud = if p.chunks[0] == 0 { 0 } else { 1 };
        p.chunks[bud] = chunks;
        p.objs[bud] = Some((Handle(0), len_bytes));
        let h = self.handles.insert((id, bud));
        self.page(id).objs[bud] = Some((h, len_bytes));
        self.relist(id);
        Ok(h)
    }

    fn free(&mut self, handle: Handle) -> Result<()> {
        let (id, bud) = self
            .handles
            .remove(handle)
            .ok_or_else(|| bad_handle("zbud", handle))?;
        let p = self.page(id);
        p.chunks[bud] = 0;
        p.objs[bud] = None;
        if p.objs.iter().all(|o| o.is_none()) {
            self.unlist(id);
            self.pages.remove(id);
        } else {
            self.relist(id);
        }
        Ok(())
    }

    fn total_pages(&self) -> u64 {
        self.pages.held
    }

    fn objects(&self) -> u64 {
        self.handles.live
    }

    fn extent(&self, handle: Handle) -> Option<Extent> {
        let (id, bud) = self.handles.get(handle)?;
        let p = self.pages.get(id)?;
        let (_, len) = p.objs[bud]?;
        Some(Extent {
            container: id as u64,
            offset_bytes: if bud == 0 {
                CHUNK_BYTES
            } else {
                PAGE_BYTES - p.chunks[1] * CHUNK_BYTES
            },
            len_bytes: len,
        })
    }

    fn container_bytes(&self, container: u64) -> u32 {
        self.pages.get(container as u32).map_or(0, |_| PAGE_BYTES)
    }

    fn check(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Invariant(format!("zbud: {m}")));
        let mut held = 0;
        let mut objs = 0;
        for (id, p) in self.pages.iter() {
            held += 1;
            let live = p.objs.iter().filter(|o| o.is_some()).count();
            objs += live as u64;
            if live == 0 || (live == 2) != p.listed.is_none() {
                return bad(format!("page {id}: {live} objects, listed {:?}", p.listed));
            }
        }
        if held != self.pages.held || objs != self.handles.live {
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
    fn two_per_page_and_refuses_big_objects() {
        let mut z = Zbud::new();
        let a = z.alloc(2000).unwrap(); // 32 chunks, 31 left
        let b = z.alloc(1984).unwrap(); // 31 chunks: fits as the last buddy
        assert_eq!(z.total_pages(), 1);
        assert_eq!(z.extent(b).unwrap().offset_bytes, 4096 - 31 * 64);
        z.alloc(10).unwrap();
        assert_eq!(z.total_pages(), 2);
        assert!(z.alloc(MAX_OBJECT_BYTES + 1).is_err());
        z.free(a).unwrap();
        z.free(b).unwrap();
        assert_eq!(z.total_pages(), 1);
        z.check().unwrap();
    }
}
