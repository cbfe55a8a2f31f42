//! Memory-reference workloads: seeded generators and trace readers producing [`MemRef`]s per thread,
//! plus the address-space layout (mappings, files) each process needs.
//!
//! A reference names a page of the process's own address space (page 0 = its first page); the VMA
//! holding it decides whether it is anonymous or file-backed. Besides reads and writes, a stream can
//! mark the begin/end of an application request (for request latency and throughput), sleep, or wait
//! until a time since the process started.

pub mod config;
mod kv;
pub mod launch;
pub mod launch_config;
mod memtouch;
mod mobile;
pub mod nsref;
mod pmbench;
mod region;
pub mod tee;
mod trace;
mod vmscal;

pub use memtouch::{program_corpus_bytes, Memtouch, DATA_ENV};

use nandstack_core::Result;

use crate::contents::PageContents;
use config::WorkloadConfig;

pub const OP_READ: u8 = 0;
pub const OP_WRITE: u8 = 1;
/// Begin of an application request (`page` unused).
pub const OP_BEGIN: u8 = 2;
/// End of an application request.
pub const OP_END: u8 = 3;
/// Sleep `page` µs.
pub const OP_SLEEP: u8 = 4;
/// Wait until `page` ms after the process started (no wait if already later).
pub const OP_UNTIL: u8 = 5;

/// One memory reference (or marker) of one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemRef {
    pub page: u32,
    pub op: u8,
}
impl MemRef {
    #[inline]
    pub fn read(page: u32) -> MemRef {
        MemRef { page, op: OP_READ }
    }
    #[inline]
    pub fn write(page: u32) -> MemRef {
        MemRef { page, op: OP_WRITE }
    }
    #[inline]
    pub fn access(page: u32, write: bool) -> MemRef {
        MemRef {
            page,
            op: write as u8,
        }
    }
    pub fn marker(op: u8, arg: u32) -> MemRef {
        MemRef { page: arg, op }
    }
}

/// A thread's reference stream.
pub trait RefStream: Send {
    /// Append up to `max` references to `out`; return false once the stream has ended (it may append
    /// its last references in the same call).
    fn fill(&mut self, out: &mut Vec<MemRef>, max: usize) -> Result<bool>;
    /// Total references, if known (for progress).
    fn len_hint(&self) -> Option<u64>;
    /// Whether `fill` can run now. Always, but for a [`tee`]'s reader that is too far ahead of the
    /// others reading the same stream: its simulation pauses (`Sim::step`) until they catch up.
    fn ready(&self) -> bool {
        true
    }
    /// A tee's reader: let every reader of its stream run twice as far ahead of the slowest (when
    /// the simulations reading it wait on each other). Nothing for other streams.
    fn widen(&mut self) {}
}

/// What a mapping of a workload maps (pages relative to the process; starts are 512-page aligned).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapKind {
    Anon,
    /// Pages `[0, pages)` of the workload's file `file`.
    File {
        file: usize,
        shared: bool,
        exec: bool,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    pub start: u32,
    pub pages: u32,
    pub kind: MapKind,
}

/// Read `stream` to its end in fills of `chunk` references (as the simulation does), handing each
/// fill's references to `each` — to time a generator alone or to checksum its stream.
pub fn drain(
    stream: &mut dyn RefStream,
    chunk: usize,
    mut each: impl FnMut(&[MemRef]),
) -> Result<()> {
    let mut buf = Vec::with_capacity(chunk + 64);
    loop {
        buf.clear();
        let more = stream.fill(&mut buf, chunk)?;
        each(&buf);
        if !more {
            return Ok(());
        }
    }
}

/// A built workload: its address space and its threads.
pub struct Workload {
    /// Size of the address space, pages.
    pub pages: u32,
    pub mappings: Vec<Mapping>,
    /// Sizes of the workload's files, pages.
    pub files: Vec<u32>,
    pub threads: Vec<Box<dyn RefStream>>,
    /// The workload issues requests (BEGIN/END markers): report throughput and latency.
    pub kv: bool,
    /// Every anonymous page of the layout is written at some point (the working set is the layout):
    /// checked against RAM + swap before the run.
    pub touches_all: bool,
    /// Human-readable description.
    pub describe: String,
}

/// Place mappings of the given sizes one after another, each starting on a 2 MiB boundary.
pub fn layout(sizes: &[(u32, MapKind)]) -> (u32, Vec<Mapping>) {
    let mut at = 0u32;
    let mut out = Vec::new();
    for (pages, kind) in sizes {
        out.push(Mapping {
            start: at,
            pages: *pages,
            kind: kind.clone(),
        });
        at += pages.div_ceil(512) * 512;
    }
    (at.max(512), out)
}

/// Build the workload of a process. `seed` is the run seed; each generator derives its own streams.
pub fn build(cfg: &WorkloadConfig, seed: u64, index: u64) -> Result<Workload> {
    let s = seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    match cfg {
        WorkloadConfig::Memtouch(c) => memtouch::build(c),
        WorkloadConfig::VmScalability(c) => Ok(vmscal::build(c, s)),
        WorkloadConfig::Pmbench(c) => Ok(pmbench::build(c, s)),
        WorkloadConfig::Ycsb(c) => Ok(kv::build_ycsb(c, s)),
        WorkloadConfig::MemcachedEtc(c) => Ok(kv::build_etc(c, s)),
        WorkloadConfig::Mobile(c) => mobile::build(c, s),
        WorkloadConfig::Launch(c) => Ok(launch::build_contents(c, s)?.0),
        WorkloadConfig::Trace(c) => trace::build(c, s),
        WorkloadConfig::Inline(c) => nsref::build_inline(c),
    }
}

/// [`build`], with the process's page contents when the workload models them (memtouch's CONTENT).
pub fn build_with_contents(
    cfg: &WorkloadConfig,
    seed: u64,
    index: u64,
) -> Result<(Workload, Option<Box<dyn PageContents>>)> {
    match cfg {
        WorkloadConfig::Memtouch(c) => {
            let (w, contents) = memtouch::build_contents(c)?;
            Ok((w, Some(Box::new(contents))))
        }
        WorkloadConfig::Launch(c) => {
            let s = seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let (w, contents) = launch::build_contents(c, s)?;
            Ok((w, Some(Box::new(contents))))
        }
        _ => Ok((build(cfg, seed, index)?, None)),
    }
}

/// A stream over a fixed vector (tests, inline workloads).
pub struct VecStream {
    refs: Vec<MemRef>,
    pos: usize,
}
impl VecStream {
    pub fn new(refs: Vec<MemRef>) -> VecStream {
        VecStream { refs, pos: 0 }
    }
}
impl RefStream for VecStream {
    fn fill(&mut self, out: &mut Vec<MemRef>, max: usize) -> Result<bool> {
        let end = (self.pos + max).min(self.refs.len());
        out.extend_from_slice(&self.refs[self.pos..end]);
        self.pos = end;
        Ok(self.pos < self.refs.len())
    }
    fn len_hint(&self) -> Option<u64> {
        Some(self.refs.len() as u64)
    }
}

/// Pages of `mib` MiB.
pub(crate) fn mib_pages(mib: u64) -> u32 {
    (mib * 256).min(u32::MAX as u64) as u32
}
