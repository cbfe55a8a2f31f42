//! Host operations of the hybrid FTL, in 4 KiB units: writes through the FIFO write buffer, reads (with
//! DISS CL-SDI on the registered swap range), TRIM, flush, and the swap-range registration.

use nandstack_core::Result;

use super::blocks::{BlockMode, BufEntry, NONE};
use super::cost::CostKind;
use super::ftl::{HybridFtl, Stream};
use super::Region;

impl HybridFtl {
    /// Host write of `count` units from `first`, each destined for `dest`.
    pub fn write(&mut self, first: u64, count: u64, dest: Region) -> Result<()> {
        self.check_range(first, count)?;
        for lpn in first..first + count {
            self.write_unit(lpn as u32, dest)?;
        }
        Ok(())
    }

    fn write_unit(&mut self, lpn: u32, dest: Region) -> Result<()> {
        self.clock += 1;
        let ust = !self.hot.is_empty();
        if ust {
            let key = self.lb_key(lpn) as usize;
            self.lb_last_write[key] = self.clock;
        }
        let version = self.versions.as_mut().map_or(0, |v| v.write(lpn));
        let cur = self.map.get(lpn);
        let mut slc_update = false;
        // A buffered unit has no flash copy, so only an unmapped unit can be in the buffer.
        let absorbed = cur == NONE
            && self.buf.as_mut().is_some_and(|b| {
                b.lru.touch_with(lpn, |e| {
                    slc_update = e.dest == Region::Slc;
                    *e = BufEntry { dest, version };
                })
            });
        if absorbed {
            self.counters.slc_update_units += u64::from(slc_update);
            self.counters.buffer_absorbed_units += 1;
            if ust {
                self.hot[lpn as usize] = true;
            }
            return Ok(());
        }
        if cur != NONE {
            if self.blocks.mode(self.block_of(cur)) == BlockMode::Slc {
                self.counters.slc_update_units += 1;
                if ust {
                    self.hot[lpn as usize] = true;
                }
            }
            self.invalidate(lpn);
        } else {
            self.valid_units += 1;
        }
        // What goes to flash now: this unit, or with a buffer the oldest buffered one when it is full
        // (placed before this one enters). One call site, so that `place` inlines here.
        let leaving = match self.buf.as_mut() {
            None => Some((lpn, BufEntry { dest, version })),
            Some(buf) if buf.lru.is_full() => buf.lru.pop_lru(),
            Some(_) => None,
        };
        if let Some((unit, e)) = leaving {
            self.place(unit, e.dest, e.version)?;
        }
        if let Some(buf) = self.buf.as_mut() {
            buf.lru.insert(lpn, BufEntry { dest, version });
        }
        Ok(())
    }

    /// Host read of `count` units from `first`: one page read per flash page touched (consecutive units
    /// of one page share it); buffered units come from DRAM. Verify mode checks every version. With
    /// CL-SDI, units in the registered swap range are invalidated by the read (buffered ones dropped,
    /// never flushed): the host holds the page now.
    pub fn read(&mut self, first: u64, count: u64) -> Result<()> {
        self.check_range(first, count)?;
        let upp = self.upp;
        let mut last_page = NONE;
        for lpn in first..first + count {
            let lpn = lpn as u32;
            self.counters.host_read_units += 1;
            let swap_in = self.invalidates_on_read(lpn);
            let cur = self.map.get(lpn);
            // Only an unmapped unit can be in the buffer (a buffered unit has no flash copy).
            let buffered = match cur {
                NONE => self.buf.as_ref().and_then(|b| b.lru.get(lpn)),
                _ => None,
            };
            if let Some(e) = buffered {
                self.counters.buffer_read_units += 1;
                if let Some(v) = &mut self.versions {
                    v.check(lpn, e.version, || "the write buffer".into())?;
                }
                if swap_in {
                    self.buf.as_mut().expect("buffered").lru.remove(lpn);
                    self.counters.buffer_swap_dropped_units += 1;
                    self.forget(lpn);
                }
                continue;
            }
            if cur == NONE {
                if let Some(v) = &mut self.versions {
                    v.check(lpn, 0, || "the unmapped unit".into())?;
                }
                continue;
            }
            let page = upp.quotient(cur);
            if page != last_page {
                last_page = page;
                let slc = self.blocks.mode(self.block_of(cur)) == BlockMode::Slc;
                self.counters.read_ns += if slc {
                    self.p.slc.read.0
                } else {
                    self.p.qlc.read.0
                };
                if slc {
                    self.counters.read_slc_page_reads += 1;
                } else {
                    self.counters.read_qlc_page_reads += 1;
                }
            }
            let got = self.phys_version(cur);
            if let Some(v) = &mut self.versions {
                v.check(lpn, got, || format!("physical unit {cur}"))?;
            }
            if swap_in {
                self.invalidate(lpn);
                self.counters.swap_invalidated_units += 1;
                self.forget(lpn);
            }
        }
        Ok(())
    }

    /// A unit whose data is gone from the device (trimmed, or swapped in under CL-SDI): it reads as no
    /// data from now on.
    fn forget(&mut self, lpn: u32) {
        if let Some(v) = &mut self.versions {
            v.trim(lpn);
        }
        if !self.hot.is_empty() {
            self.hot[lpn as usize] = false;
        }
        self.valid_units -= 1;
    }

    /// TRIM whole units: their data becomes invalid (buffered copies are dropped and their slots freed).
    pub fn trim(&mut self, first: u64, count: u64) -> Result<()> {
        self.check_range(first, count)?;
        for lpn in first..first + count {
            let lpn = lpn as u32;
            let buffered = self
                .buf
                .as_mut()
                .is_some_and(|b| b.lru.remove(lpn).is_some());
            if !buffered && self.invalidate(lpn) == NONE {
                continue;
            }
            self.forget(lpn);
            self.counters.trimmed_units += 1;
        }
        Ok(())
    }

    /// Write the buffer back and pad every open page (end of run, as a drive does on FLUSH).
    pub fn flush(&mut self) -> Result<()> {
        while let Some((lpn, e)) = self.buf.as_mut().and_then(|b| b.lru.pop_lru()) {
            self.place(lpn, e.dest, e.version)?;
        }
        for s in Stream::ALL {
            for kind in 0..self.kinds {
                let b = self.open[s as usize * self.kinds as usize + kind as usize];
                if b != NONE {
                    self.pad_page(b, s.kind());
                }
            }
        }
        for l in 0..self.lb_open.len() {
            let b = self.lb_open[l];
            if b != NONE {
                self.pad_page(b, CostKind::HostToSlc);
            }
        }
        Ok(())
    }

    /// DISS SDR: the host's swap partition is the logical units `[first, end)`. From now on SDS (with
    /// `placement = swap_file`) keeps its data in separate blocks and CL-SDI (with
    /// `swap.invalidate_on_read`) invalidates what a read of it returns.
    pub fn register_swap_range(&mut self, first: u32, end: u32) -> Result<()> {
        self.check_range(first as u64, end.saturating_sub(first) as u64)?;
        self.swap_range = Some((first, end));
        Ok(())
    }

    /// The registered swap range in logical units, `[first, end)`.
    pub fn swap_range(&self) -> Option<(u32, u32)> {
        self.swap_range
    }

    /// Whether a read of `lpn` invalidates it (CL-SDI on and `lpn` in the registered swap range).
    #[inline]
    pub fn invalidates_on_read(&self, lpn: u32) -> bool {
        self.p.invalidate_on_read && self.swap_range.is_some_and(|(a, b)| (a..b).contains(&lpn))
    }
}
