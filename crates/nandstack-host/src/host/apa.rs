//! All-page accommodation (ezswap's APA), the host's side: storing clean file pages in the pool on
//! eviction and serving file faults from it (the pool's side is `zswap::apa`).

use super::{Ctx, Host};
use crate::vm::page::*;
use crate::vm::workingset::is_shadow;
use crate::vm::VmaKind;
use crate::zswap::Store;
use nandstack_core::{Error, Result};

impl Host {
    fn apa_on(&self) -> bool {
        self.store.zswap.as_ref().is_some_and(|z| z.apa())
    }

    /// Map each file page to the virtual page that maps it (its bytes come from that process's
    /// contents). Called once the contents are set.
    pub(crate) fn apa_setup(&mut self) {
        let n = self.pc.pages() as usize;
        let mut vpn = vec![NONE; n];
        for p in &self.vm.procs {
            for v in &p.vmas {
                if let VmaKind::File { file, offset, .. } = v.kind {
                    let base = self.pc.file_base[file as usize] + offset;
                    for i in 0..v.pages {
                        vpn[(base + i) as usize] = v.start + i;
                    }
                }
            }
        }
        self.cswap.apa = crate::zswap::apa::ApaState {
            file_vpn: vpn,
            version: vec![0; n],
        };
    }

    /// Bytes of file page `id` into the scratch buffer; false when unknown.
    fn load_file_page(&mut self, id: u32) -> bool {
        match self.cswap.apa.file_vpn.get(id as usize) {
            Some(&v) if v != NONE => self.load_page(v),
            _ => false,
        }
    }

    /// Whether virtual page `vpn` has contents; in verify mode, its bytes loaded into the scratch
    /// buffer.
    fn load_or_know(&mut self, vpn: u32) -> bool {
        if self.verify {
            self.load_page(vpn)
        } else {
            self.has_contents(vpn)
        }
    }

    /// Reclaim is about to free clean file frame `f` (`__remove_mapping`): with APA, store its page.
    pub(crate) fn apa_evict(&mut self, ctx: &mut Ctx, f: u32) -> Result<()> {
        let fr = self.vm.frames[f as usize];
        if !self.apa_on() || !fr.is_file() || fr.has(F_SWAPCACHE) || fr.has(F_DIRTY) {
            return Ok(());
        }
        let id = fr.key;
        // The worker runs beside this reclaim (first: it uses the scratch buffer in verify mode).
        self.zswap_worker_run(ctx.now)?;
        // The page is built only if the store reads it (verify mode: at once, and again below).
        let vpn = self.cswap.apa.file_vpn.get(id as usize).copied();
        let vpn = match vpn {
            Some(v) if v != NONE && self.load_or_know(v) => v,
            _ => return Ok(()),
        };
        // Linux 4.7 (`shrink_sync`): a full pool is shrunk on this task first (its writebacks use the
        // scratch buffer in verify mode, so the page is loaded again).
        let room = self.zswap_shrink_sync(ctx, fr.memcg)?;
        let z = self.store.zswap.as_mut().expect("APA on");
        if !room {
            z.stats.file_refused += 1;
            z.invalidate_file(id);
            self.sync_pool_frames();
            return Ok(());
        }
        if self.verify {
            self.load_file_page(id);
        }
        let free = self.vm.free_pages();
        let version = self.cswap.apa.version[id as usize];
        let z = self.store.zswap.as_mut().expect("APA on");
        let mut page = super::swapio::offer(
            &self.vm,
            &self.cswap.contents,
            &mut self.cswap.buf,
            vpn,
            self.verify,
        )
        .expect("the page's process has contents");
        match z.store_file(id, version, fr.memcg, &mut page, free)? {
            Store::Stored(ns) => ctx.now += ns,
            Store::Refused(ns) => {
                ctx.now += ns;
                z.queue_worker(ctx.now);
            }
        }
        self.sync_pool_frames();
        Ok(())
    }

    /// The read-around of file pages `frames` (new, locked page-cache frames, `key` = file page id) is
    /// about to be submitted: serve from the pool the pages it holds (each decompressed in turn on the
    /// reading CPU, `io_done` set) and leave in `frames` only those to read from the device.
    pub(crate) fn apa_read(&mut self, ctx: &Ctx, want: u32, frames: &mut Vec<u32>) -> Result<()> {
        if !self.apa_on() {
            return Ok(());
        }
        let mut t = ctx.now;
        let mut keep = 0;
        for i in 0..frames.len() {
            let f = frames[i];
            let id = self.vm.frames[f as usize].key;
            let z = self.store.zswap.as_mut().expect("APA on");
            let hit = z.file_entry(id).is_some();
            if id == want {
                z.lookup(hit);
            }
            if !hit {
                frames[keep] = f;
                keep += 1;
                continue;
            }
            let known = self.verify && self.load_file_page(id);
            let bytes = known.then_some(&*self.cswap.buf);
            let version = self.cswap.apa.version[id as usize];
            let z = self.store.zswap.as_mut().expect("APA on");
            t += z.load_file(id, version, bytes)?.expect("checked above");
            self.vm.frames[f as usize].io_done = t;
        }
        frames.truncate(keep);
        self.sync_pool_frames();
        Ok(())
    }

    /// File page `id` was dirtied (a write to the block): a new version; a pool copy, if any, is stale
    /// and goes.
    pub fn apa_file_dirtied(&mut self, id: u32) {
        if let Some(v) = self.cswap.apa.version.get_mut(id as usize) {
            *v = v.wrapping_add(1);
        }
        if let Some(z) = self.store.zswap.as_mut() {
            z.invalidate_file(id);
        }
    }

    /// Invariant (verify mode): no file page is both in the page cache and in the pool.
    pub(crate) fn apa_check(&self) -> Result<()> {
        let Some(z) = self.store.zswap.as_ref() else {
            return Ok(());
        };
        for (id, &e) in z.by_file.iter().enumerate() {
            if e == NONE {
                continue;
            }
            let c = self.pc.index[id];
            if c != NONE && !is_shadow(c) {
                return Err(Error::Invariant(format!(
                    "file page {id} is both in the page cache (frame {c}) and in the pool"
                )));
            }
        }
        Ok(())
    }
}
