//! DISS swap/file data separation (SDS): two streams, file data (0) and swap data (1), told apart by the
//! swap range the host registered. Host writes and migrations follow the same rule, so every block holds
//! one kind only and a new open block of one kind is never the other kind's (one open block per stream
//! and plane).

use super::{PlacementPolicy, WriteCtx};

#[derive(Clone, Debug, Default)]
pub struct SwapFile {
    /// Registered swap range in logical units, `[first, end)`.
    range: Option<(u32, u32)>,
}

impl PlacementPolicy for SwapFile {
    fn name(&self) -> &'static str {
        "swap_file"
    }
    fn streams(&self) -> u32 {
        2
    }
    #[inline]
    fn stream_for(&mut self, ctx: &WriteCtx) -> u8 {
        match self.range {
            Some((a, b)) if (a..b).contains(&ctx.lpn) => 1,
            _ => 0,
        }
    }
    fn on_swap_range(&mut self, first: u32, end: u32) {
        self.range = Some((first, end));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ftl::placement::WriteCause;

    #[test]
    fn swap_range_units_go_to_stream_one_whatever_the_cause() {
        let mut p = SwapFile::default();
        let ctx = |lpn, cause| WriteCtx {
            lpn,
            cause,
            source_stream: None,
            request_bytes: 4096,
        };
        assert_eq!(p.stream_for(&ctx(5, WriteCause::Host)), 0, "no range yet");
        p.on_swap_range(100, 200);
        for cause in [WriteCause::Host, WriteCause::Gc, WriteCause::WearLeveling] {
            assert_eq!(p.stream_for(&ctx(99, cause)), 0);
            assert_eq!(p.stream_for(&ctx(100, cause)), 1);
            assert_eq!(p.stream_for(&ctx(199, cause)), 1);
            assert_eq!(p.stream_for(&ctx(200, cause)), 0);
        }
    }
}
