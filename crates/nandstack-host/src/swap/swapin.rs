//! What swap-ins find on the device (the DISS paper's Fig. 4) and the clean-data handler's price.
//!
//! * A page read from a slot is a *normal swap-in* when the slot was written since it was last read
//!   (the data was updated by a swap-out in between), a *swap-in-and-in* when it was read before and not
//!   written since (the page was swapped in, evicted clean, and swapped in again) — per page read from
//!   the device, read-ahead pages included, as a block trace shows them.
//! * CDH (`host.swap.clean_data_handler`): every page read from swap is marked dirty, so it is written
//!   again when evicted. A *CDH rewrite* is the swap-out of such a page that nothing else dirtied — a
//!   write Linux would not have issued (the page would have been dropped clean, its slot still holding
//!   the data). A page is dirtied by something else when it is written through its PTE or its slot is
//!   freed (a write fault, `vm_swap_full`), after which Linux writes it too.

use serde_json::json;

/// Per-slot swap-in history and the counters derived from it.
#[derive(Clone, Debug, Default)]
pub struct SwapIns {
    /// CDH is on.
    pub cdh: bool,
    /// Per slot: read since its last write.
    read_since_write: Vec<u64>,
    /// Per slot: its swap-cache page is dirty only because CDH marked it.
    cdh_only: Vec<u64>,
    pub normal: u64,
    pub in_and_in: u64,
    /// Pages CDH marked dirty (read from the device while they would have been clean).
    pub cdh_marked: u64,
    /// Swap-outs of pages dirty only because of CDH.
    pub cdh_rewrites: u64,
}

#[inline]
fn get(bits: &[u64], s: u32) -> bool {
    bits[s as usize / 64] & (1 << (s % 64)) != 0
}
#[inline]
fn put(bits: &mut [u64], s: u32, v: bool) {
    let w = &mut bits[s as usize / 64];
    if v {
        *w |= 1 << (s % 64);
    } else {
        *w &= !(1 << (s % 64));
    }
}

impl SwapIns {
    pub fn new(slots: u32, cdh: bool) -> SwapIns {
        let words = (slots as usize).div_ceil(64);
        SwapIns {
            cdh,
            read_since_write: vec![0; words],
            cdh_only: vec![0; words],
            ..SwapIns::default()
        }
    }

    /// `slot` was read from the device; `dirty` if the page is dirty anyway (a write fault).
    pub fn read(&mut self, slot: u32, dirty: bool) {
        if get(&self.read_since_write, slot) {
            self.in_and_in += 1;
        } else {
            self.normal += 1;
            put(&mut self.read_since_write, slot, true);
        }
        if self.cdh && !dirty {
            self.cdh_marked += 1;
            put(&mut self.cdh_only, slot, true);
        }
    }

    /// A write of `slot` was submitted.
    pub fn written(&mut self, slot: u32) {
        put(&mut self.read_since_write, slot, false);
        if get(&self.cdh_only, slot) {
            self.cdh_rewrites += 1;
            put(&mut self.cdh_only, slot, false);
        }
    }

    /// The page of `slot` was dirtied through its PTE (it would be written without CDH too).
    pub fn dirtied(&mut self, slot: u32) {
        put(&mut self.cdh_only, slot, false);
    }

    /// `slot` was freed: its history ends (a new owner writes before it reads).
    pub fn freed(&mut self, slot: u32) {
        put(&mut self.read_since_write, slot, false);
        put(&mut self.cdh_only, slot, false);
    }

    pub fn report(&self) -> serde_json::Value {
        let all = self.normal + self.in_and_in;
        json!({
            "normal": self.normal,
            "in_and_in": self.in_and_in,
            "normal_share": if all > 0 { self.normal as f64 / all as f64 } else { f64::NAN },
            "cdh": self.cdh,
            "cdh_marked_pages": self.cdh_marked,
            "cdh_rewrites": self.cdh_rewrites,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_swap_ins_and_counts_cdh_rewrites() {
        let mut s = SwapIns::new(128, true);
        s.written(5);
        s.read(5, false); // normal; CDH marks it
        s.read(5, false); // read again without a write between: in-and-in
        s.written(5); // the clean page evicted: a CDH rewrite
        s.read(5, true); // normal; a write fault: dirty anyway
        s.written(5); // not a CDH rewrite
        s.read(5, false);
        s.dirtied(5); // written through its PTE
        s.written(5);
        s.read(7, false);
        s.freed(7); // slot freed (vm_swap_full): no CDH rewrite, history gone
        s.read(7, false);
        assert_eq!((s.normal, s.in_and_in), (5, 1));
        assert_eq!(s.cdh_marked, 5);
        assert_eq!(s.cdh_rewrites, 1);
    }
}
