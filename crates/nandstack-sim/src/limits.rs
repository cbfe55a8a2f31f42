//! Limits before allocation: the memory a config needs, estimated from the config alone before anything
//! is built, checked against a limit (`run.memory_limit_bytes`, else the memory the machine has
//! available: `MemAvailable` in /proc/meminfo, or less under an address-space limit such as `ulimit -v`).
//! A config that does not fit is a config error naming the keys that size the biggest tables and the
//! estimate; one that fits gets its address space reserved once (and released) before the build, so an
//! address-space limit the estimate cannot see is an `Error::Memory`, not an abort.
//!
//! The estimate counts the tables whose size follows the config — mapping tables, block metadata,
//! version tables (`--verify`), write buffer and mapping cache, the zoned layer's tables, host frames,
//! page tables, swap slot maps and page-cache index, the trace reorder window, an in-memory time series
//! — at their per-entry sizes in the engine's structures. `tests/limits.rs` checks it against the bytes
//! the engine actually allocates (a counting allocator) on devices of every kind.
//!
//! Kept per process beyond a run: the big `u32` tables of the last device dropped (mapping tables, cache
//! indexes; `nandstack_core::alloc::keep`). The next device build reuses those of its lengths and frees
//! the rest before allocating (`tests/limits.rs` checks that a run's peak with another device's tables
//! kept stays within its estimate), and [`ensure_fits`] frees them when a run would not fit beside them.

use nandstack_core::units::fmt_bytes;
use nandstack_core::{Error, Result, MAPPING_UNIT_BYTES};
use nandstack_device::hybrid::ManagerKind;
use nandstack_host::compressor::MEMO_ENTRIES;
use nandstack_host::config::{AdmissionKind, SwapBackendConfig, WorkloadConfig};
use nandstack_workload::content::{INDEX_AFTER, WORDS_PER_PAGE};

use crate::config::{DeviceKindName, SimConfig, WorkloadKind};

/// One part of the estimate.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    /// What it is ("block FTL mapping tables", …).
    pub what: &'static str,
    /// The config keys that size it.
    pub keys: &'static str,
    pub bytes: u64,
}

/// The estimated memory of a run, by part.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Estimate {
    pub parts: Vec<Part>,
}

impl Estimate {
    pub fn total_bytes(&self) -> u64 {
        self.parts
            .iter()
            .map(|p| p.bytes)
            .fold(0, u64::saturating_add)
    }
    fn add(&mut self, what: &'static str, keys: &'static str, bytes: f64) {
        if bytes > 0.0 {
            let bytes = if bytes >= u64::MAX as f64 {
                u64::MAX
            } else {
                bytes as u64
            };
            self.parts.push(Part { what, keys, bytes });
        }
    }
}

/// Fixed cost of a run besides its tables (code, buffers, histograms, small structures).
pub const BASE_BYTES: u64 = 16 << 20;

// Bytes per entry of the engine's tables (see each structure; checked by tests/limits.rs).
/// Block FTL: `l2p` (u32) per logical unit.
const FTL_PER_LOGICAL: f64 = 4.0;
/// Block FTL: `p2l` (u32) per physical unit.
const FTL_PER_PHYSICAL: f64 = 4.0;
/// Block FTL: the block table (31 B), erase baseline, free lists and the victim policy's links.
const FTL_PER_BLOCK: f64 = 56.0;
/// Version tables under `--verify`: a u64 per logical and per physical unit.
const VERIFY_PER_UNIT: f64 = 8.0;
/// An LRU map (write buffer, mapping cache): a slot index per key plus 17 B per entry (key, links,
/// dirty bit, free list).
const LRU_PER_KEY: f64 = 4.0;
const LRU_PER_ENTRY: f64 = 17.0;
/// Mapping cache: the epoch of each logical unit's dirtying.
const MAPCACHE_PER_LOGICAL: f64 = 4.0;
/// Hybrid FTL: per block (state, counters, owner, sequence, free list).
const HYBRID_PER_BLOCK: f64 = 38.0;
/// Hybrid write buffer entry: the shared LRU map's key and links (12 B) and its value (region,
/// version: 16 B).
const HYBRID_PER_BUFFERED: f64 = 28.0;
/// Zoned device: the per-unit metadata a zone keeps for the units written to it (a u64 each, in a vector
/// grown by doubling: up to twice that).
const ZONED_PER_UNIT: f64 = 16.0;
/// Host: a page frame (LRU links, owner, key, flags, cgroup, I/O completion and dirtying times: 40 B)
/// and its free-stack entry.
const HOST_PER_FRAME: f64 = 44.0;
/// Host: a swap slot (map byte, swap cache entry, owner) plus its cluster's share.
const HOST_PER_SLOT: f64 = 9.5;
/// memtouch: a page's origin (16 B) and its words written (a list, 24 B, and the pointer to its index,
/// 8 B), in the program and in the page image (twice).
const MEMTOUCH_PER_PAGE: f64 = 96.0;
/// memtouch: a word written after the fill (offset, value: 16 B) in both copies, lists grown by doubling.
const MEMTOUCH_PER_WRITE: f64 = 64.0;
/// memtouch: a page with more than `INDEX_AFTER` written words keeps a word index (2 B per word) in
/// both copies; at most one page in `INDEX_AFTER + 1` writes (and at most every page) has one.
const MEMTOUCH_PER_INDEX: f64 = (2 * 2 * WORDS_PER_PAGE) as f64;
const MEMTOUCH_WRITES_PER_INDEX: f64 = (INDEX_AFTER + 1) as f64;
/// Host: a page-table entry.
const HOST_PER_PTE: f64 = 4.0;
/// A content memo's entry (a 128-bit key and a 32-bit value, 32 B in the table with its control byte,
/// at the table's lowest load after growing, 7/16).
const MEMO_PER_ENTRY: f64 = 76.0;
/// A page-key memo's entry: 4 B, in a table grown to the next power of two above the largest key
/// (up to 8 B a page), old and new tables together while it grows (up to 12 B a page).
const KEYED_MEMO_PER_PAGE: f64 = 12.0;
/// A trace record waiting in the reorder window: 64 bytes, in one of two containers (the in-order run
/// and the heap of earlier records) that each double their capacity as they grow and keep it: each up
/// to twice the window, plus the window again while one moves (old and new storage together) — up to
/// 5 × 64 bytes a record. A trace in time order uses the run alone (3 × 64).
const REORDER_PER_ROW: f64 = 320.0;
/// A time-series value kept in memory.
const SERIES_PER_VALUE: f64 = 8.0;
/// Columns of an in-memory time series, about (common columns + gauges).
const SERIES_COLUMNS: f64 = 24.0;

/// The memory `cfg` needs (`verify`: `--verify`; `series_in_memory`: the time series is kept in the
/// report rather than streamed to a file).
pub fn estimate(cfg: &SimConfig, verify: bool, series_in_memory: bool) -> Result<Estimate> {
    let mut e = Estimate::default();
    e.add("fixed cost", "", BASE_BYTES as f64);
    let v = if verify { VERIFY_PER_UNIT } else { 0.0 };
    let dev = &cfg.device;
    let before_device = e.total_bytes();
    match dev.kind {
        DeviceKindName::Block => {
            let geo = dev.geometry()?;
            let ftl = dev.ftl();
            let logical = ftl.logical_units(&geo) as f64;
            let physical = geo.total_units() as f64;
            let keys = "device.geometry, device.ftl.over_provisioning";
            e.add(
                "block FTL mapping tables",
                keys,
                logical * FTL_PER_LOGICAL + physical * FTL_PER_PHYSICAL,
            );
            e.add(
                "block metadata",
                "device.geometry",
                geo.total_blocks() as f64 * FTL_PER_BLOCK,
            );
            e.add("version tables (--verify)", keys, (logical + physical) * v);
            let c = dev.controller();
            let buffered = (c.write_buffer.bytes / MAPPING_UNIT_BYTES) as f64;
            if buffered > 0.0 {
                e.add(
                    "write buffer",
                    "device.controller.write_buffer.bytes",
                    logical * LRU_PER_KEY + buffered.min(logical) * LRU_PER_ENTRY,
                );
            }
            let cached = ftl.mapping_cache.entries as f64;
            if cached > 0.0 {
                e.add(
                    "mapping cache",
                    "device.ftl.mapping_cache.entries",
                    logical * (LRU_PER_KEY + MAPCACHE_PER_LOGICAL)
                        + cached.min(logical) * LRU_PER_ENTRY,
                );
            }
            if let nandstack_device::ftl::PlacementConfig::Mbf(m) = &ftl.placement {
                e.add(
                    "placement Bloom filters",
                    "device.ftl.placement.bits, device.ftl.placement.filters",
                    (m.bits as f64 / 8.0).ceil() * m.filters as f64,
                );
            }
        }
        DeviceKindName::Hybrid => {
            let p = dev.hybrid().params()?;
            let logical = p.logical_units as f64;
            let physical = p.total_blocks as f64 * p.qlc_units_per_block as f64;
            let keys = "device.hybrid.total_blocks, device.hybrid.qlc_pages_per_block";
            let ust = dev.manager().kind == ManagerKind::Ust;
            let per_logical = FTL_PER_LOGICAL + if ust { 1.0 } else { 0.0 };
            e.add(
                "hybrid FTL mapping tables",
                keys,
                logical * per_logical + physical * FTL_PER_PHYSICAL,
            );
            e.add(
                "block metadata",
                "device.hybrid.total_blocks",
                p.total_blocks as f64 * HYBRID_PER_BLOCK,
            );
            if ust {
                let lbs = (logical / p.qlc_units_per_block as f64).ceil();
                e.add("UST logical blocks", keys, lbs * 40.0);
            }
            let buffered = p.write_buffer_units as f64;
            if buffered > 0.0 {
                e.add(
                    "write buffer",
                    "device.hybrid.write_buffer_bytes",
                    logical * LRU_PER_KEY + buffered.min(logical) * HYBRID_PER_BUFFERED,
                );
            }
            e.add("version tables (--verify)", keys, (logical + physical) * v);
        }
        DeviceKindName::Zoned => {
            let z = dev.zoned();
            let p = z.resolve()?;
            let units = p.geometry.total_units() as f64;
            let keys = "device.zoned.geometry, device.zoned.zones";
            e.add(
                "zone metadata",
                keys,
                units * ZONED_PER_UNIT
                    + p.geometry.total_blocks() as f64 * 4.0
                    + p.zones as f64 * 96.0,
            );
            e.add("version tables (--verify)", keys, units * 2.0 * v);
            if cfg.workload.kind.is_block() {
                let logical =
                    nandstack_device::spec::block_logical_bytes(dev)? / MAPPING_UNIT_BYTES;
                let cap = p.zone_capacity_bytes / MAPPING_UNIT_BYTES;
                e.add(
                    "zoned block layer mapping tables",
                    "device.zoned.block_layer.over_provisioning",
                    logical as f64 * (FTL_PER_LOGICAL + v)
                        + p.zones as f64 * cap as f64 * FTL_PER_PHYSICAL
                        + p.zones as f64 * FTL_PER_BLOCK,
                );
            }
        }
    }
    // The aged device a run keeps for the next one (`aged`, when keeping): one more copy of the block
    // or hybrid device, two for a host program (the copy it takes arrives while the device its host
    // was built on exists); not keeping, a host program may still take a kept device while its own
    // exists.
    let copied = matches!(dev.kind, DeviceKindName::Block | DeviceKindName::Hybrid);
    if !verify && copied && crate::aged::ages(cfg) {
        let host = cfg.workload.kind == WorkloadKind::Host;
        let copies = match (crate::aged::keeping(), host) {
            (true, true) => 2.0,
            (true, false) => 1.0,
            (false, true) if crate::aged::holds() => 1.0,
            _ => 0.0,
        };
        e.add(
            "aged device kept for the next run",
            "device.geometry, precondition",
            (e.total_bytes() - before_device) as f64 * copies,
        );
    }
    if let (WorkloadKind::Host, Some(h)) = (cfg.workload.kind, &cfg.host) {
        let pages = |mib: u64| mib as f64 * 256.0;
        e.add(
            "host page frames",
            "host.ram_mib",
            pages(h.ram_mib) * HOST_PER_FRAME,
        );
        e.add(
            "swap slot maps",
            "host.swap.size_mib",
            pages(h.swap.size_mib) * HOST_PER_SLOT,
        );
        let process_pages: f64 = cfg
            .workload
            .processes
            .iter()
            .map(|p| process_pages(&p.workload))
            .sum();
        e.add(
            "page tables",
            "workload.processes",
            process_pages * (HOST_PER_PTE + v),
        );
        // memtouch keeps the bytes of every page as an origin plus the words written since the fill, in
        // the program and again in the page image the host reads contents from.
        let images: f64 = cfg
            .workload
            .processes
            .iter()
            .map(|p| match &p.workload {
                WorkloadConfig::Memtouch(c) => {
                    let writes = c.ops as f64 * (c.write_pct as f64 / 100.0);
                    let indexed = (writes / MEMTOUCH_WRITES_PER_INDEX).min(c.pages as f64);
                    c.pages as f64 * MEMTOUCH_PER_PAGE
                        + writes * MEMTOUCH_PER_WRITE
                        + indexed * MEMTOUCH_PER_INDEX
                }
                _ => 0.0,
            })
            .sum();
        e.add(
            "memtouch page images",
            "workload.processes (memtouch pages, ops)",
            images,
        );
        // A Silesia file a program's contents come from is held whole (its size read from the zip).
        let corpora: u64 = cfg
            .host_processes()
            .iter()
            .map(|p| match &p.workload {
                WorkloadConfig::Memtouch(c) => nandstack_host::workloads::program_corpus_bytes(c),
                WorkloadConfig::Launch(c) => nandstack_host::workloads::launch::corpus_bytes(c),
                _ => 0,
            })
            .sum();
        e.add(
            "content corpora",
            "workload.processes (content, corpus_dir)",
            corpora as f64,
        );
        // zswap and zram remember each distinct page's compressed length, and SA its estimated
        // ratio, by content (at most one entry per page of the processes, and `MEMO_ENTRIES`).
        let compressing = h.zswap.enabled || matches!(h.swap.backend, SwapBackendConfig::Zram(_));
        let memos = compressing as u32
            + (h.zswap.enabled && h.zswap.ezswap.admission == AdmissionKind::Entropy) as u32;
        e.add(
            "content memos (compressed lengths, SA's ratios)",
            "host.zswap, host.swap.backend",
            memos as f64 * process_pages.min(MEMO_ENTRIES as f64) * MEMO_PER_ENTRY,
        );
        // With contents that key their pages (the launch cycle), zswap also remembers the lengths
        // and SA's ratios by page key (keys below the processes' pages).
        let keyed = cfg
            .host_processes()
            .iter()
            .any(|p| matches!(p.workload, WorkloadConfig::Launch(_)));
        let keyed_memos = h.zswap.enabled as u32
            + (h.zswap.enabled && h.zswap.ezswap.admission == AdmissionKind::Entropy) as u32;
        e.add(
            "content memos by page key (compressed lengths, SA's ratios)",
            "host.zswap, workload.processes (launch)",
            if keyed {
                keyed_memos as f64 * process_pages * KEYED_MEMO_PER_PAGE
            } else {
                0.0
            },
        );
    }
    for w in std::iter::once(&cfg.workload).chain(&cfg.pretrain) {
        if let Some(t) = &w.trace {
            e.add(
                "trace reorder window",
                "workload.trace.reorder_window_rows",
                t.reorder_window_rows as f64 * REORDER_PER_ROW,
            );
        }
    }
    if series_in_memory {
        e.add(
            "time series kept in memory",
            "run.interval_host_bytes, run.interval_written_bytes",
            series_rows(cfg) * SERIES_COLUMNS * SERIES_PER_VALUE,
        );
    }
    Ok(e)
}

/// Pages a host program maps, as far as the config tells (traces and inline strings are small).
fn process_pages(w: &WorkloadConfig) -> f64 {
    match w {
        WorkloadConfig::Memtouch(c) => c.pages as f64,
        WorkloadConfig::VmScalability(c) => c.size_mib as f64 * 256.0,
        WorkloadConfig::Pmbench(c) => c.working_set_mib as f64 * 256.0,
        WorkloadConfig::Ycsb(c) => c.records as f64 * (c.record_bytes as f64 + 16.0) / 4096.0,
        // Slab items of ~0.1–1 KiB, and a byte of class per key while building.
        WorkloadConfig::MemcachedEtc(c) => c.keys as f64 * 1.25,
        WorkloadConfig::Inline(c) => c.pages as f64,
        WorkloadConfig::Launch(c) => {
            let apps = c
                .apps
                .clone()
                .unwrap_or_else(nandstack_host::workloads::launch::table2);
            apps.iter()
                .take(c.app_count as usize)
                .map(|a| (a.anon_mib + a.file_mib) * c.scale * 256.0)
                .sum()
        }
        WorkloadConfig::Mobile(_) | WorkloadConfig::Trace(_) => 0.0,
    }
}

/// Rows of a time series kept in memory: one per 1/20 of the requests by default; with a byte interval,
/// at most one per interval of the synthetic workload's bytes; by simulated time, unknown (not counted).
fn series_rows(cfg: &SimConfig) -> f64 {
    let r = &cfg.run;
    if cfg.workload.kind != WorkloadKind::Synthetic {
        return 21.0;
    }
    let s = &cfg.workload.synthetic;
    let requests = s.requests as f64;
    let bytes = requests * s.request_size_bytes.max(4096) as f64;
    let by = |interval: u64| (interval > 0).then(|| bytes / interval as f64);
    match (by(r.interval_host_bytes), by(r.interval_written_bytes)) {
        (Some(a), Some(b)) => a.max(b),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) if r.interval_sim_seconds > 0.0 => 0.0,
        (None, None) => 21.0,
    }
}

/// Where a memory limit comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct Limit {
    pub bytes: u64,
    pub source: String,
}

/// The limit a run is held to: `run.memory_limit_bytes` when set, else what the machine offers now
/// (`MemAvailable`, and the headroom under an address-space limit), `None` where neither is known.
pub fn limit(cfg: &SimConfig) -> Option<Limit> {
    if let Some(b) = cfg.run.memory_limit_bytes {
        return Some(Limit {
            bytes: b,
            source: "run.memory_limit_bytes".into(),
        });
    }
    let available = mem_available_bytes().map(|b| Limit {
        bytes: b,
        source: "the memory available (MemAvailable in /proc/meminfo)".into(),
    });
    let address = address_space_headroom_bytes().map(|b| Limit {
        bytes: b,
        source: "the address-space limit (ulimit -v) less what the process already maps".into(),
    });
    match (available, address) {
        (Some(a), Some(b)) => Some(if b.bytes < a.bytes { b } else { a }),
        (a, b) => a.or(b),
    }
}

fn mem_available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    kib_field(&text, "MemAvailable:")
}

/// `Max address space` (soft limit) minus the current `VmSize`, when a limit is set.
fn address_space_headroom_bytes() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    let soft = line
        .trim_start_matches("Max address space")
        .split_whitespace()
        .next()?;
    let soft: u64 = soft.parse().ok()?; // "unlimited" → None
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let used = kib_field(&status, "VmSize:").unwrap_or(0);
    Some(soft.saturating_sub(used))
}

fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line[name.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// The first dotted config key of a part's `keys` text ("workload.processes (memtouch pages, ops)" →
/// "workload.processes"): the error's `key` is a key, the text in brackets stays in the message.
fn first_key(keys: &str) -> &str {
    let end = keys
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(keys.len());
    &keys[..end]
}

/// Fail with a config error when the estimate exceeds `limit`, naming the biggest parts and their keys.
pub fn check(e: &Estimate, limit: &Limit) -> Result<()> {
    let total = e.total_bytes();
    if total <= limit.bytes {
        return Ok(());
    }
    let mut parts: Vec<&Part> = e.parts.iter().filter(|p| !p.keys.is_empty()).collect();
    parts.sort_by_key(|p| std::cmp::Reverse(p.bytes));
    let listed: Vec<String> = parts
        .iter()
        .take(4)
        .map(|p| format!("{} {} ({})", p.what, fmt_bytes(p.bytes), p.keys))
        .collect();
    let key = parts
        .first()
        .map_or("run.memory_limit_bytes", |p| first_key(p.keys));
    Err(Error::config(
        key,
        format!(
            "this run needs about {} of memory — {} — but the limit is {}, {}; make the device or \
             workload smaller, or set run.memory_limit_bytes if the estimate is wrong for this machine",
            fmt_bytes(total),
            listed.join(", "),
            fmt_bytes(limit.bytes),
            limit.source
        ),
    ))
}

/// Estimate, check against the limit, and reserve the address space once (an address-space limit the
/// estimate could not see is then an `Error::Memory` before anything is built).
///
/// The tables the last device handed back (`nandstack_core::alloc::keep`, reused by the next build or
/// freed by it) and the aged devices kept for later runs (`crate::aged`) are memory the process holds
/// but would give back: when the check fails while some are kept, they are freed and the check made
/// again, so keeping them never refuses a run.
pub fn ensure_fits(cfg: &SimConfig, verify: bool, series_in_memory: bool) -> Result<Estimate> {
    let e = estimate(cfg, verify, series_in_memory)?;
    let fits = || -> Result<()> {
        if let Some(l) = limit(cfg) {
            check(&e, &l)?;
        }
        nandstack_core::alloc::probe(e.total_bytes(), "tables this config needs")
    };
    match fits() {
        Err(_) if nandstack_core::alloc::kept_bytes() > 0 || crate::aged::holds() => {
            nandstack_core::alloc::release_kept();
            crate::aged::clear();
            fits()?;
        }
        other => other?,
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_fields_parse() {
        let text = "MemTotal:       24000000 kB\nMemAvailable:   1000 kB\n";
        assert_eq!(kib_field(text, "MemAvailable:"), Some(1_024_000));
        assert_eq!(kib_field(text, "Nope:"), None);
    }

    /// Every part's `keys` text starts with a dotted key (so the error's `key` is one), whatever follows.
    #[test]
    fn the_error_key_is_a_dotted_key() {
        for text in [
            "device.geometry, device.ftl.over_provisioning",
            "workload.processes (memtouch pages, ops)",
            "run.interval_host_bytes, run.interval_written_bytes",
            "host.ram_mib",
        ] {
            let k = first_key(text);
            assert!(
                !k.is_empty() && k.contains('.') && text.starts_with(k),
                "{text} -> {k}"
            );
            assert!(k
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.'));
        }
        let mut e = Estimate::default();
        e.add("page tables", "host.ram_mib", 1e6);
        e.add(
            "memtouch page images",
            "workload.processes (memtouch pages, ops)",
            1e9,
        );
        let limit = Limit {
            bytes: 1 << 20,
            source: "test".into(),
        };
        match check(&e, &limit).unwrap_err() {
            Error::Config { key, msg } => {
                assert_eq!(key, "workload.processes");
                assert!(
                    msg.contains("(workload.processes (memtouch pages, ops))"),
                    "{msg}"
                );
            }
            other => panic!("{other}"),
        }
    }

    #[test]
    fn over_the_limit_names_the_keys_and_the_estimate() {
        let cfg = SimConfig::from_toml(
            "[device.geometry]\nchannels = 16\nchips_per_channel = 2\nblocks_per_plane = 32768\n",
        )
        .unwrap();
        let e = estimate(&cfg, false, false).unwrap();
        assert!(e.total_bytes() > 4 << 30, "{e:?}");
        let limit = Limit {
            bytes: 1 << 30,
            source: "run.memory_limit_bytes".into(),
        };
        let msg = check(&e, &limit).unwrap_err().to_string();
        assert!(msg.contains("`device.geometry`"), "{msg}");
        assert!(msg.contains("block FTL mapping tables"), "{msg}");
        assert!(msg.contains("the limit is 1 GiB"), "{msg}");
        assert!(check(
            &e,
            &Limit {
                bytes: u64::MAX,
                source: String::new()
            }
        )
        .is_ok());
    }
}
