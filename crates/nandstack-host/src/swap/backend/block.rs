//! Linux swap on a block device (`__swap_writepage` → `swap_writepage_bdev_async`, `swap_read_folio`
//! → `swap_read_folio_bdev_async`): slot `s` is the 4 KiB at `base + s · 4096` of the device's LBA
//! space; the pages of one submission whose slots are consecutive merge into one request up to the
//! block layer's maximum request size (bios merged in the plug); discards become TRIM commands.

use nandstack_core::Result;
use serde_json::json;

use super::{issue_runs, Submit, SwapBackend, SwapPage};
use crate::block::{BlockLayer, IoKind, Region};

pub struct BlockSwap {
    /// Byte offset of slot 0 on the device.
    base: u64,
}

impl BlockSwap {
    pub fn new(base: u64) -> BlockSwap {
        BlockSwap { base }
    }

    fn offset(&self, slot: u32) -> u64 {
        self.base + slot as u64 * 4096
    }

    /// Issue `pages` as requests of consecutive slots (each dispatched when its cgroup's throttle allows).
    fn issue(
        &mut self,
        kind: IoKind,
        sub: &mut Submit,
        pages: &[SwapPage],
        done: &mut Vec<u64>,
    ) -> Result<()> {
        let base = self.base;
        issue_runs(kind, sub, pages, done, |io, slot, n, at, comm| {
            io.issue(kind, Region::Swap, base + slot as u64 * 4096, n, at, comm)
        })
    }
}

impl SwapBackend for BlockSwap {
    fn name(&self) -> &'static str {
        "block"
    }

    fn write(&mut self, sub: &mut Submit, pages: &[SwapPage], done: &mut Vec<u64>) -> Result<()> {
        self.issue(IoKind::Write, sub, pages, done)
    }

    fn read(&mut self, sub: &mut Submit, pages: &[SwapPage], done: &mut Vec<u64>) -> Result<()> {
        self.issue(IoKind::Read, sub, pages, done)
    }

    fn discard(
        &mut self,
        io: &mut BlockLayer,
        first: u32,
        n: u32,
        at: u64,
        comm: u16,
    ) -> Result<u64> {
        io.issue(
            IoKind::Discard,
            Region::Swap,
            self.offset(first),
            n,
            at,
            comm,
        )
    }

    fn report(&self) -> serde_json::Value {
        json!({ "kind": "block", "offset_bytes": self.base })
    }
}
