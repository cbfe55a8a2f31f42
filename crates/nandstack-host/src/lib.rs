//! nandstack-host: the host memory and swap model — a Linux-like (6.x) virtual-memory layer above a
//! flash SSD.
//!
//! The modules stand on floors; each uses only its own floor and those below (`floors.rs` checks it,
//! docs/architecture.md draws it), bottom to top:
//!
//! 1. base — [`contents`] (the bytes in a process's pages), [`compressor`] (the compressors' CPU
//!    cost), [`block`] (the block layer to the device, the block trace), [`plug`] (the task's plug);
//! 2. [`workloads`]: seeded memory-reference generators, trace readers, the nsref file format;
//! 3. [`vm`]: page tables, frames, per-cgroup split LRU lists, memory cgroups, workingset shadows;
//! 4. [`swap`]: the swap area — slot map, swap cache, slot allocators, discard and readahead policies;
//!    [`pagecache`]: file pages on a file partition (clean drop, dirty writeback);
//! 5. [`zpool`]: the compressed-page pools (zsmalloc, z3fold, zbud);
//! 6. [`backend`]: where swapped-out pages go (block, loop, zram, ZNSwap), each with its config;
//! 7. [`zswap`]: the compressed cache in front of the backend and its policies (ezswap);
//! 8. [`reclaim`]: reclaim policies (Linux split LRU, textbook FIFO and CLOCK) over a narrow view;
//! 9. [`host`]: the mechanisms (faults, charging, watermarks, kswapd, eviction, flusher, ZNGC's driver,
//!    invariants) and [`config`], the host's configuration gathering every floor's.
//!
//! The model only: `nandstack-sim` runs it (it builds the device, hands it to [`host::Host::build`],
//! drives the threads' references, reports) and the kernel comparisons live in `nandstack-kernel`.

pub mod backend;
pub mod block;
pub mod compressor;
pub mod config;
pub mod contents;
#[cfg(test)]
mod floors;
pub mod host;
pub mod pagecache;
pub mod plug;
pub mod reclaim;
pub mod swap;
pub mod vm;
pub mod workloads;
pub mod zpool;
pub mod zswap;
