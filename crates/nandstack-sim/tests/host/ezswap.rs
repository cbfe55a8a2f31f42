//! ezswap in the host path (issue #17): all-page accommodation serves file reads from the pool and never
//! serves a stale copy (a write drops it; verify mode catches a copy of an older version); no page is
//! lost between the pool, the swap device, the page cache and memory under every combination of the
//! policies (every invariant and read-after-write check of verify mode, and the pool's identities).
//! The apps' contents are zero, sparse and random pages: no corpus needed.

use nandstack_host::host::Ctx;
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::report;
use crate::{base, memtouch, one, run, set};

/// Three small apps (4 MiB heap, 8 MiB of files each) in `ram_mib` of RAM, zswap on z3fold.
fn launch(ram_mib: u64, ez: Value, seed: u64) -> Value {
    let mut c = base();
    c["seed"] = json!(seed);
    set(&mut c, &["host", "ram_mib"], json!(ram_mib));
    let app = |n: &str, f: &str| {
        json!({"name": n, "anon_mib": 4.0, "file_mib": 8.0,
               "anon_content": "zero:20,sparse:50,random:30", "file_content": f})
    };
    c["workload"]["processes"] = json!([{"name": "apps", "workload": {
        "type": "launch", "app_count": 3, "repetitions": 3, "scale": 1.0, "run_ms": 20.0,
        "refs_per_ms": 50, "apps": [app("a", "sparse:60,random:40"), app("b", "sparse:30,random:70"),
                                    app("c", "zero:10,sparse:80,random:10")]}}]);
    set(
        &mut c,
        &["host", "zswap"],
        json!({"enabled": true, "compressor": "lzo", "zpool": "z3fold", "max_pool_percent": 10, "ezswap": ez}),
    );
    c
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

/// The pool's identities: every stored page left by a load, a writeback (drop) or an invalidation, or
/// is still there.
fn identities(r: &Value) {
    let z = &r["zswap"];
    let e = &z["ezswap"];
    let files = u(&e["stored_file_pages"]);
    assert_eq!(
        u(&z["zswpout"]),
        u(&z["zswpin"]) + u(&z["zswpwb"]) + u(&z["invalidated"]) + u(&z["stored_pages"]) - files,
        "anonymous: {z}"
    );
    assert_eq!(
        u(&e["file_stores"]),
        u(&e["file_hits"]) + u(&e["file_dropped"]) + u(&e["file_invalidated"]) + files,
        "file: {e}"
    );
}

#[test]
fn apa_serves_reads_from_the_pool_and_never_a_stale_copy() {
    let c = launch(
        16,
        json!({"apa": true, "admission": "all", "replacement": "lottery"}),
        3,
    );
    let mut sim = run(&c, true);
    let r = report(&sim);
    identities(&r);
    let e = &r["zswap"]["ezswap"];
    assert!(u(&e["file_stores"]) > 100 && u(&e["file_hits"]) > 10, "{e}");
    let h = &mut sim.host;
    let pooled = |h: &nandstack_host::host::Host| -> Vec<u32> {
        let z = h.store.zswap.as_ref().unwrap();
        (0..h.pc.pages() as u32)
            .filter(|&id| z.file_entry(id).is_some())
            .collect()
    };
    let ids = pooled(h);
    assert!(ids.len() >= 3, "{} file pages in the pool", ids.len());
    let mut ctx = Ctx {
        now: sim.now,
        cpu: 0,
        comm: 3,
        kswapd: false,
    };
    let stat = |h: &nandstack_host::host::Host, k: &str| {
        u(&h.store.zswap.as_ref().unwrap().report()["ezswap"][k])
    };
    // A block whose copy is in the pool is written (the page-cache write path dirties it): the copy
    // goes; the read that follows comes from the device (its read-around window may still take the
    // neighbours' copies from the pool).
    let id = ids[0];
    let (inval, dev) = (stat(h, "file_invalidated"), h.stats.file_pages_read);
    h.apa_file_dirtied(id);
    assert!(h.store.zswap.as_ref().unwrap().file_entry(id).is_none());
    assert_eq!(stat(h, "file_invalidated"), inval + 1);
    let vpn = h.cswap.apa.file_vpn[id as usize];
    h.fault(&mut ctx, vpn, false).unwrap();
    assert!(h.stats.file_pages_read > dev);
    h.check_invariants().unwrap();
    // A read of a pooled block is served from the pool, which lets the copy go.
    let id = *pooled(h).first().unwrap();
    let vpn = h.cswap.apa.file_vpn[id as usize];
    let hits = stat(h, "file_hits");
    h.fault(&mut ctx, vpn, false).unwrap();
    assert!(stat(h, "file_hits") > hits);
    assert!(h.store.zswap.as_ref().unwrap().file_entry(id).is_none());
    h.check_invariants().unwrap();
    // A write path that forgot to drop the copy: verify mode refuses to serve the older version.
    let id = *pooled(h).first().unwrap();
    h.cswap.apa.version[id as usize] += 1;
    let vpn = h.cswap.apa.file_vpn[id as usize];
    let err = h.fault(&mut ctx, vpn, false).unwrap_err().to_string();
    assert!(err.contains("would be served at version"), "{err}");
}

#[test]
fn without_apa_file_pages_never_enter_the_pool() {
    let c = launch(
        16,
        json!({"apa": false, "admission": "entropy", "replacement": "page_lru"}),
        5,
    );
    let r = report(&run(&c, true));
    identities(&r);
    let e = &r["zswap"]["ezswap"];
    assert_eq!(u(&e["file_stores"]), 0);
    assert!(u(&e["entropy_estimates"]) > 0);
    assert!(u(&r["zswap"]["zswpout"]) > 0);
}

#[test]
fn a_store_over_a_full_pool_writes_back_one_pool_page_first_under_shrink_sync() {
    // 256 MiB of RAM at 1%: a limit of N = 655 pool pages. 2,000 random pages written once each in
    // order by a 600-page cgroup: every eviction is a store of an incompressible page (one headless
    // z3fold page each), and no page is read back. Linux 4.7's zswap_is_full is "pages > N": stores
    // 1..=N+1 go in; from then on the pool holds N+1 pages, so every later store finds it full and
    // writes back exactly one pool page (the LRU tail page, its one object) before it is stored.
    let mut w = memtouch(2000, 2000, "seq", 100, 1);
    w["content"] = json!("random");
    let mut c = one(600, w);
    set(
        &mut c,
        &["host", "zswap"],
        json!({"enabled": true, "compressor": "lzo", "zpool": "z3fold", "max_pool_percent": 1,
               "full_pool": "shrink_sync", "ezswap": {"replacement": "page_lru"}}),
    );
    let r = report(&run(&c, true));
    let z = &r["zswap"];
    let n = 655;
    assert_eq!(u(&z["max_pool_pages"]), n);
    let stores = u(&z["zswpout"]);
    assert!(stores > n + 500, "{z}");
    assert_eq!(u(&z["stored_incompressible_pages"]), u(&z["stored_pages"]));
    assert_eq!(u(&z["pool_pages_max"]), n + 1);
    assert_eq!(u(&z["stored_pages"]), n + 1);
    assert_eq!(u(&z["pool_limit_hit"]), stores - (n + 1));
    assert_eq!(u(&z["sync_shrink_pages"]), stores - (n + 1));
    assert_eq!(u(&z["zswpwb"]), stores - (n + 1));
    assert_eq!(u(&z["reject_reclaim_fail"]), 0);
    // Every shrink chose one victim page holding one anonymous object.
    assert_eq!(z["evicted_pages_by_mix"], json!({"1/0": stores - (n + 1)}));
    assert_eq!(u(&z["worker_runs"]) + u(&z["worker_queued"]), 0);
    // Nothing refused: the device sees only the written-back pages.
    assert_eq!(u(&r["swap"]["pswpout"]), u(&z["zswpwb"]));
    // The same run under Linux 6.18's reject: stores refused at the limit, the worker drains.
    c["host"]["zswap"]["full_pool"] = json!("reject");
    let r = report(&run(&c, true));
    let z = &r["zswap"];
    assert!(u(&z["pool_pages_max"]) <= n + 1);
    assert_eq!(u(&z["sync_shrink_pages"]), 0);
    assert!(u(&z["worker_runs"]) > 0, "{z}");
    assert!(u(&r["swap"]["pswpout"]) > u(&z["zswpwb"]));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]
    #[test]
    fn no_page_is_lost_under_any_policy_mix(
        seed in 1u64..1000,
        ram in 12u64..24,
        admission in prop::sample::select(vec!["all", "entropy"]),
        replacement in prop::sample::select(vec!["lru", "page_lru", "lottery"]),
        apa in any::<bool>(),
        sample in prop::sample::select(vec!["leading512", "stride4"]),
        full_pool in prop::sample::select(vec!["reject", "shrink_sync"]),
    ) {
        let mut c = launch(ram, json!({"apa": apa, "admission": admission, "replacement": replacement,
                                       "sample": sample}), seed);
        set(&mut c, &["host", "zswap", "full_pool"], json!(full_pool));
        let sim = run(&c, true);
        let r = report(&sim);
        identities(&r);
        // Two timed passes of three launches.
        prop_assert_eq!(u(&r["processes"][0]["request_latency_us"]["count"]), 6);
    }
}
