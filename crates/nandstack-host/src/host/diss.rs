//! The host's part of the DISS comparison that is not a policy of its own: idle-time (deferred) TRIM —
//! before the host uses the device at `now`, the discard policy's TRIMs that would have run while the
//! device was idle are issued at their own times (iTRIM, STRIM's freed-slot path).

use nandstack_core::{Nanos, Result};

use super::{Host, COMM_KWORKER};

impl Host {
    /// Issue the deferred TRIMs due in the device's idle time before `now` (from the `kworker`).
    pub(crate) fn idle_discards(&mut self, now: Nanos) -> Result<()> {
        let idle_from = self.io.rw_busy_until;
        while let Some((at, first, n)) = self.swap.next_deferred(idle_from, now) {
            self.store
                .backend
                .discard(&mut self.io, first, n, at, COMM_KWORKER)?;
        }
        Ok(())
    }
}
