//! The flusher: writeback of dirty file pages to the file partition — every `dirty_writeback` period
//! for pages dirty longer than `dirty_expire`, everything when dirty pages exceed the background
//! threshold or reclaim found only dirty pages. Written pages are write-protected again, so the next
//! write through a mapping dirties them anew.

use nandstack_core::{Nanos, Result};

use super::{Host, COMM_FLUSH};
use crate::block::{IoKind, Region};
use crate::vm::page::*;
use crate::vm::workingset::is_shadow;

impl Host {
    /// Run the flusher if it is due at `now`.
    pub fn flusher_tick(&mut self, now: Nanos) -> Result<()> {
        let pc = &mut self.pc;
        let periodic = now >= pc.next_flush;
        let all = pc.wakeup || pc.dirty > pc.background_pages;
        if periodic {
            pc.next_flush = now + pc.period_ns;
        }
        if pc.dirty == 0 || !(periodic || all) {
            pc.wakeup = false;
            return Ok(());
        }
        pc.wakeup = false;
        pc.flusher_runs += 1;
        let expire = pc.expire_ns;
        let mut offs = std::mem::take(&mut self.io_buf);
        let mut frames = std::mem::take(&mut self.frame_buf);
        offs.clear();
        frames.clear();
        // The dirty pages in id order, as a scan of every page would find them: only the ids whose
        // `maybe_dirty` bit is set can be dirty; a bit whose page is clean or gone is cleared, one
        // whose page stays dirty (under writeback, or not yet expired) is kept.
        for w in 0..self.pc.maybe_dirty.len() {
            let mut bits = self.pc.maybe_dirty[w];
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let id = w * 64 + b;
                let f = self.pc.index[id];
                let fr = (f != NONE && !is_shadow(f)).then(|| &mut self.vm.frames[f as usize]);
                let Some(fr) = fr.filter(|fr| fr.has(F_DIRTY)) else {
                    self.pc.maybe_dirty[w] &= !(1u64 << b);
                    continue;
                };
                if fr.has(F_WRITEBACK) || (!all && fr.dirtied + expire > now) {
                    continue;
                }
                self.pc.maybe_dirty[w] &= !(1u64 << b);
                self.flush_one(f, id, &mut offs, &mut frames);
            }
        }
        let mut done = std::mem::take(&mut self.done_buf);
        self.io.issue_batch(
            IoKind::Write,
            Region::File,
            &offs,
            now,
            COMM_FLUSH,
            &mut done,
        )?;
        for (i, &f) in frames.iter().enumerate() {
            self.vm.frames[f as usize].io_done = done[i];
            self.push_completion(f, done[i]);
        }
        self.stats.file_pages_written += frames.len() as u64;
        self.io_buf = offs;
        self.frame_buf = frames;
        self.done_buf = done;
        Ok(())
    }

    /// Start the writeback of dirty page-cache page `id` in frame `f` (clean, under writeback, write
    /// protected when mapped), its offset and frame appended to the flusher's batch.
    fn flush_one(&mut self, f: u32, id: usize, offs: &mut Vec<u64>, frames: &mut Vec<u32>) {
        let fr = &mut self.vm.frames[f as usize];
        fr.clear(F_DIRTY);
        fr.set(F_WRITEBACK);
        if fr.has(F_MAPPED) {
            self.vm.ptes[fr.vpn as usize] &= !(PTE_WRITE | PTE_DIRTY);
        }
        self.pc.dirty -= 1;
        offs.push(self.pc.offset(id as u32));
        frames.push(f);
    }
}
