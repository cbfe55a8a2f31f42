//! nandstack-host: the host memory and swap model — a Linux-like (6.x) virtual-memory layer above a
//! flash SSD.
//!
//! * [`vm`]: page tables, frames, per-cgroup split LRU lists, memory cgroups, workingset shadows;
//! * [`reclaim`]: reclaim policies (Linux split LRU, textbook FIFO and CLOCK) behind one trait;
//! * [`swap`]: the swap area — slot map, swap cache, cluster slot allocator, discard and readahead
//!   policies;
//! * [`pagecache`]: file pages on a file partition (clean drop, dirty writeback);
//! * [`host`]: the mechanisms (faults, charging, watermarks, kswapd, eviction, flusher, invariants);
//! * [`workloads`]: seeded memory-reference generators, trace readers, the nsref file format;
//! * [`contents`]: the bytes in a process's pages; [`zpool`], [`zswap`]: compressed swap (zswap in
//!   front of the backend, the zero-page map; zram is a backend in [`swap::backend`]);
//!
//! The model only: `nandstack-sim` runs it (it builds the device, hands it to [`host::Host::build`],
//! drives the threads' references, reports) and the kernel comparisons live in `nandstack-kernel`.

pub mod block;
pub mod config;
pub mod contents;
pub mod host;
pub mod pagecache;
pub mod plug;
pub mod reclaim;
pub mod swap;
pub mod vm;
pub mod workloads;
pub mod zpool;
pub mod zswap;
