//! Per-block metadata shared by the FTL and the policies (policies read it, only the FTL writes it).

use nandstack_core::Divisor;

/// Sentinel for "no block / no page / unmapped".
pub const NONE: u32 = u32::MAX;

/// `BlockTable::content` bit: the block holds units written by the host.
pub const HOLDS_HOST: u8 = 1;
/// `BlockTable::content` bit: the block holds units moved by GC or wear levelling.
pub const HOLDS_MIGRATED: u8 = 2;

/// Life-cycle state of an erase block.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum BlockState {
    /// Erased, in its plane's free pool.
    Free,
    /// Being filled: the active block of one (stream, plane).
    Open,
    /// Full: a GC candidate.
    Sealed,
    /// Chosen as a GC / wear-levelling victim, being emptied.
    Victim,
}

/// Struct-of-arrays block table, indexed by global block id (plane × blocks_per_plane + block).
#[derive(Clone, Debug)]
pub struct BlockTable {
    pub blocks_per_plane: u32,
    /// `blocks_per_plane` as a reciprocal: [`BlockTable::plane_of`] is on the victim index's path of
    /// every overwrite (twice), where a hardware divide costs 20–40 cycles.
    per_plane: Divisor,
    pub units_per_block: u32,
    /// Valid 4 KiB units in the block.
    pub valid: Vec<u32>,
    /// Units written since the last erase (the write pointer; includes padding).
    pub written: Vec<u32>,
    pub erase_count: Vec<u32>,
    pub state: Vec<BlockState>,
    /// Placement stream that filled the block.
    pub stream: Vec<u8>,
    /// Logical clock (host-written units) of the last write or invalidation: the "age" base of cost-benefit
    /// (maintained only when the victim policy asks for it).
    pub modified_at: Vec<u64>,
    /// Order in which blocks were sealed (monotonic): FIFO's key.
    pub sealed_seq: Vec<u64>,
    /// What the block was filled with since its last erase: `HOLDS_HOST` | `HOLDS_MIGRATED` bits.
    pub content: Vec<u8>,
    /// Devices with several program modes (the hybrid SLC/QLC device): the mode each block was opened in
    /// since its last erase, an index into `units_per_mode`. Empty on single-mode devices, where every
    /// block holds `units_per_block`.
    pub mode: Vec<u8>,
    /// Units a block holds in each program mode (`[units_per_block]` on single-mode devices).
    pub units_per_mode: Vec<u32>,
}

impl BlockTable {
    pub fn new(total_blocks: u32, blocks_per_plane: u32, units_per_block: u32) -> BlockTable {
        let n = total_blocks as usize;
        BlockTable {
            blocks_per_plane,
            per_plane: Divisor::new(blocks_per_plane.max(1)),
            units_per_block,
            valid: vec![0; n],
            written: vec![0; n],
            erase_count: vec![0; n],
            state: vec![BlockState::Free; n],
            stream: vec![0; n],
            modified_at: vec![0; n],
            sealed_seq: vec![0; n],
            content: vec![0; n],
            mode: Vec::new(),
            units_per_mode: vec![units_per_block],
        }
    }
    /// A table whose blocks can be programmed in several modes holding `units_per_mode[m]` units each
    /// (e.g. SLC and QLC); `units_per_block` is the largest. Every block starts in mode 0.
    pub fn with_modes(
        total_blocks: u32,
        blocks_per_plane: u32,
        units_per_mode: &[u32],
    ) -> BlockTable {
        let upb = units_per_mode.iter().copied().max().unwrap_or(0);
        BlockTable {
            mode: vec![0; total_blocks as usize],
            units_per_mode: units_per_mode.to_vec(),
            ..BlockTable::new(total_blocks, blocks_per_plane, upb)
        }
    }
    #[inline]
    pub fn len(&self) -> u32 {
        self.valid.len() as u32
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.valid.is_empty()
    }
    #[inline]
    pub fn plane_of(&self, block: u32) -> u32 {
        self.per_plane.quotient(block)
    }
    /// Global block ids of one plane.
    pub fn plane_blocks(&self, plane: u32) -> std::ops::Range<u32> {
        plane * self.blocks_per_plane..(plane + 1) * self.blocks_per_plane
    }
    /// Units the block holds in its current program mode.
    #[inline]
    pub fn capacity(&self, block: u32) -> u32 {
        match self.mode.get(block as usize) {
            Some(&m) => self.units_per_mode[m as usize],
            None => self.units_per_block,
        }
    }
    /// Valid fraction of a block (of its capacity in its program mode), u in [0, 1].
    #[inline]
    pub fn utilization(&self, block: u32) -> f64 {
        self.valid[block as usize] as f64 / self.capacity(block) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_follows_the_program_mode() {
        let single = BlockTable::new(4, 2, 64);
        assert_eq!(
            (single.capacity(3), single.units_per_mode.clone()),
            (64, vec![64])
        );
        let mut t = BlockTable::with_modes(4, 4, &[16, 64]);
        assert_eq!(t.units_per_block, 64);
        assert_eq!(t.capacity(1), 16, "mode 0 until opened otherwise");
        t.mode[1] = 1;
        t.valid[1] = 32;
        assert_eq!((t.capacity(1), t.utilization(1)), (64, 0.5));
    }
}
