//! Per-block state of the hybrid device (struct of arrays) and the DRAM write buffer.

use std::collections::VecDeque;

use super::Region;

/// "No block / no unit / unmapped".
pub const NONE: u32 = u32::MAX;

/// Program mode of a block since its last erase (`None` while erased and free).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BlockMode {
    Free,
    Slc,
    Qlc,
}

/// Life cycle of a block.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BlockState {
    Free,
    Open,
    Sealed,
}

/// The block table.
#[derive(Clone, Debug)]
pub struct Blocks {
    pub mode: Vec<BlockMode>,
    pub state: Vec<BlockState>,
    /// Valid 4 KiB units.
    pub valid: Vec<u32>,
    /// Write pointer in units (includes padding).
    pub written: Vec<u32>,
    pub slc_erases: Vec<u32>,
    pub qlc_erases: Vec<u32>,
    /// UST: the logical block that owns this SLC block; `NONE` otherwise.
    pub owner: Vec<u32>,
    /// Order of allocation (monotonic): the age of a block's data.
    pub seq: Vec<u64>,
    /// Erased blocks, oldest-freed first (so wear spreads over every block).
    pub free: VecDeque<u32>,
    next_seq: u64,
}

impl Blocks {
    pub fn new(n: u32) -> Blocks {
        let n_us = n as usize;
        Blocks {
            mode: vec![BlockMode::Free; n_us],
            state: vec![BlockState::Free; n_us],
            valid: vec![0; n_us],
            written: vec![0; n_us],
            slc_erases: vec![0; n_us],
            qlc_erases: vec![0; n_us],
            owner: vec![NONE; n_us],
            seq: vec![0; n_us],
            free: (0..n).collect(),
            next_seq: 0,
        }
    }
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> u32 {
        self.mode.len() as u32
    }
    /// Take the oldest-freed block and open it in `mode`.
    pub fn take(&mut self, mode: BlockMode) -> Option<u32> {
        let b = self.free.pop_front()?;
        let i = b as usize;
        self.mode[i] = mode;
        self.state[i] = BlockState::Open;
        self.next_seq += 1;
        self.seq[i] = self.next_seq;
        Some(b)
    }
    /// Erase a block (it must hold no valid data) and return it to the free pool.
    pub fn erase(&mut self, b: u32) {
        let i = b as usize;
        debug_assert_eq!(self.valid[i], 0);
        match self.mode[i] {
            BlockMode::Slc => self.slc_erases[i] += 1,
            BlockMode::Qlc => self.qlc_erases[i] += 1,
            BlockMode::Free => {}
        }
        self.mode[i] = BlockMode::Free;
        self.state[i] = BlockState::Free;
        self.written[i] = 0;
        self.owner[i] = NONE;
        self.free.push_back(b);
    }
}

/// One buffered 4 KiB unit.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BufSlot {
    /// Logical unit, or `NONE` once trimmed (a dead slot, skipped at eviction).
    pub lpn: u32,
    /// Where the unit goes when evicted (decided by its latest host write).
    pub dest: Region,
    pub version: u64,
}

/// The DRAM write buffer: a FIFO ring of units; overwrites of a buffered unit update it in place.
#[derive(Clone, Debug)]
pub struct WriteBuffer {
    pub slots: Vec<BufSlot>,
    head: u32,
    len: u32,
}

impl WriteBuffer {
    pub fn new(cap: u32) -> WriteBuffer {
        let empty = BufSlot {
            lpn: NONE,
            dest: Region::Qlc,
            version: 0,
        };
        WriteBuffer {
            slots: vec![empty; cap as usize],
            head: 0,
            len: 0,
        }
    }
    pub fn cap(&self) -> u32 {
        self.slots.len() as u32
    }
    pub fn is_full(&self) -> bool {
        self.len == self.cap()
    }
    /// Append a unit; returns its slot. The buffer must not be full.
    pub fn push(&mut self, e: BufSlot) -> u32 {
        debug_assert!(!self.is_full());
        let i = (self.head + self.len) % self.cap();
        self.slots[i as usize] = e;
        self.len += 1;
        i
    }
    /// Remove and return the oldest live unit (dead slots are dropped on the way).
    pub fn pop(&mut self) -> Option<BufSlot> {
        while self.len > 0 {
            let e = self.slots[self.head as usize];
            self.slots[self.head as usize].lpn = NONE;
            self.head = (self.head + 1) % self.cap();
            self.len -= 1;
            if e.lpn != NONE {
                return Some(e);
            }
        }
        None
    }
    /// Slots currently in the ring (live or dead).
    pub fn occupied(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len).map(move |k| (self.head + k) % self.cap())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_is_fifo_and_skips_dead_slots() {
        let mut w = WriteBuffer::new(3);
        let e = |lpn| BufSlot {
            lpn,
            dest: Region::Slc,
            version: 1,
        };
        let a = w.push(e(10));
        w.push(e(11));
        w.push(e(12));
        assert!(w.is_full());
        w.slots[a as usize].lpn = NONE; // trimmed
        assert_eq!(w.pop().unwrap().lpn, 11);
        let d = w.push(e(13));
        assert_eq!(d, a, "the ring reuses the freed slot");
        assert_eq!(w.occupied().count(), 2);
        assert_eq!(w.pop().unwrap().lpn, 12);
        assert_eq!(w.pop().unwrap().lpn, 13);
        assert_eq!(w.pop(), None);
    }

    #[test]
    fn blocks_take_and_erase_cycle_through_the_pool() {
        let mut b = Blocks::new(3);
        let x = b.take(BlockMode::Slc).unwrap();
        assert_eq!((x, b.state[0]), (0, BlockState::Open));
        b.erase(x);
        assert_eq!(b.slc_erases[0], 1);
        assert_eq!(b.free.iter().copied().collect::<Vec<_>>(), vec![1, 2, 0]);
    }
}
