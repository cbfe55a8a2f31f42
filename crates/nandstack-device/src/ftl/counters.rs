//! Event counters of the FTL, by cause. All are reset together after preconditioning.

use serde::Serialize;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Counters {
    pub host_write_requests: u64,
    pub host_read_requests: u64,
    pub host_trim_requests: u64,
    pub host_write_bytes: u64,
    pub host_read_bytes: u64,
    pub host_trim_bytes: u64,
    /// 4 KiB units written on behalf of the host (a sub-unit write still writes a whole unit).
    pub host_write_units: u64,
    /// Host writes that covered only part of a 4 KiB unit.
    pub partial_unit_writes: u64,
    /// Flash page reads needed to merge a partial write with the unit's old data (read-modify-write).
    pub rmw_read_pages: u64,
    pub host_read_units: u64,
    /// Host-read units that were never written or were trimmed (served without a flash read).
    pub unmapped_read_units: u64,
    /// Flash page reads serving host reads.
    pub host_read_pages: u64,
    /// Units a TRIM unmapped (units that were already unmapped are not counted).
    pub trimmed_units: u64,
    /// DISS CL-SDI: swap-range units invalidated by the read that swapped them in.
    pub swap_invalidated_units: u64,
    /// GC-migrated units that lie in the registered swap range (0 until a range is registered).
    pub gc_migrated_swap_units: u64,
    /// Flash page programs (a page is programmed when its last unit is filled or when it is padded).
    pub flash_program_pages: u64,
    pub program_units_host: u64,
    pub program_units_gc: u64,
    pub program_units_wear_leveling: u64,
    /// Units of padding written to complete a page on flush.
    pub padding_units: u64,
    /// Flash page reads done by GC (one per page holding at least one valid unit of the victim).
    pub gc_read_pages: u64,
    pub wear_leveling_read_pages: u64,
    pub gc_erases: u64,
    pub wear_leveling_erases: u64,
    /// Times GC was triggered (a trigger may collect several victims).
    pub gc_invocations: u64,
    pub gc_victim_blocks: u64,
    /// Victims collected by background GC in idle periods (included in gc_victim_blocks).
    pub background_gc_victims: u64,
    /// 4 KiB units moved by GC.
    pub gc_migrated_units: u64,
    pub wear_leveling_invocations: u64,
    pub wear_leveling_migrated_units: u64,
    /// Translation-page reads caused by mapping-cache misses.
    pub translation_read_pages: u64,
    /// Units written into each placement stream's blocks (host, GC and wear levelling together).
    pub units_by_stream: Vec<u64>,
    /// Translation-page programs caused by dirty mapping-cache evictions (included in flash_program_pages).
    pub translation_program_pages: u64,
    /// Blocks sealed holding only host-written units (padding aside).
    pub sealed_blocks_host_only: u64,
    /// Blocks sealed holding only units moved by GC or wear levelling.
    pub sealed_blocks_migrated_only: u64,
    /// Blocks sealed holding both.
    pub sealed_blocks_mixed: u64,
}
