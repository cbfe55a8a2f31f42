//! Conformance suites of the host's policies (as the device crate's device conformance tests): the same
//! contract tests run against every swap backend (block, loop, zram, znswap: the contract of
//! `nandstack_host::backend::SwapBackend`) and every reclaim policy (linux, fifo, clock: the contract of
//! `nandstack_host::reclaim::ReclaimPolicy`). A new backend or policy is added to `BACKENDS` /
//! `POLICIES` and meets every test here.

use serde_json::{json, Value};

use crate::cswap::tiny_corpus;
use crate::{memtouch, one, run_report, set};

const BACKENDS: &[&str] = &["block", "loop", "zram", "znswap"];
/// Backends whose data stays in RAM (zram's pool, the loop device's tmpfs file): the SSD sees none.
const IN_RAM: &[&str] = &["loop", "zram"];
const POLICIES: &[&str] = &["linux", "fifo", "clock"];

/// 1,500 pages touched at random (half written) by a process limited to 500 resident pages, swapping
/// to `backend` (ZNSwap on a small zoned device with 2 MiB of swap spread over 48 zones; the others on
/// the block SSD of `base()`); page contents from a tiny corpus (zram keeps them).
fn backend_config(backend: &str, dir: &std::path::Path) -> Value {
    let mut w = memtouch(1500, 15_000, "uniform", 50, 5);
    w["content"] = json!("mix:20:tiny");
    w["corpus_dir"] = json!(dir.display().to_string());
    let mut c = one(500, w);
    set(
        &mut c,
        &["host", "swap", "backend"],
        json!({"kind": backend}),
    );
    if backend == "znswap" {
        set(&mut c, &["host", "swap", "size_mib"], json!(8));
        c["device"] = json!({"kind": "zoned", "zoned": {
            "geometry": {"channels": 1, "chips_per_channel": 1, "dies_per_chip": 1, "planes_per_die": 2,
                         "blocks_per_plane": 96, "pages_per_block": 16, "page_size_bytes": 4096,
                         "cell_mode": "slc"},
            "blocks_per_zone": 2, "max_open_zones": 4, "max_active_zones": 4}});
    }
    c
}

/// The report without its wall-clock keys (`wall_*`, at any depth): those vary run to run.
fn figures(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(k, _)| !k.starts_with("wall_"))
                .map(|(k, v)| (k, figures(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(figures).collect()),
        v => v,
    }
}

fn u(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("{v} is not a whole number"))
}

/// The backend's own pages of device I/O beside the swap layer's (ZNGC's reads and writes).
fn own_pages(r: &Value) -> u64 {
    let gc = &r["swap"]["backend"]["gc"];
    if gc.is_null() {
        0
    } else {
        u(&gc["pages_read"]) + u(&gc["pages_written"])
    }
}

/// `check(backend, report)` on the verified report of every backend in turn (the tiny corpus).
fn for_each_backend_report(mut check: impl FnMut(&str, &Value)) {
    let dir = tiny_corpus();
    for &b in BACKENDS {
        check(b, &run_report(&backend_config(b, dir.path()), true));
    }
}

/// Reads return the data of the last write (the device's versions and ZNSwap's reverse map checked on
/// every read, the backend's bookkeeping against the slot map every 20,000 references: `--verify`);
/// the run swaps both ways; a backend in RAM (zram, loop over tmpfs) issues no device I/O, any other
/// exactly the swap layer's pages plus its own work's ("no I/O is issued that the counters do not
/// show").
#[test]
fn every_backend_returns_what_was_written_and_counts_every_io() {
    for_each_backend_report(|b, r| {
        let s = &r["swap"];
        let (out, inn) = (u(&s["pswpout"]), u(&s["pswpin"]));
        assert!(out > 500 && inn > 500, "{b}: pswpout {out}, pswpin {inn}");
        let dev = &r["device"]["stats"];
        let device_pages = (u(&dev["host_read_bytes"]) + u(&dev["host_write_bytes"])) / 4096;
        if IN_RAM.contains(&b) {
            assert_eq!(device_pages, 0, "{b}: a RAM backend reached the device");
        } else {
            assert_eq!(
                device_pages,
                out + inn + own_pages(r),
                "{b}: {}",
                s["backend"]
            );
        }
    });
}

/// Same config and seed: the same report, figure for figure (wall-clock keys aside).
#[test]
fn every_backend_is_deterministic() {
    let dir = tiny_corpus();
    for &b in BACKENDS {
        let c = backend_config(b, dir.path());
        let a = figures(run_report(&c, false));
        let again = figures(run_report(&c, false));
        assert_eq!(a, again, "{b}: two runs of one seed differ");
    }
}

/// The swap layer owns the slots: at the end no more are in use than pages are out, the backend's
/// section of the report names it, and each slot freed was one the swap layer had allocated.
#[test]
fn every_backend_leaves_the_slots_to_the_swap_layer() {
    for_each_backend_report(|b, r| {
        let s = &r["swap"];
        assert!(s["backend"].is_object(), "{b}: no backend section");
        assert!(
            u(&s["used_pages_end"]) <= 1500,
            "{b}: {} slots in use for 1,500 pages",
            s["used_pages_end"]
        );
    });
}

/// A process of 1,500 pages under a 500-page cgroup limit, reads and writes mixed, hot and cold.
fn policy_config(policy: &str) -> Value {
    let mut c = one(500, memtouch(1500, 15_000, "hot", 40, 3));
    set(&mut c, &["host", "reclaim", "policy"], json!(policy));
    c
}

/// Reclaim frees pages only through the host's mechanisms, keeping every invariant (verified every
/// 20,000 references and at the end: each isolated frame back on a list or freed), keeps the cgroup
/// within its limit, terminates, and a policy without active lists never has an active page.
#[test]
fn every_reclaim_policy_keeps_the_limit_and_the_invariants() {
    for &p in POLICIES {
        let r = run_report(&policy_config(p), true);
        let cg = &r["cgroups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "t")
            .unwrap_or_else(|| panic!("{p}: no cgroup t in {}", r["cgroups"]))
            .clone();
        assert!(u(&cg["usage_pages_end"]) <= 500, "{p}: {cg}");
        assert!(
            u(&r["swap"]["pswpout"]) > 500,
            "{p}: reclaim swapped little"
        );
        let l = &cg["lru_pages_end"];
        if p != "linux" {
            assert_eq!(u(&l["active_anon"]) + u(&l["active_file"]), 0, "{p}: {l}");
        }
    }
}

/// Same config and seed: the same report; the policies differ from one another.
#[test]
fn every_reclaim_policy_is_deterministic_and_its_own() {
    let mut seen: Vec<Value> = Vec::new();
    for &p in POLICIES {
        let c = policy_config(p);
        let a = figures(run_report(&c, false));
        let again = figures(run_report(&c, false));
        assert_eq!(a, again, "{p}: two runs of one seed differ");
        assert!(
            !seen.contains(&a["swap"]),
            "{p}: the same swap traffic as another policy"
        );
        seen.push(a["swap"].clone());
    }
}
