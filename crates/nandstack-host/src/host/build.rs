//! Build a [`Host`] from the config and the processes' workloads: device and partitions (checked to
//! fit and not overlap), RAM and watermarks, cgroups, swap area with its allocator, discard and
//! readahead policies, page cache with the workloads' files, reclaim policy, processes and mappings.

use std::collections::BinaryHeap;

use nandstack_core::rng::Rng;
use nandstack_core::{Error, Nanos, Result};
use nandstack_device::device::ZoneModel;
use nandstack_device::Device;

use super::SwapStore;
use super::{Host, HostStats, Params};
use crate::backend::{BlockSwap, SwapBackend};
use crate::block::BlockLayer;
use crate::config::{
    mib, BlockTraceOut, DiscardMode, HostConfig, ProcessConfig, ReadaheadPolicyKind,
    ReclaimPolicyKind, SwapAllocatorKind, SwapBackendConfig,
};
use crate::pagecache::PageCache;
use crate::reclaim::{ClockReclaim, FifoReclaim, LinuxReclaim, ReclaimPolicy};
use crate::swap::alloc::{
    ClusterAllocator, ClusterV5Allocator, NextFitAllocator, ScanBase, SlotAllocator,
    SWAP_TRUNK_STREAM, TRUNK_SLOTS,
};
use crate::swap::discard::{
    ClusterDiscard, DiscardPolicy, FineDiscard, IdleTrim, NoDiscard, SwapInTrim,
};
use crate::swap::readahead::{ClusterReadahead, NoReadahead, Readahead, VmaReadahead};
use crate::swap::{SwapArea, SwapGeometry};
use crate::vm::memcg::Memcg;
use crate::vm::page::{MAX_FRAMES, MAX_SLOTS};
use crate::vm::{Vm, Vma, VmaKind, VmaRa};
use crate::workloads::{MapKind, Workload};

/// What a host is built from: the host and its processes (checked by the run's config), the seed of its
/// random streams, and where to write its block trace.
#[derive(Clone, Copy)]
pub struct HostSetup<'a> {
    pub seed: u64,
    pub host: &'a HostConfig,
    pub processes: &'a [ProcessConfig],
    pub block_trace: Option<&'a BlockTraceOut>,
}

impl Host {
    /// Build the host for `cfg` on the device `dev` running `workloads` (one per process, in order).
    pub fn build(
        cfg: &HostSetup,
        dev: Box<dyn Device>,
        workloads: &[Workload],
        verify: bool,
    ) -> Result<Host> {
        Self::build_polled(cfg, dev, workloads, verify, &mut |_, _| Ok(()))
    }

    /// [`Host::build`], calling `poll(done, total)` while the RAM's frame table is built (the one
    /// part whose time grows with the config: up to 1 TiB of RAM); an error from it ends the build.
    pub fn build_polled(
        cfg: &HostSetup,
        dev: Box<dyn Device>,
        workloads: &[Workload],
        verify: bool,
        poll: &mut dyn FnMut(u64, u64) -> Result<()>,
    ) -> Result<Host> {
        let h = cfg.host;
        let capacity = dev.capacity_bytes();
        let dev_zones = dev.zone_model();
        let (swap_off, file_off) = partitions(h, capacity, dev_zones.is_some(), workloads)?;
        // RAM and cgroups.
        let frames = h.ram_mib * 256;
        if frames > MAX_FRAMES {
            return Err(Error::config("host.ram_mib", "at most 1 TiB of RAM"));
        }
        let mut memcgs = vec![Memcg::new("root", u64::MAX, h.swappiness)];
        for c in &h.cgroups {
            let mut m = Memcg::new(
                &c.name,
                c.limit_mib.map_or(u64::MAX, |l| l * 256),
                c.swappiness.unwrap_or(h.swappiness),
            );
            if let Some(p) = c.limit_pages {
                m.limit = p;
            }
            m.throttle.read_bps = c.swap_read_mib_per_s.map(|v| v * 1048576.0);
            m.throttle.write_bps = c.swap_write_mib_per_s.map(|v| v * 1048576.0);
            memcgs.push(m);
        }
        let mut vm = Vm::new_polled(frames as u32, h.watermarks(), memcgs, poll)?;
        let period_ns = h.reclaim.stats_flush_ms * 1_000_000;
        let first_ns = h
            .reclaim
            .stats_flush_first_ms
            .map_or(period_ns, |ms| ms * 1_000_000);
        vm.set_stats_flush_from(Nanos(period_ns), Nanos(first_ns));
        let (swap, mut store) = swap_area(cfg, swap_off, dev_zones, &vm, frames, verify)?;
        let ra: Box<dyn Readahead> = match h.readahead.policy {
            ReadaheadPolicyKind::Vma => Box::new(VmaReadahead::new(h.readahead.page_cluster)),
            ReadaheadPolicyKind::Cluster => {
                Box::new(ClusterReadahead::new(h.readahead.page_cluster))
            }
            ReadaheadPolicyKind::Off => Box::new(NoReadahead),
        };
        let policy: Box<dyn ReclaimPolicy<Host>> = match h.reclaim.policy {
            ReclaimPolicyKind::Linux => Box::new(LinuxReclaim::new()),
            ReclaimPolicyKind::Fifo => Box::new(FifoReclaim::default()),
            ReclaimPolicyKind::Clock => Box::new(ClockReclaim::default()),
        };
        // Page cache: every workload's files, in process order.
        let files: Vec<u32> = workloads
            .iter()
            .flat_map(|w| w.files.iter().copied())
            .collect();
        let pc = PageCache::new(
            file_off,
            &files,
            h.pagecache.read_ahead_kb / 4,
            Nanos(h.pagecache.dirty_expire_ms * 1_000_000),
            Nanos(h.pagecache.dirty_writeback_ms * 1_000_000),
            frames * h.pagecache.dirty_background_ratio as u64 / 100,
        );
        add_processes(cfg, &mut vm, workloads, frames, swap.usable)?;
        let mut io = BlockLayer::new(dev, h.swap.max_request_kib / 4, cfg.block_trace)?;
        io.set_queue_depth(h.block.queue_depth);
        store.backend.swapon(&mut io, swap.nslots)?;
        let worker_packs = store.backend.may_retime();
        let p = Params {
            ns_per_ref: Nanos(h.costs.ns_per_reference),
            minor_ns: Nanos(h.costs.minor_fault_ns),
            major_ns: Nanos(h.costs.major_fault_ns),
            scan_ns: Nanos(h.costs.reclaim_scan_ns),
            write_ns: Nanos(h.costs.reclaim_write_ns),
            scm: h.reclaim.swap_cluster_max as u64,
            cgroup_v1: h.reclaim.cgroup_v1,
            retries: h.reclaim.max_reclaim_retries,
            workingset: h.reclaim.workingset,
            swappiness: h.swappiness,
            swapin_write: h.fault.swapin_write,
        };
        Ok(Host {
            vm,
            swap,
            store,
            pc,
            io,
            ra,
            policy: Some(policy),
            p,
            stats: HostStats::default(),
            completions: BinaryHeap::new(),
            kswapd_backoff_until: Nanos::ZERO,
            swap_cursor: 0,
            ra_buf: Vec::new(),
            io_buf: Vec::new(),
            frame_buf: Vec::new(),
            done_buf: Vec::new(),
            swap_pages: Vec::new(),
            plug: Default::default(),
            kswapd_plug: Default::default(),
            rotate_batch: Vec::new(),
            retimed: Vec::new(),
            worker_packs,
            cswap: Default::default(),
            verify,
        })
    }
}

/// The swap partition and the file partition (the workloads' files) on a device of `capacity` bytes:
/// their offsets, checked to fit and not to overlap (a zoned device takes no file partition).
fn partitions(
    h: &HostConfig,
    capacity: u64,
    zoned: bool,
    workloads: &[Workload],
) -> Result<(u64, u64)> {
    let swap_off = mib("host.swap.offset_mib", h.swap.offset_mib)?;
    let swap_len = mib("host.swap.size_mib", h.swap.size_mib)?;
    if swap_off.checked_add(swap_len).is_none_or(|e| e > capacity) {
        return Err(Error::config(
            "host.swap",
            format!(
                "swap partition [{} MiB, +{} MiB) lies outside the device ({} MiB logical)",
                h.swap.offset_mib,
                h.swap.size_mib,
                capacity >> 20
            ),
        ));
    }
    let file_pages: u64 = workloads
        .iter()
        .flat_map(|w| w.files.iter())
        .map(|&p| p as u64)
        .sum();
    let file_off = match h.pagecache.offset_mib {
        Some(o) => mib("host.pagecache.offset_mib", o)?,
        None => swap_off + swap_len,
    };
    let file_len = file_pages * 4096;
    if file_pages > 0 && zoned {
        return Err(Error::config(
            "processes",
            format!(
                "the workloads map {} MiB of files: the page cache writes its file partition in place,                      which a zoned device refuses (writes only at a zone's write pointer); run file-backed                      workloads on a block device",
                file_len_mib(file_pages)
            ),
        ));
    }
    if file_pages > 0 {
        if file_off.checked_add(file_len).is_none_or(|e| e > capacity) {
            return Err(Error::config(
                "host.pagecache.offset_mib",
                format!(
                    "the file partition ({} MiB of mapped files at {} MiB) lies outside the device ({} MiB)",
                    file_len.div_ceil(1 << 20),
                    file_off >> 20,
                    capacity >> 20
                ),
            ));
        }
        if file_off < swap_off + swap_len && swap_off < file_off + file_len {
            return Err(Error::config(
                "host.pagecache.offset_mib",
                "the file partition overlaps the swap partition",
            ));
        }
    }
    Ok((swap_off, file_off))
}

/// The swap area (slot map and allocator, discard policy) and its store: the backend `host.swap.backend`
/// names (on the swap partition at `swap_off`), zswap in front of it.
fn swap_area(
    cfg: &HostSetup,
    swap_off: u64,
    dev_zones: Option<ZoneModel>,
    vm: &Vm,
    frames: u64,
    verify: bool,
) -> Result<(SwapArea, SwapStore)> {
    let h = cfg.host;
    let nslots = h.swap.size_mib * 256;
    if nslots > MAX_SLOTS {
        return Err(Error::config("host.swap.size_mib", "at most 4 TiB of swap"));
    }
    let discard: Box<dyn DiscardPolicy> = match h.swap.discard.mode {
        DiscardMode::Off => Box::new(NoDiscard),
        DiscardMode::Cluster => Box::new(ClusterDiscard),
        DiscardMode::Fine if h.swap.discard.fine_skips_emptied_clusters => Box::new(
            FineDiscard::new(h.swap.discard.slots).skip_emptied_clusters(h.swap.cluster_slots),
        ),
        DiscardMode::Fine => Box::new(FineDiscard::new(h.swap.discard.slots)),
        DiscardMode::Itrim => Box::new(IdleTrim::new(&h.swap.discard.idle)),
        DiscardMode::Strim => Box::new(SwapInTrim::new(
            (nslots as u32).max(1).div_ceil(h.swap.cluster_slots) * h.swap.cluster_slots,
            h.swap.discard.strim_slots,
            &h.swap.discard.idle,
        )),
    };
    let whole = discard.whole_clusters();
    if whole && h.swap.allocator == SwapAllocatorKind::NextFit {
        return Err(Error::config(
            "host.swap.discard.mode",
            "whole-cluster discard needs the cluster allocator",
        ));
    }
    let (cs, cpus, solid, kind) = (
        h.swap.cluster_slots,
        h.cpus as usize,
        h.swap.solid_state,
        h.swap.allocator,
    );
    let (v5, seed) = (h.swap.cluster_v5.clone(), cfg.seed);
    let make = move |map: &[u8]| -> Box<dyn SlotAllocator> {
        match kind {
            SwapAllocatorKind::Cluster => {
                Box::new(ClusterAllocator::new(map, cs, cpus, solid, whole))
            }
            SwapAllocatorKind::NextFit => Box::new(NextFitAllocator::new(map)),
            SwapAllocatorKind::ClusterV5 => Box::new(
                ClusterV5Allocator::new(map, cs, cpus, whole).with_scan_base(ScanBase {
                    global: v5.global_scan_base,
                    redraw: v5
                        .trunk_redraw
                        .then(|| (Rng::derive(seed, SWAP_TRUNK_STREAM), TRUNK_SLOTS)),
                }),
            ),
        }
    };
    let geometry = SwapGeometry {
        nslots: nslots as u32,
        base: swap_off,
        cluster_slots: cs,
        full_ratio: h.swap.full_ratio,
        cpus,
        slot_cache: h.swap.slot_cache,
    };
    if h.swap.register_range && !matches!(h.swap.backend, SwapBackendConfig::Block) {
        return Err(Error::config(
            "host.swap.register_range",
            "registers the swap partition with the block device below \
             (register_swap_range); needs host.swap.backend.kind = \"block\"",
        ));
    }
    let simple = |backend: Box<dyn SwapBackend>| (SwapArea::new(geometry, &make, discard), backend);
    let (mut swap, backend) = match &h.swap.backend {
        SwapBackendConfig::Block => simple(Box::new(
            BlockSwap::new(swap_off).registering(h.swap.register_range),
        )),
        SwapBackendConfig::Loop(lo) => simple(Box::new(lo.build(swap_off, cfg.seed)?)),
        SwapBackendConfig::Zram(z) => simple(Box::new(crate::backend::Zram::new(
            z,
            &h.compression,
            nslots as u32,
            swap_off,
        )?)),
        SwapBackendConfig::Znswap(z) => {
            let names = vm.memcgs.iter().map(|m| m.name.clone()).collect();
            crate::backend::znswap::swap_area(
                z,
                (h.swap.size_mib, h.swap.cluster_slots, h.cpus),
                dev_zones,
                names,
            )?
        }
    };
    let zswap = zswap(h, frames, swap.map.len(), verify, cfg.seed)?;
    swap.swapins.cdh = h.swap.clean_data_handler;
    swap.zero_map = h.swap.zero_map;
    Ok((swap, SwapStore { backend, zswap }))
}

/// zswap for host `h` with `ram_pages` of RAM and `slots` swap slots; `None` when disabled.
fn zswap(
    h: &HostConfig,
    ram_pages: u64,
    slots: usize,
    verify: bool,
    seed: u64,
) -> Result<Option<Box<crate::zswap::Zswap>>> {
    if !h.zswap.enabled {
        return Ok(None);
    }
    if !h.reclaim.cgroup_v1 && (h.zswap.shrinker_enabled || !h.cgroups.is_empty()) {
        return Err(Error::config(
            "host.zswap",
            "zswap under cgroup v2 (host.reclaim.cgroup_v1 = false) is not modelled: there the pool is \
             charged to the cgroup (obj_cgroup_charge_zswap) and the shrinker writes back per cgroup; \
             under cgroup v1 neither happens",
        ));
    }
    let z = crate::zswap::Zswap::new(&h.zswap, &h.compression, ram_pages, slots, verify)?;
    let (admission, replacement) = crate::zswap::policy::from_config(&h.zswap, seed)?;
    Ok(Some(Box::new(z.with_policies(admission, replacement))))
}

/// The processes' address spaces (their mappings; files numbered in process order), each charged to its
/// cgroup; the anonymous working sets checked against memory + swap (`swap_usable` slots).
fn add_processes(
    cfg: &HostSetup,
    vm: &mut Vm,
    workloads: &[Workload],
    frames: u64,
    swap_usable: u64,
) -> Result<()> {
    let h = cfg.host;
    let mut file_base = 0u32;
    let mut need = vec![0u64; vm.memcgs.len()];
    for (i, (w, pcfg)) in workloads.iter().zip(cfg.processes).enumerate() {
        let m = match &pcfg.cgroup {
            Some(name) => {
                1 + h
                    .cgroups
                    .iter()
                    .position(|c| &c.name == name)
                    .expect("validated") as u16
            }
            None => 0,
        };
        let vmas = w
            .mappings
            .iter()
            .map(|mp| Vma {
                start: mp.start,
                pages: mp.pages,
                kind: match mp.kind {
                    MapKind::Anon => VmaKind::Anon,
                    MapKind::File { file, shared, exec } => VmaKind::File {
                        file: file_base + file as u32,
                        offset: 0,
                        shared,
                        exec,
                    },
                },
                ra: VmaRa::default(),
            })
            .collect();
        file_base += w.files.len() as u32;
        if (vm.ptes.len() as u64 + w.pages as u64) >= (1u64 << 31) {
            return Err(Error::config(
                "processes",
                "address spaces exceed 8 TiB in total",
            ));
        }
        let name = pcfg.name.clone().unwrap_or_else(|| format!("proc{i}"));
        vm.add_process(&name, m, w.pages, vmas);
        if w.touches_all {
            need[m as usize] += w
                .mappings
                .iter()
                .filter(|mp| mp.kind == MapKind::Anon)
                .map(|mp| mp.pages as u64)
                .sum::<u64>();
        }
    }
    for (m, &n) in need.iter().enumerate() {
        let limit = vm.memcgs[m].limit.min(frames);
        if n > limit.saturating_add(swap_usable) {
            return Err(Error::config(
                if m == 0 { "processes".to_string() } else { format!("host.cgroups[{}]", m - 1) },
                format!(
                    "working set of cgroup `{}` ({} MiB of anonymous memory) is larger than its memory ({} MiB) + swap ({} MiB)",
                    vm.memcgs[m].name,
                    n / 256,
                    limit / 256,
                    swap_usable / 256
                ),
            ));
        }
    }
    let total: u64 = need.iter().sum();
    if total > frames + swap_usable {
        return Err(Error::config(
            "host.ram_mib",
            format!(
                "working set ({} MiB of anonymous memory) is larger than RAM ({} MiB) + swap ({} MiB)",
                total / 256,
                frames / 256,
                swap_usable / 256
            ),
        ));
    }
    Ok(())
}

fn file_len_mib(pages: u64) -> u64 {
    (pages * 4096).div_ceil(1 << 20)
}
