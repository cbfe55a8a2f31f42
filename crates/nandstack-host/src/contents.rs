//! Page contents: the bytes in a process's pages, for the parts of the model that look at them — the
//! swap layer's zero-page check (`is_folio_zero_filled`), zswap and zram compressing a page.
//!
//! A process either has a content model or not. With one, the host keeps it in step with the
//! references the process has executed ([`PageContents::advance`] before every fault), so a page
//! compressed at eviction holds exactly the bytes the program left in it by then; references generated
//! ahead (a stream's buffered chunk) have not touched it yet. Without one the host knows nothing of the
//! bytes: such pages are never zero-filled, and zswap or zram refuse to run (they would need a made-up
//! compression ratio).
//!
//! # Contract of [`PageContents`]
//! * `advance(refs)` is called with non-decreasing `refs` (memory references of the process executed
//!   so far, reads and writes, markers excluded); afterwards `page_bytes` returns every page as the
//!   program left it after those references.
//! * `page_bytes` is deterministic and cheap enough to call at every eviction (a page is rebuilt from a
//!   compact description, never stored whole).

use nandstack_workload::content::{MemtouchProgram, PAGE_BYTES};

/// The bytes of a process's pages as its references execute. See the module documentation.
pub trait PageContents: Send {
    /// The process has executed its first `refs` memory references.
    fn advance(&mut self, refs: u64);
    /// Page `page` (relative to the process) as it is now.
    fn page_bytes(&self, page: u32, out: &mut [u8; PAGE_BYTES]);
    /// Whether page `page` is all zero bytes now: `is_zero` of its `page_bytes` (the default), which a
    /// model may answer without rebuilding the page.
    fn is_zero(&self, page: u32) -> bool {
        let mut b = [0u8; PAGE_BYTES];
        self.page_bytes(page, &mut b);
        is_zero(&b)
    }
    /// What the contents are (for the report), e.g. `memtouch corpus:xml`.
    fn describe(&self) -> String;
    /// A key for page `page`'s bytes as they are now, below the process's page count, when the model
    /// has one: while this object lives, two calls that return the same `Some(k)` (for any pages, at
    /// any times) saw the same bytes — a model whose bytes change returns another key for the new
    /// bytes. The host remembers what it computed from a page's bytes (compressed length, SA's
    /// estimate) by it, without building the page. `None` (the default): no key, the bytes are built.
    fn content_key(&self, _page: u32) -> Option<u32> {
        None
    }
}

/// A page offered to compression (zswap's store, its admission, the compressor): its bytes, built
/// from the contents only when something reads them, and a key for them when there is one. A key is
/// unique per host: two pages offered with the same key hold the same bytes (see
/// [`PageContents::content_key`]; the host adds the process's first page to it).
pub struct PageIn<'a> {
    key: Option<u32>,
    bytes: PageBytes<'a>,
}

enum PageBytes<'a> {
    Ready(&'a [u8; PAGE_BYTES]),
    /// Built into `buf` from `from` on first use (`from` is `None` once built).
    Lazy {
        buf: &'a mut [u8; PAGE_BYTES],
        from: Option<(&'a dyn PageContents, u32)>,
    },
}

impl<'a> PageIn<'a> {
    /// The bytes at hand, without a key.
    pub fn ready(bytes: &'a [u8; PAGE_BYTES]) -> PageIn<'a> {
        PageIn {
            key: None,
            bytes: PageBytes::Ready(bytes),
        }
    }

    /// The bytes at hand, with their key (`None`: no key).
    pub fn ready_keyed(key: Option<u32>, bytes: &'a [u8; PAGE_BYTES]) -> PageIn<'a> {
        PageIn {
            key,
            bytes: PageBytes::Ready(bytes),
        }
    }

    /// Page `page` of `contents`, built into `buf` when first read; `key` its key (`None`: no key).
    pub fn lazy(
        key: Option<u32>,
        contents: &'a dyn PageContents,
        page: u32,
        buf: &'a mut [u8; PAGE_BYTES],
    ) -> PageIn<'a> {
        PageIn {
            key,
            bytes: PageBytes::Lazy {
                buf,
                from: Some((contents, page)),
            },
        }
    }

    /// The page's key, if it has one.
    pub fn key(&self) -> Option<u32> {
        self.key
    }

    /// The page's bytes (built now if they were not yet).
    pub fn bytes(&mut self) -> &[u8; PAGE_BYTES] {
        match &mut self.bytes {
            PageBytes::Ready(b) => b,
            PageBytes::Lazy { buf, from } => {
                if let Some((c, page)) = from.take() {
                    c.page_bytes(page, buf);
                }
                buf
            }
        }
    }

    /// Whether the bytes are built (always for [`PageIn::ready`]).
    pub fn built(&self) -> bool {
        match &self.bytes {
            PageBytes::Ready(_) => true,
            PageBytes::Lazy { from, .. } => from.is_none(),
        }
    }
}

/// memtouch's page image (`tools/memtouch.c`), replayed access for access.
pub struct MemtouchContents {
    prog: MemtouchProgram,
    /// References of the fill phase (every page written in order).
    fill_refs: u64,
}

impl MemtouchContents {
    /// `prog` just built (its fill done, no access yet); `fill_refs` = references its fill emits.
    pub fn new(prog: MemtouchProgram, fill_refs: u64) -> MemtouchContents {
        MemtouchContents { prog, fill_refs }
    }
}

impl PageContents for MemtouchContents {
    fn advance(&mut self, refs: u64) {
        // During the fill the image already holds every page's post-fill bytes: a page is only
        // evictable once written, and the page being written is the newest on the LRU.
        let accesses = refs.saturating_sub(self.fill_refs);
        while self.prog.ops_done() < accesses {
            if self.prog.next_access().is_none() {
                break;
            }
        }
    }

    fn page_bytes(&self, page: u32, out: &mut [u8; PAGE_BYTES]) {
        self.prog.image().page_bytes(page as u64, out);
    }

    fn is_zero(&self, page: u32) -> bool {
        self.prog.image().is_zero(page as u64)
    }

    fn describe(&self) -> String {
        format!("memtouch {}", self.prog.params().content)
    }
}

/// Whether every byte of `page` is zero (`is_folio_zero_filled`).
pub fn is_zero(page: &[u8; PAGE_BYTES]) -> bool {
    page.chunks_exact(8)
        .all(|w| u64::from_ne_bytes(w.try_into().expect("8 bytes")) == 0)
}

/// The value of a page whose 64-bit words are all equal (zram's `page_same_filled`), if it is one.
pub fn same_filled(page: &[u8; PAGE_BYTES]) -> Option<u64> {
    let first = u64::from_le_bytes(page[..8].try_into().expect("8 bytes"));
    page.chunks_exact(8)
        .all(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")) == first)
        .then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Page `p` holds `p` in every byte but the last, which holds the number of `advance` calls.
    struct Numbered(u8);
    impl PageContents for Numbered {
        fn advance(&mut self, _refs: u64) {
            self.0 += 1;
        }
        fn page_bytes(&self, page: u32, out: &mut [u8; PAGE_BYTES]) {
            out.fill(page as u8);
            out[PAGE_BYTES - 1] = self.0;
        }
        fn describe(&self) -> String {
            "numbered".into()
        }
    }

    /// A lazy page is the page of its contents, built on first read, once; a ready page is its bytes.
    #[test]
    fn offered_pages_are_built_when_read() {
        let c = Numbered(5);
        let mut buf = [9u8; PAGE_BYTES];
        let mut want = [0u8; PAGE_BYTES];
        c.page_bytes(3, &mut want);
        let mut p = PageIn::lazy(Some(42), &c, 3, &mut buf);
        assert_eq!(p.key(), Some(42));
        assert!(!p.built());
        assert_eq!(p.bytes(), &want);
        assert!(p.built());
        assert_eq!(p.bytes(), &want);
        assert_eq!(buf, want);
        // Not read: the buffer is untouched.
        let mut buf = [9u8; PAGE_BYTES];
        let p = PageIn::lazy(None, &c, 4, &mut buf);
        assert!(!p.built() && p.key().is_none());
        assert_eq!(buf, [9u8; PAGE_BYTES]);
        let mut r = PageIn::ready_keyed(Some(1), &want);
        assert!(r.built());
        assert_eq!((r.key(), r.bytes()), (Some(1), &want));
        assert_eq!(PageIn::ready(&want).key(), None);
    }

    #[test]
    fn zero_and_same_filled_pages() {
        let mut p = [0u8; PAGE_BYTES];
        assert!(is_zero(&p));
        assert_eq!(same_filled(&p), Some(0));
        p[4095] = 1;
        assert!(!is_zero(&p));
        assert_eq!(same_filled(&p), None);
        for w in p.chunks_exact_mut(8) {
            w.copy_from_slice(&0xdead_beef_u64.to_le_bytes());
        }
        assert!(!is_zero(&p));
        assert_eq!(same_filled(&p), Some(0xdead_beef));
    }
}
