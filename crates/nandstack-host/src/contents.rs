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
