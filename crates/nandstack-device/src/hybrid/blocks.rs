//! Per-block state of the hybrid device: the block FTL's [`BlockTable`] with two program modes (SLC and
//! QLC, each with its own capacity), plus what only the hybrid needs — one erased-block pool shared by
//! both regions, SLC-mode erase counts and UST's block owners — and the payload of its write buffer.

use std::collections::VecDeque;

use crate::ftl::blocks::{BlockState, BlockTable};

use super::Region;

pub use crate::ftl::blocks::NONE;

/// Program mode of a block since its last erase (`Free` while erased and pooled).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BlockMode {
    Free,
    Slc,
    Qlc,
}

/// `BlockTable::mode` index of each program mode.
const SLC_MODE: u8 = 0;
const QLC_MODE: u8 = 1;

/// The block table.
#[derive(Clone, Debug)]
pub struct Blocks {
    /// Valid units, write pointers (padding included), states, program modes, seal order, lifetime
    /// erase counts, placement stream (the data kind: 0 file, 1 swap under SDS) — the block FTL's table.
    pub t: BlockTable,
    /// Lifetime erases in SLC mode (QLC-mode erases are the rest of `t.erase_count`).
    pub slc_erases: Vec<u32>,
    /// UST: the logical block (key) that owns this SLC block; `NONE` otherwise.
    pub owner: Vec<u32>,
    /// Erased blocks, oldest-freed first (so wear spreads over every block).
    pub free: VecDeque<u32>,
}

impl Blocks {
    /// `n` erased blocks holding `slc_units` units in SLC mode and `qlc_units` in QLC mode (one plane:
    /// the hybrid's victim scopes are its regions, not planes).
    pub fn new(n: u32, slc_units: u32, qlc_units: u32) -> Blocks {
        let n_us = n as usize;
        Blocks {
            t: BlockTable::with_modes(n, n, &[slc_units, qlc_units]),
            slc_erases: vec![0; n_us],
            owner: vec![NONE; n_us],
            free: (0..n).collect(),
        }
    }
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> u32 {
        self.t.len()
    }
    /// The block's program mode.
    #[inline]
    pub fn mode(&self, b: u32) -> BlockMode {
        let i = b as usize;
        match (self.t.state[i], self.t.mode[i]) {
            (BlockState::Free, _) => BlockMode::Free,
            (_, SLC_MODE) => BlockMode::Slc,
            _ => BlockMode::Qlc,
        }
    }
    /// Take the oldest-freed block and open it in `mode` for data of placement stream `stream`.
    pub fn take(&mut self, mode: BlockMode, stream: u8) -> Option<u32> {
        let b = self.free.pop_front()?;
        let i = b as usize;
        self.t.mode[i] = if mode == BlockMode::Slc {
            SLC_MODE
        } else {
            QLC_MODE
        };
        self.t.state[i] = BlockState::Open;
        self.t.stream[i] = stream;
        Some(b)
    }
    /// Erase a block (it must hold no valid data) and return it to the free pool.
    pub fn erase(&mut self, b: u32) {
        let i = b as usize;
        debug_assert_eq!(self.t.valid[i], 0);
        if self.mode(b) == BlockMode::Slc {
            self.slc_erases[i] += 1;
        }
        self.t.erase_count[i] += 1;
        self.t.state[i] = BlockState::Free;
        self.t.written[i] = 0;
        self.t.content[i] = 0;
        self.owner[i] = NONE;
        self.free.push_back(b);
    }
    /// Lifetime erases of block `b` in QLC mode.
    pub fn qlc_erases(&self, b: u32) -> u32 {
        self.t.erase_count[b as usize] - self.slc_erases[b as usize]
    }
}

/// What the write buffer keeps with each buffered 4 KiB unit (the shared [`crate::cache::WriteBuffer`]
/// in FIFO order): where the unit goes when evicted (decided by its latest host write) and its version.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BufEntry {
    pub dest: Region,
    pub version: u64,
}

impl Default for BufEntry {
    fn default() -> Self {
        BufEntry {
            dest: Region::Qlc,
            version: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_take_and_erase_cycle_through_the_pool() {
        let mut b = Blocks::new(3, 4, 16);
        let x = b.take(BlockMode::Slc, 1).unwrap();
        assert_eq!(
            (x, b.t.state[0], b.mode(0)),
            (0, BlockState::Open, BlockMode::Slc)
        );
        assert_eq!((b.t.capacity(0), b.t.stream[0]), (4, 1));
        let y = b.take(BlockMode::Qlc, 0).unwrap();
        assert_eq!((b.mode(y), b.t.capacity(y)), (BlockMode::Qlc, 16));
        b.erase(x);
        b.erase(y);
        assert_eq!(
            (b.slc_erases[0], b.qlc_erases(0), b.qlc_erases(1)),
            (1, 0, 1)
        );
        assert_eq!(b.mode(0), BlockMode::Free);
        assert_eq!(b.free.iter().copied().collect::<Vec<_>>(), vec![2, 0, 1]);
    }
}
