//! The `host` section of a host run's summary (keys documented in docs/model-host.md): the swap volumes
//! first, as /proc/vmstat names them (4 KiB pages), then the host's figures. The device has its own
//! section and the time series is the summary's. Everything except keys starting with `wall_` is a
//! function of the config and the seed.

use nandstack_core::Histogram;
use serde_json::{json, Map, Value};

use nandstack_host::block::{IoCounters, HIST_PAGES};
use nandstack_host::host::{Host, FAULT_KINDS};
use nandstack_host::vm::page::LRU_NAMES;

use super::sim::Sim;

fn pct(h: &Histogram) -> Value {
    serde_json::to_value(h.percentiles(1e-3)).expect("percentiles serialise")
}

/// Request sizes as {"<pages>": count} for sizes that occurred (the last bucket is "≥1024").
fn sizes(hist: &[u64]) -> Value {
    let mut m = Map::new();
    for (p, &n) in hist.iter().enumerate() {
        if n > 0 {
            let k = if p == HIST_PAGES {
                format!("{HIST_PAGES}+")
            } else {
                format!("{p:04}")
            };
            m.insert(k, json!(n));
        }
    }
    Value::Object(m)
}

fn io_kind(c: &IoCounters, region: usize, kind: usize) -> (u64, u64, f64) {
    let (r, p) = (c.requests[region][kind], c.pages[region][kind]);
    (r, p, if r == 0 { 0.0 } else { p as f64 / r as f64 })
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// The `swap` section.
fn swap_section(h: &Host) -> Value {
    let s = &h.stats;
    let c = &h.io.counters;
    let (srr, srp, srm) = io_kind(c, 0, 0);
    let (swr, swp, swm) = io_kind(c, 0, 1);
    let (sdr, sdp, _) = io_kind(c, 0, 2);
    let mut alloc = Map::new();
    for (k, v) in h.swap.allocator_stats() {
        alloc.insert(k.into(), json!(v));
    }
    json!({
        "slots": h.swap.usable,
        "pswpin": s.pswpin,
        "pswpout": s.pswpout,
        "swpin_zero": h.swap.stats.swpin_zero,
        "swpout_zero": h.swap.stats.swpout_zero,
        "sync_swapins": h.cswap.sync_swapins,
        "failed_writes": h.cswap.failed_writes,
        "swap_cache_hits": s.faults[1],
        "readahead_pages": s.readahead_pages,
        "readahead_hits": s.readahead_hits,
        "slots_freed_on_fault": s.swap_slot_freed_on_fault,
        "slots_kept_batched": s.swap_slot_kept_batched,
        "writebacks_moved": s.writebacks_moved,
        "swapcache_dropped_when_full": s.swapcache_dropped_full,
        "swapcache_reclaimed_when_full": s.swapcache_reclaimed_full,
        "used_pages_end": h.swap.used,
        "used_pages_max": h.swap.stats.used_max,
        "highest_slot": h.swap.stats.max_slot,
        "allocations": h.swap.stats.allocations,
        "allocation_failures": h.swap.stats.alloc_failures,
        "slot_cache_refills": h.swap.stats.slot_cache_refills,
        "slot_cache_flushes": h.swap.stats.slot_cache_flushes,
        "allocator": Value::Object(alloc),
        "backend": h.store.backend.report(),
        "swap_ins": h.swap.swapins.report(),
        "discard": h.swap.discard_section(),
        "read_requests": srr,
        "read_pages": srp,
        "read_request_pages_mean": srm,
        "write_requests": swr,
        "write_pages": swp,
        "write_request_pages_mean": swm,
        "discard_requests": sdr,
        "discard_pages": sdp,
        "read_request_sizes": sizes(&c.sizes[0]),
        "write_request_sizes": sizes(&c.sizes[1]),
        "discard_request_sizes": sizes(&c.sizes[2]),
        "read_requests_sequential": c.sequential[0][0],
        "write_requests_sequential": c.sequential[0][1],
        "plug": plug_report(h),
    })
}

/// Block-plug flushes of the tasks and of kswapd, by cause, and the requests they issued.
fn plug_report(h: &Host) -> Value {
    let names = ["finish", "count", "size", "sleep"];
    let (mut f, mut r) = (Map::new(), Map::new());
    for (i, n) in names.iter().enumerate() {
        f.insert(
            n.to_string(),
            json!(h.plug.flushes[i] + h.kswapd_plug.flushes[i]),
        );
        r.insert(
            n.to_string(),
            json!(h.plug.flushed_requests[i] + h.kswapd_plug.flushed_requests[i]),
        );
    }
    json!({"flushes": f, "requests": r})
}

/// The latency of faults by kind, and of all major and all minor faults.
fn fault_latency(h: &Host) -> Value {
    let s = &h.stats;
    let mut lat = Map::new();
    for (i, k) in FAULT_KINDS.iter().enumerate() {
        lat.insert(k.to_string(), pct(&s.fault_latency[i]));
    }
    let mut major_h = s.fault_latency[0].clone();
    major_h.merge(&s.fault_latency[3]);
    lat.insert("major".into(), pct(&major_h));
    let mut minor_h = s.fault_latency[1].clone();
    minor_h.merge(&s.fault_latency[2]);
    minor_h.merge(&s.fault_latency[4]);
    lat.insert("minor".into(), pct(&minor_h));
    Value::Object(lat)
}

/// One entry per cgroup (the root first): its limit, usage, swap traffic, faults, reclaim counters.
fn cgroups_section(h: &Host, secs: f64) -> Vec<Value> {
    h.vm.memcgs
        .iter()
        .map(|m| {
            let st = &m.stats;
            json!({
                "name": m.name,
                "limit_pages": if m.limit == u64::MAX { Value::Null } else { json!(m.limit) },
                "usage_pages_end": m.usage,
                "max_usage_pages": st.max_usage_pages,
                "pswpin": st.pswpin,
                "pswpout": st.pswpout,
                "swap_read_mib_per_s": st.swap_read_bytes as f64 / 1048576.0 / secs.max(1e-12),
                "swap_write_mib_per_s": st.swap_write_bytes as f64 / 1048576.0 / secs.max(1e-12),
                "throttle_delay_ms": m.throttle.delayed_ns.0 as f64 / 1e6,
                "major_faults": st.major_faults,
                "minor_faults": st.minor_faults,
                "swap_cache_hits": st.swap_cache_hits,
                "reclaim_runs": st.reclaim_runs,
                "pgscan": st.pgscan,
                "pgsteal": st.pgsteal,
                "pgactivate": st.pgactivate,
                "pgdeactivate": st.pgdeactivate,
                "workingset_refault_anon": st.workingset_refault_anon,
                "workingset_refault_file": st.workingset_refault_file,
                "workingset_activate_anon": st.workingset_activate_anon,
                "workingset_activate_file": st.workingset_activate_file,
                "workingset_restore_anon": st.workingset_restore_anon,
                "workingset_restore_file": st.workingset_restore_file,
                // memory.stat's list sizes at the end (the live values, as reading memory.stat
                // flushes), pages: inactive anon, active anon, inactive file, active file.
                "lru_pages_end": LRU_NAMES
                    .iter()
                    .enumerate()
                    .map(|(l, n)| (n.to_string(), json!(m.lru_len(l as u8))))
                    .collect::<Map<String, Value>>(),
            })
        })
        .collect()
}

/// One entry per process: its workload, references, end time and (key-value workloads) requests.
fn processes_section(sim: &Sim) -> Vec<Value> {
    sim
        .procs
        .iter()
        .map(|p| {
            let span = p.last_ns.saturating_sub(p.first_ns.min(p.last_ns)) as f64 / 1e9;
            json!({
                "name": p.name,
                "cgroup": p.cgroup,
                "workload": p.describe,
                "references": p.references,
                "end_s": p.end_ns as f64 / 1e9,
                "requests": p.requests,
                "throughput_requests_per_s": if p.kv && span > 0.0 { json!(p.requests as f64 / span) } else { Value::Null },
                "request_latency_us": if p.kv { pct(&p.latency) } else { Value::Null },
            })
        })
        .collect()
}

/// Reclaim: scans, steals, LRU moves, waits, and how deep and productive the invocations were.
fn reclaim_section(h: &Host) -> Value {
    let s = &h.stats;
    json!({
    "memcg_reclaims": s.memcg_reclaims,
    "direct_reclaims": s.direct_reclaims,
    "kswapd_runs": s.kswapd_runs,
    "pgscan": s.pgscan,
    "pgsteal": s.pgsteal,
    "pgactivate": s.pgactivate,
    "pgdeactivate": s.pgdeactivate,
    "pgrotated": s.pgrotated,
    "writeback_waits": s.writeback_waits,
    "writeback_wait_ms": s.writeback_wait_ns.0 as f64 / 1e6,
    "alloc_stall_ms": s.alloc_stall_ns.0 as f64 / 1e6,
    "page_table_pages": h.vm.kernel_pages,
    // Limit/direct reclaim invocations (the kernel's `mm_vmscan_memcg_reclaim_begin` …
    // `_end`): how deep they went and what they wrote (tools/capture/analyze-trace.py prints the
    // kernel's).
    "invocations_by_lowest_priority": (0..13).rev()
        .map(|p| (p.to_string(), json!(s.reclaim_lowest_priority[p])))
        .collect::<serde_json::Map<_, _>>(),
    "shrink_inactive_by_priority": (0..13).rev()
        .filter(|&p| s.shrink_inactive_by_priority[p].calls > 0)
        .map(|p| (p.to_string(), json!(s.shrink_inactive_by_priority[p])))
        .collect::<serde_json::Map<_, _>>(),
    "pages_written_per_invocation": {
        "mean": s.reclaim_written.mean(),
        "p90": s.reclaim_written.quantile(0.9),
        "max": s.reclaim_written.max(),
        "invocations_writing_nothing": s.reclaim_writing_nothing,
    },
    })
}

/// The `host` section of the summary.
pub fn report(sim: &Sim) -> Value {
    let h = &sim.host;
    let s = &h.stats;
    let secs = sim.now.0 as f64 / 1e9;
    let c = &h.io.counters;
    let (frr, frp, _) = io_kind(c, 1, 0);
    let (fwr, fwp, _) = io_kind(c, 1, 1);
    let major = s.faults[0] + s.faults[3];
    let minor = s.faults[1] + s.faults[2] + s.faults[4];
    let mut r = json!({
        "pswpin": s.pswpin,
        "pswpout": s.pswpout,
        "policies": {
            "reclaim": h.policy_name(),
            "slot_allocator": h.swap.allocator_name(),
            "discard": h.swap.discard_name(),
            "readahead": h.ra.name(),
            "swap_backend": h.store.backend.name(),
        },
        "ram_pages": h.vm.frames.len(),
        "watermarks_pages": {"min": h.vm.wmark.0, "low": h.vm.wmark.1, "high": h.vm.wmark.2},
        "sim_seconds": secs,
        "stopped_early": sim.stopped_early,
        "threads": sim.threads(),
        "references": s.references,
        "hits": s.hits,
        "hit_ratio": ratio(s.hits, s.references),
        "faults": {
            "major": major,
            "minor": minor,
            "swap_major": s.faults[0],
            "swap_cache": s.faults[1],
            "anon": s.faults[2],
            "file_major": s.faults[3],
            "file_minor": s.faults[4],
            "zero_page_maps": s.zero_page_maps,
            "cow": s.cow_faults,
        },
        "fault_latency_us": fault_latency(h),
        "swap": swap_section(h),
        "zswap": match h.store.zswap.as_ref() {
            Some(z) => z.report(),
            None => json!({"enabled": false}),
        },
        "compressed_pool_pages": h.cswap.pool_frames(),
        "file": {
            "pages": h.pc.pages(),
            "read_requests": frr,
            "read_pages": frp,
            "read_pages_no_data": h.io.read_pages_no_data[1],
            "write_requests": fwr,
            "write_pages": fwp,
            "dirty_pages_end": h.pc.dirty,
            "flusher_runs": h.pc.flusher_runs,
        },
        "reclaim": reclaim_section(h),
        "cgroups": cgroups_section(h, secs),
        "processes": processes_section(sim),
        "wall_references_per_second": ratio(s.references, 1).max(0.0) / sim.wall_seconds.max(1e-9),
    });
    // Only with a queue depth (`host.block.queue_depth`), so a default run's report is unchanged.
    if let Some(depth) = h.io.queue_depth() {
        r["block_queue"] = json!({
            "depth": depth,
            "waited_requests": h.io.queue_waits,
            "wait_ms": h.io.queue_wait_ns as f64 / 1e6,
        });
    }
    r
}
