//! Linux swap on a block device (`__swap_writepage` → `swap_writepage_bdev_async`, `swap_read_folio`
//! → `swap_read_folio_bdev_async`): slot `s` is the 4 KiB at `base + s · 4096` of the device's LBA
//! space; the pages of one submission whose slots are consecutive merge into one request up to the
//! block layer's maximum request size (bios merged in the plug); discards become TRIM commands.
//! With `host.swap.register_range` the partition's range is registered with the device at swapon (DISS
//! SDR, the cross-layer `register_swap_range` command).

use nandstack_core::{Error, Nanos, Result};
use nandstack_device::{Command, ExtCommand};
use serde_json::json;

use super::{BackendEnv, SwapBackend};
use crate::block::{BlockLayer, IoKind, Region};

pub struct BlockSwap {
    /// Byte offset of slot 0 on the device.
    base: u64,
    /// Register the partition with the device at swapon (DISS SDR).
    register: bool,
    /// The registered range (bytes), once registered.
    registered: Option<(u64, u64)>,
}

impl BlockSwap {
    pub fn new(base: u64) -> BlockSwap {
        BlockSwap {
            base,
            register: false,
            registered: None,
        }
    }

    /// Register the swap partition's range with the device at swapon (DISS SDR).
    pub fn registering(mut self, register: bool) -> BlockSwap {
        self.register = register;
        self
    }
}

impl SwapBackend for BlockSwap {
    fn name(&self) -> &'static str {
        "block"
    }

    /// DISS SDR: the whole partition, header included (`swapon` knows its start and end LBAs).
    fn swapon(&mut self, io: &mut BlockLayer, nslots: u32) -> Result<()> {
        if !self.register || nslots == 0 {
            return Ok(());
        }
        let (offset, len) = (self.base, nslots as u64 * 4096);
        let kind = io.dev.kind().name();
        io.dev
            .submit(
                Nanos(0),
                Command::Ext(ExtCommand::RegisterSwapRange { offset, len }),
            )
            .map_err(|e| match e {
                Error::Unsupported(_) => Error::config(
                    "host.swap.register_range",
                    format!(
                        "the {kind} device does not implement the register_swap_range command \
                         (DISS swap-data recognition); use a block device or turn it off"
                    ),
                ),
                other => other,
            })?;
        self.registered = Some((offset, len));
        Ok(())
    }

    /// Slot `first` is the 4 KiB at `base + first · 4096`.
    fn request(
        &mut self,
        io: &mut BlockLayer,
        kind: IoKind,
        first: u32,
        n: u32,
        at: Nanos,
        comm: u16,
    ) -> Result<Nanos> {
        let offset = self.base + first as u64 * 4096;
        io.issue(kind, Region::Swap, offset, n, at, comm)
    }

    fn prefetch_read(&self, io: &BlockLayer, slot: u32) {
        io.dev
            .prefetch([None, None, Some(self.base + slot as u64 * 4096)]);
    }

    fn report(&self) -> serde_json::Value {
        json!({
            "kind": "block",
            "offset_bytes": self.base,
            "registered_range_bytes": self.registered.map(|(o, l)| [o, l]),
        })
    }
}

/// Linux block swap's check against the rest of the configuration: it writes slots in place, which a
/// zoned device refuses (with swap on). Errors name the key.
pub fn validate(env: &BackendEnv) -> nandstack_core::Result<()> {
    if env.zoned && env.size_mib > 0 {
        return Err(nandstack_core::Error::config(
            "host.swap.backend.kind",
            "Linux block swap writes slots in place, which a zoned device refuses (writes only at a \
             zone's write pointer): use [host.swap.backend] kind = \"znswap\" with device.kind = \"zoned\"",
        ));
    }
    Ok(())
}
