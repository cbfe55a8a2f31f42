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
//! * [`sim`]: the multi-threaded simulation loop; [`report`]: the JSON report.
//!
//! Entry points: [`run_config`] (the host layer of a run; `nandstack-sim` drives whole stacks) and
//! [`bench_host`].

pub mod bench;
pub mod block;
pub mod config;
pub mod contents;
pub mod host;
pub mod kcswap;
pub mod kswap;
pub mod pagecache;
pub mod plug;
pub mod reclaim;
pub mod report;
pub mod sim;
pub mod swap;
pub mod vm;
pub mod workloads;
pub mod zpool;
pub mod zswap;

pub use bench::bench_host;
pub use config::HostSimConfig;
pub use sim::Sim;

use nandstack_core::Result;

/// Run a parsed config and return the finished simulation (for callers that want the raw counters).
pub fn run_config(
    cfg: &HostSimConfig,
    verify: bool,
    progress: &mut dyn FnMut(&str, u64, u64) -> bool,
) -> Result<Sim> {
    let mut sim = Sim::build_with_progress(cfg, verify, progress)?;
    sim.run(progress)?;
    Ok(sim)
}
