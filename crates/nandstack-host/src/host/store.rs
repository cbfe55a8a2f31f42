//! Where swapped-out pages are kept, above the swap layer: the backend and zswap in front of it. The swap
//! area (`crate::swap`, a floor below) keeps slots only; the host owns these two beside it and hands
//! them to the swap area's freeing methods, which tell them of every freed slot.

use crate::backend::SwapBackend;
use crate::swap::SlotFreed;
use crate::zswap::Zswap;

/// The backend (`swap_info_struct`'s device and its I/O path) and zswap, the compressed cache in front
/// of it (`None` when disabled).
pub struct SwapStore {
    pub backend: Box<dyn SwapBackend>,
    pub zswap: Option<Box<Zswap>>,
}

impl SlotFreed for SwapStore {
    /// `swap_range_free`: any zswap entry goes with the slot (`zswap_invalidate`), then the backend is
    /// told (`swap_slot_free_notify`).
    fn slot_freed(&mut self, slot: u32) {
        if let Some(z) = self.zswap.as_mut() {
            z.invalidate(slot);
        }
        self.backend.slot_freed(slot);
    }
}
