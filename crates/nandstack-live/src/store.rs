//! The data the kernel wrote: 4 KiB pages held in the daemon's (locked) memory, allocated on first
//! write; never-written ranges read back as zeroes. Under `--verify` each page also keeps a checksum of
//! the bytes last written to it (computed from the write's own buffer), and every read recomputes the
//! checksum of what it returns: a mismatch is counted and named in the report.

const PAGE: usize = 4096;

/// FNV-1a, 64 bit: cheap, and independent of how the page is stored.
fn checksum(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

pub struct PageStore {
    pages: Vec<Option<Box<[u8]>>>,
    sums: Vec<u64>,
    verify: bool,
    pub verified_pages: u64,
    pub mismatched_pages: u64,
    /// The first mismatch, for the report: (byte offset of the page, expected, found).
    pub first_mismatch: Option<(u64, u64, u64)>,
}

impl PageStore {
    pub fn new(bytes: u64, verify: bool) -> PageStore {
        let n = bytes.div_ceil(PAGE as u64) as usize;
        PageStore {
            pages: (0..n).map(|_| None).collect(),
            sums: if verify { vec![0; n] } else { Vec::new() },
            verify,
            verified_pages: 0,
            mismatched_pages: 0,
            first_mismatch: None,
        }
    }

    /// Bytes of page memory held.
    pub fn held_bytes(&self) -> u64 {
        self.pages.iter().filter(|p| p.is_some()).count() as u64 * PAGE as u64
    }

    pub fn write(&mut self, offset: u64, data: &[u8]) {
        let mut pos = 0usize;
        while pos < data.len() {
            let at = offset + pos as u64;
            let (page, within) = ((at / PAGE as u64) as usize, (at % PAGE as u64) as usize);
            let n = (PAGE - within).min(data.len() - pos);
            let slot = self.pages[page].get_or_insert_with(|| vec![0u8; PAGE].into_boxed_slice());
            slot[within..within + n].copy_from_slice(&data[pos..pos + n]);
            if self.verify {
                // A whole-page write is checked against its own buffer; a partial one against the page.
                self.sums[page] = if n == PAGE {
                    checksum(&data[pos..pos + n])
                } else {
                    checksum(slot)
                };
            }
            pos += n;
        }
    }

    pub fn read(&mut self, offset: u64, len: usize) -> Vec<u8> {
        let mut out = vec![0u8; len];
        let mut pos = 0usize;
        while pos < len {
            let at = offset + pos as u64;
            let (page, within) = ((at / PAGE as u64) as usize, (at % PAGE as u64) as usize);
            let n = (PAGE - within).min(len - pos);
            if let Some(p) = &self.pages[page] {
                out[pos..pos + n].copy_from_slice(&p[within..within + n]);
                if self.verify {
                    let found = checksum(p);
                    self.check(page, found);
                }
            }
            pos += n;
        }
        out
    }

    fn check(&mut self, page: usize, found: u64) {
        self.verified_pages += 1;
        if found != self.sums[page] {
            self.mismatched_pages += 1;
            self.first_mismatch
                .get_or_insert(((page * PAGE) as u64, self.sums[page], found));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_what_was_written_and_zeroes_elsewhere() {
        let mut s = PageStore::new(5 * 4096, true);
        let data: Vec<u8> = (0..6000u32).map(|i| (i % 251) as u8).collect();
        s.write(1000, &data);
        assert_eq!(s.read(1000, 6000), data);
        assert_eq!(s.read(0, 1000), vec![0u8; 1000]);
        assert_eq!(s.read(4 * 4096, 4096), vec![0u8; 4096]);
        assert_eq!(s.held_bytes(), 2 * 4096);
        assert_eq!(s.mismatched_pages, 0);
        assert!(s.verified_pages >= 2);
    }

    #[test]
    fn a_corrupted_page_is_caught() {
        let mut s = PageStore::new(4096, true);
        s.write(0, &[7u8; 4096]);
        s.pages[0].as_mut().unwrap()[10] = 8;
        s.read(0, 4096);
        assert_eq!(s.mismatched_pages, 1);
        assert_eq!(s.first_mismatch.unwrap().0, 0);
    }
}
