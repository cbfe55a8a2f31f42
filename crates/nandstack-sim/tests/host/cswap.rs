//! Compressed swap in the host path (issue #22): identities that hold whatever the timing — zswap's
//! stores = loads + writebacks + invalidations + stored pages; a load drops the entry so a page only read
//! is stored again at its next eviction (plain swap keeps the swap-cache copy and writes it once); zero
//! pages are a bit of the swap layer and never reach zswap or zram, and a zero page read back keeps its
//! slot; zram frees the slot of every swap-in (`notify_free` = `pswpin` + `swpin_zero`) and holds exactly
//! the compressed lengths of the swapped-out pages' bytes (checked with an independent compressor); the
//! pool is outside the cgroup's limit; every invariant under verification, with the worker writing back.

use std::io::Write;

use nandstack_compress::{Algorithm, Compressor};
use nandstack_host::zpool::Zsmalloc;
use serde_json::{json, Value};

use crate::report;
use crate::{err, memtouch, one, run, set};

fn zswap(c: &mut Value, extra: Value) {
    let mut z = json!({"enabled": true, "compressor": "lzo"});
    for (k, v) in extra.as_object().unwrap() {
        z[k] = v.clone();
    }
    set(c, &["host", "zswap"], z);
}

fn content(w: &mut Value, content: &str, dir: &std::path::Path) {
    w["content"] = json!(content);
    w["corpus_dir"] = json!(dir.display().to_string());
}

/// A corpus `tiny` of 8 distinct, compressible 4 KiB chunks in `dir/silesia_tiny.zip`.
pub(crate) fn tiny_corpus() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let f = std::fs::File::create(dir.path().join("silesia_tiny.zip")).unwrap();
    let mut z = zip::ZipWriter::new(f);
    z.start_file("tiny", zip::write::SimpleFileOptions::default())
        .unwrap();
    let text: Vec<u8> = (0..8 * 4096)
        .map(|i| b"the quick brown fox jumps over the lazy dog "[i % 44] ^ ((i / 4096) as u8))
        .collect();
    z.write_all(&text).unwrap();
    z.finish().unwrap();
    dir
}

fn stats(sim: &nandstack_sim::hostrun::Sim) -> Value {
    report(sim)
}

/// `host.zswap.exclusive_loads = false` (Linux before 6.5: frontswap loads): the same read-only workload
/// stores each page about once, as plain swap writes it once — a loaded page stays clean in the swap
/// cache beside its entry and is dropped unchanged at its next eviction; verify mode checks every load's
/// bytes against the entry and the invariants (a kept entry beside its swap-cache page is allowed).
#[test]
fn a_non_exclusive_load_keeps_the_entry_so_read_pages_are_stored_once() {
    let w = memtouch(2000, 20_000, "uniform", 0, 3);
    let plain = stats(&run(&one(600, w.clone()), false));
    let mut c = one(600, w);
    zswap(&mut c, json!({"exclusive_loads": false}));
    let z = stats(&run(&c, true));
    let zs = &z["zswap"];
    let u = |v: &Value| v.as_u64().unwrap();
    assert_eq!(u(&z["swap"]["pswpout"]) + u(&z["swap"]["pswpin"]), 0);
    let (loads, reads) = (u(&zs["zswpin"]), u(&plain["swap"]["pswpin"]));
    assert!(
        loads.abs_diff(reads) * 100 <= reads,
        "zswpin {loads} vs plain pswpin {reads}"
    );
    assert_eq!(zs["exclusive_loads"], json!(false));
    let (stores, writes) = (u(&zs["zswpout"]), u(&plain["swap"]["pswpout"]));
    assert!(
        stores <= 2000 && stores.abs_diff(writes) * 20 <= writes,
        "zswpout {stores} vs pswpout {writes}"
    );
    // Every store is still stored: nothing was loaded away, written back or invalidated.
    assert_eq!(u(&zs["stored_pages"]), stores);
}

#[test]
fn a_load_drops_the_entry_so_read_pages_are_stored_again() {
    // Read-only accesses after the fill: plain swap writes each page once (a page read back keeps its
    // swap-cache copy), zswap stores it again at every eviction.
    let w = memtouch(2000, 20_000, "uniform", 0, 3);
    let plain = stats(&run(&one(600, w.clone()), false));
    let mut c = one(600, w);
    zswap(&mut c, json!({}));
    let z = stats(&run(&c, false));
    let zs = &z["zswap"];
    let u = |v: &Value| v.as_u64().unwrap();
    assert_eq!(
        u(&z["swap"]["pswpout"]) + u(&z["swap"]["pswpin"]),
        0,
        "nothing reaches the device"
    );
    // The same faults on both sides.
    let (loads, reads) = (u(&zs["zswpin"]), u(&plain["swap"]["pswpin"]));
    assert!(
        loads.abs_diff(reads) * 100 <= reads,
        "zswpin {loads} vs plain pswpin {reads}"
    );
    // Plain swap wrote every evicted page once; zswap stores every eviction.
    assert!(u(&plain["swap"]["pswpout"]) <= 2000);
    assert!(u(&zs["zswpout"]) > 5 * u(&plain["swap"]["pswpout"]));
    // No writes, no slot frees: every store is loaded or still stored.
    assert_eq!(u(&zs["invalidated"]), 0);
    assert_eq!(u(&zs["zswpout"]), loads + u(&zs["stored_pages"]));
    // The pool lives outside the cgroup: its usage stays at the limit, the pool's pages come from RAM.
    let cg = &z["cgroups"][1];
    assert!(u(&cg["usage_pages_end"]) <= 600);
    // memory.stat's list sizes at the end: every charged page the cgroup keeps is on one of its lists
    // (anon only here: memtouch maps no file), and none is on a file list.
    let l = &cg["lru_pages_end"];
    let on_lists = u(&l["inactive_anon"]) + u(&l["active_anon"]);
    assert!(on_lists > 0 && on_lists <= u(&cg["usage_pages_end"]), "{l}");
    assert_eq!(u(&l["inactive_file"]) + u(&l["active_file"]), 0, "{l}");
    let pool = u(&zs["pool_pages"]);
    assert!(pool > 0 && u(&z["compressed_pool_pages"]) == pool);
    assert!(u(&z["cgroups"][0]["usage_pages_end"]) >= pool);
}

/// `host.swap.zero_map = false` (Linux before 6.12): the same all-zero workload's pages go to zswap
/// (compressed and stored, then loaded) or to the block device (written and read); none is a bit.
#[test]
fn without_the_zero_map_zero_pages_are_stored_or_written() {
    let dir = tiny_corpus();
    let mut w = memtouch(1500, 15_000, "uniform", 0, 5);
    content(&mut w, "zero:100:tiny", dir.path());
    for backend in ["block", "zswap"] {
        let mut c = one(500, w.clone());
        if backend == "zswap" {
            zswap(&mut c, json!({}));
        }
        set(&mut c, &["host", "swap", "zero_map"], json!(false));
        let r = stats(&run(&c, true));
        let s = &r["swap"];
        let u = |v: &Value| v.as_u64().unwrap();
        assert_eq!(u(&s["swpout_zero"]) + u(&s["swpin_zero"]), 0, "{backend}");
        let z = r["zswap"]["zswpout"].as_u64().unwrap_or(0);
        if backend == "zswap" {
            assert!(z >= 900, "zswap: {z} stores");
            assert!(u(&r["zswap"]["zswpin"]) > 5000, "zswap loads");
        } else {
            assert_eq!(z, 0);
            assert!(u(&s["pswpout"]) >= 900 && u(&s["pswpin"]) > 0, "block: {s}");
        }
    }
}

#[test]
fn zero_pages_are_a_bit_of_the_swap_layer() {
    let dir = tiny_corpus();
    let mut w = memtouch(1500, 15_000, "uniform", 0, 5);
    content(&mut w, "zero:100:tiny", dir.path());
    for backend in ["block", "zswap", "zram"] {
        let mut c = one(500, w.clone());
        match backend {
            "zswap" => zswap(&mut c, json!({})),
            "zram" => set(
                &mut c,
                &["host", "swap", "backend"],
                json!({"kind": "zram"}),
            ),
            _ => {}
        }
        let r = stats(&run(&c, true));
        let s = &r["swap"];
        let u = |v: &Value| v.as_u64().unwrap();
        assert_eq!(
            u(&s["pswpout"]) + u(&s["pswpin"]),
            0,
            "{backend}: nothing written or read"
        );
        assert_eq!(r["zswap"]["zswpout"].as_u64().unwrap_or(0), 0, "{backend}");
        let (out, inn) = (u(&s["swpout_zero"]), u(&s["swpin_zero"]));
        assert!(
            out >= 900 && inn > 5000,
            "{backend}: swpout_zero {out} swpin_zero {inn}"
        );
        if backend == "zram" {
            // Every swap-in frees its slot (notify_free) and the page needs a new bit when evicted.
            assert_eq!(u(&s["backend"]["io_stat"]["notify_free"]), inn);
            // Each page out holds a slot with its bit: what went out came back or is still out.
            assert_eq!(out, inn + u(&s["used_pages_end"]), "zram");
            assert_eq!(u(&s["backend"]["mm_stat"]["orig_data_size"]), 0);
        } else {
            // A zero page read back keeps its slot and bit: evicted again unchanged, it is not
            // written again — each page goes out once.
            assert!(
                out <= 1500 && inn > 4 * out,
                "{backend}: {out} out vs {inn} in"
            );
        }
    }
}

#[test]
fn zram_holds_the_compressed_lengths_of_the_swapped_out_pages() {
    let dir = tiny_corpus();
    let mut w = memtouch(1500, 12_000, "uniform", 50, 9);
    content(&mut w, "mix:30:tiny", dir.path());
    let mut c = one(500, w);
    set(
        &mut c,
        &["host", "swap", "backend"],
        json!({"kind": "zram", "comp_algorithm": "lz4"}),
    );
    let sim = run(&c, true);
    let r = stats(&sim);
    let s = &r["swap"];
    let u = |v: &Value| v.as_u64().unwrap();
    let mm = &s["backend"]["mm_stat"];
    assert_eq!(
        u(&s["backend"]["io_stat"]["notify_free"]),
        u(&s["pswpin"]) + u(&s["swpin_zero"])
    );
    assert_eq!(u(&s["sync_swapins"]), u(&s["pswpin"]) + u(&s["swpin_zero"]));
    // Rebuild the stored set from the page image: every page whose PTE holds a slot is in zram, with
    // the bytes the program left in it; compress them independently.
    let h = &sim.host;
    let mut prog = nandstack_workload::content::MemtouchProgram::new(
        nandstack_workload::content::MemtouchParams::from_command(&[
            "memtouch",
            "1500",
            "12000",
            "uniform",
            "50",
            "9",
            "mix:30:tiny",
        ])
        .unwrap(),
        Some(nandstack_workload::content::Corpus::load(dir.path(), "tiny").unwrap()),
    )
    .unwrap();
    prog.run_to_end();
    let mut comp = Compressor::new(Algorithm::Lz4).unwrap();
    let huge = Zsmalloc::new().huge_class_size();
    let base = h.vm.procs[0].base;
    let (mut pages, mut bytes, mut huge_pages) = (0u64, 0u64, 0u64);
    let mut page = [0u8; 4096];
    for p in 0..1500u32 {
        let pte = h.vm.ptes[(base + p) as usize];
        if pte & (1 << 31) != 0 || pte & (1 << 30) == 0 {
            continue; // resident, or never swapped
        }
        prog.image().page_bytes(p as u64, &mut page);
        let len = comp.compressed_len(&page).unwrap() as u32;
        pages += 1;
        if len >= huge {
            bytes += 4096;
            huge_pages += 1;
        } else {
            bytes += len as u64;
        }
    }
    assert!(pages > 900, "{pages} pages out");
    assert_eq!(u(&mm["orig_data_size"]), pages * 4096);
    assert_eq!(u(&mm["compr_data_size"]), bytes);
    assert_eq!(u(&mm["huge_pages"]), huge_pages);
    assert!(
        huge_pages > 100,
        "30% random pages stored whole: {huge_pages}"
    );
    assert!(u(&mm["mem_used_total"]) >= bytes);
    assert_eq!(
        u(&r["compressed_pool_pages"]) * 4096,
        u(&mm["mem_used_total"])
    );
}

#[test]
fn the_worker_writes_back_at_the_pool_limit_under_verification() {
    // 256 MiB of RAM at 1%: a pool of 655 pages for 2,500 random pages out of a 600-page cgroup.
    let mut w = memtouch(3000, 20_000, "uniform", 50, 2);
    w["content"] = json!("random");
    let mut c = one(600, w);
    zswap(&mut c, json!({"max_pool_percent": 1}));
    let r = stats(&run(&c, true));
    let z = &r["zswap"];
    let u = |v: &Value| v.as_u64().unwrap();
    assert!(u(&z["pool_limit_hit"]) > 0);
    assert!(u(&z["zswpwb"]) > 500, "written back: {}", z["zswpwb"]);
    assert!(u(&z["pool_pages_max"]) <= 655 + 1);
    assert_eq!(
        u(&z["zswpout"]),
        u(&z["zswpin"]) + u(&z["zswpwb"]) + u(&z["invalidated"]) + u(&z["stored_pages"])
    );
    assert_eq!(u(&z["stored_incompressible_pages"]), u(&z["stored_pages"]));
    // Refused stores and written-back entries both reach the device.
    assert!(u(&r["swap"]["pswpout"]) > u(&z["zswpwb"]));
    assert!(u(&r["swap"]["pswpin"]) > 0);
}

#[test]
fn zram_writeback_moves_huge_pages_to_the_backing_device() {
    let mut w = memtouch(1500, 10_000, "uniform", 50, 4);
    w["content"] = json!("random");
    let mut c = one(500, w);
    set(
        &mut c,
        &["host", "swap", "backend"],
        json!({"kind": "zram", "writeback": {"mode": "huge", "interval_ms": 2.0}}),
    );
    let r = stats(&run(&c, true));
    let b = &r["swap"]["backend"];
    let u = |v: &Value| v.as_u64().unwrap();
    assert!(u(&b["bd_stat"]["bd_writes"]) > 500, "{b}");
    assert!(u(&b["bd_stat"]["bd_reads"]) > 100, "{b}");
    assert_eq!(u(&r["swap"]["write_pages"]), u(&b["bd_stat"]["bd_writes"]));
    assert_eq!(u(&r["swap"]["read_pages"]), u(&b["bd_stat"]["bd_reads"]));
}

#[test]
fn compressed_swap_needs_page_contents_and_a_corpus() {
    let mut c = one(
        100,
        json!({"type": "pmbench", "working_set_mib": 2, "references": 1000}),
    );
    zswap(&mut c, json!({}));
    let e = err(&c);
    assert!(
        e.contains("compress page contents") && e.contains("processes[0]"),
        "{e}"
    );
    let mut w = memtouch(100, 10, "seq", 0, 1);
    content(&mut w, "corpus:nope", std::path::Path::new("/nonexistent"));
    let e = err(&one(50, w));
    assert!(e.contains("silesia_nope.zip"), "{e}");
    let mut c = one(100, memtouch(100, 10, "seq", 0, 1));
    zswap(&mut c, json!({"compressor": "lzma"}));
    assert!(err(&c).contains("compressor"), "{}", err(&c));
    zswap(&mut c, json!({"max_pool_percent": 0}));
    assert!(err(&c).contains("host.zswap.max_pool_percent"));
}

#[test]
fn compressed_swap_runs_are_deterministic() {
    let mut w = memtouch(1200, 8000, "hot", 50, 8);
    w["content"] = json!("sparse");
    let mut c = one(400, w);
    zswap(&mut c, json!({"max_pool_percent": 1}));
    let strip = |mut v: Value| {
        v.as_object_mut()
            .unwrap()
            .retain(|k, _| !k.starts_with("wall_"));
        v
    };
    assert_eq!(strip(stats(&run(&c, false))), strip(stats(&run(&c, false))));
}

/// zswap's shrinker flushes the cgroup's statistics on each of its reclaims (`zswap_shrinker_count` →
/// `mem_cgroup_flush_stats`). Under the 2 s periodic flush a run shorter than the period reads zeros
/// until it ends: without the shrinker no refault is activated (workingset size 0) and the active list
/// is never aged (0 < 0); with it, reclaim reads the cgroup's live lists and does both. Without zswap's
/// shrinker the run matches plain stale statistics; with live statistics the shrinker changes nothing.
#[test]
fn the_zswap_shrinker_flushes_the_statistics_reclaim_reads() {
    let w = memtouch(2000, 20_000, "uniform", 0, 3);
    let run_with = |shrinker: bool, flush_ms: u64| {
        let mut c = one(600, w.clone());
        zswap(&mut c, json!({"shrinker_enabled": shrinker}));
        set(
            &mut c,
            &["host", "reclaim"],
            json!({"stats_flush_ms": flush_ms}),
        );
        let sim = run(&c, false);
        assert!(
            sim.now.0 < 2_000_000_000,
            "the run ends before the first flush ({} ns)",
            sim.now.0
        );
        let cg = &stats(&sim)["cgroups"][1];
        let u = |k: &str| cg[k].as_u64().unwrap();
        (
            u("pgdeactivate"),
            u("workingset_activate_anon"),
            u("workingset_refault_anon"),
        )
    };
    let (deact_off, act_off, refaults) = run_with(false, 2000);
    assert!(refaults > 1000, "the program refaults ({refaults})");
    assert_eq!(
        (deact_off, act_off),
        (0, 0),
        "stale zeros: nothing aged, nothing activated"
    );
    let (deact_on, act_on, _) = run_with(true, 2000);
    assert!(
        deact_on > 100 && act_on > 100,
        "shrinker flush: {deact_on} deactivated, {act_on} activated"
    );
    // With live statistics the shrinker's flush has nothing to add.
    assert_eq!(run_with(true, 0), run_with(false, 0));
}
