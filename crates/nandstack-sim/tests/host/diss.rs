//! DISS (docs/diss.md) end to end on the host model: the swap-range registration at swapon, CL-SDI
//! invalidating exactly the pages swapped in (never file data), SDS keeping swap and file data apart,
//! the clean-data handler rewriting exactly the swapped-in pages that are evicted again, STRIM and
//! iTRIM, the data loss STRIM or CL-SDI without the clean-data handler cause, caught at the read, and
//! swap-in kinds counted per page read from the device (never for zero pages or zswap hits).

use nandstack_device::ssd::BlockSsd;
use nandstack_host::vm::page;
use nandstack_workload::trace::TraceFormat;
use nandstack_workload::Op;
use serde_json::{json, Value};

use super::{base, err, memtouch, one, phone, run, set};
use crate::report;

/// A cgroup of 64 pages and one program over 256 pages: write pages 0–127 (the oldest are swapped
/// out), read 0–15 back (swap-ins of clean pages), write fresh pages 128–255 (which evicts 0–15
/// again), then read 0–15 once more. `gap_us` of sleep between the phases.
fn scenario(gap_us: u64) -> Value {
    let w = |r: std::ops::Range<u32>| r.map(|p| format!("W{p}")).collect::<Vec<_>>().join(" ");
    let rd = |r: std::ops::Range<u32>| r.map(|p| format!("R{p}")).collect::<Vec<_>>().join(" ");
    let refs = format!(
        "{} S{gap_us} {} S{gap_us} {} S{gap_us} {}",
        w(0..128),
        rd(0..16),
        w(128..256),
        rd(0..16)
    );
    let mut c = base();
    c["host"]["cgroups"] = json!([{"name": "t", "limit_pages": 64}]);
    c["workload"]["processes"] = json!([{"name": "p", "cgroup": "t",
                              "workload": {"type": "inline", "pages": 256, "refs": refs}}]);
    c
}

/// The host's DISS switches: SDR (registration), CDH, and the device's CL-SDI and SDS.
fn diss(c: &mut Value, register: bool, cdh: bool, cl_sdi: bool, sds: bool) {
    set(c, &["host", "swap", "register_range"], json!(register));
    set(c, &["host", "swap", "clean_data_handler"], json!(cdh));
    let mut ftl = json!({"swap": {"invalidate_on_read": cl_sdi}});
    if sds {
        ftl["placement"] = json!({"policy": "swap_file"});
    }
    set(c, &["device", "ftl"], ftl);
}

fn ssd(sim: &nandstack_sim::hostrun::Sim) -> &BlockSsd {
    sim.host
        .io
        .dev
        .as_any()
        .downcast_ref::<BlockSsd>()
        .expect("a block SSD")
}

#[test]
fn registration_reaches_the_device_at_swapon() {
    let mut c = scenario(0);
    diss(&mut c, true, false, false, false);
    let sim = run(&c, true);
    let s = ssd(&sim);
    assert_eq!(s.counters().swap_range_registrations, 1);
    // The whole partition (64 MiB at offset 0), in 4 KiB units.
    assert_eq!(s.ftl.swap_range(), Some((0, 64 * 256)));
    let r = report(&sim);
    assert_eq!(
        r["swap"]["backend"]["registered_range_bytes"],
        json!([0, 64 << 20])
    );
    // Registration alone changes nothing the host sees.
    let plain = report(&run(&scenario(0), true));
    assert_eq!(r["swap"]["pswpin"], plain["swap"]["pswpin"]);
    assert_eq!(r["swap"]["pswpout"], plain["swap"]["pswpout"]);
}

#[test]
fn registration_on_a_device_without_the_command_is_a_named_error() {
    let mut c = scenario(0);
    set(&mut c, &["host", "swap", "register_range"], json!(true));
    c["device"] = json!({"kind": "zoned"});
    // Block swap on a zoned device is refused first (it writes slots in place).
    assert!(err(&c).contains("host.swap.backend.kind"));
    // ZNSwap sends no registration: the swap area is the host's own zones.
    set(
        &mut c,
        &["host", "swap", "backend"],
        json!({"kind": "znswap"}),
    );
    let e = err(&c);
    assert!(
        e.contains("host.swap.register_range") && e.contains("register_swap_range"),
        "{e}"
    );
}

/// Run `c` with a block trace; the simulation and, per 4 KiB page of the device, the writes issued.
fn run_traced(
    c: &Value,
) -> (
    nandstack_sim::hostrun::Sim,
    std::collections::BTreeMap<u64, u32>,
) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.blkparse");
    let mut c = c.clone();
    c["run"]["block_trace"] = json!({"path": path.display().to_string(), "format": "blkparse"});
    let sim = run(&c, true);
    let mut writes = std::collections::BTreeMap::new();
    for r in nandstack_workload::trace::open(&path, TraceFormat::Blkparse).unwrap() {
        let r = r.unwrap();
        if r.op == Op::Write {
            for page in r.offset / 4096..(r.offset + r.len) / 4096 {
                *writes.entry(page).or_insert(0) += 1;
            }
        }
    }
    (sim, writes)
}

#[test]
fn cdh_rewrites_exactly_the_swapped_in_pages_that_are_evicted_again() {
    let plain = report(&run(&scenario(0), true));
    let mut c = scenario(0);
    set(&mut c, &["host", "swap", "clean_data_handler"], json!(true));
    let (sim, writes) = run_traced(&c);
    let r = report(&sim);
    let (p, d) = (&plain["swap"]["swap_ins"], &r["swap"]["swap_ins"]);
    // Both runs read pages 0-15 twice. Without CDH the second read finds data nobody rewrote (16
    // swap-ins-and-in); with CDH the 16 clean pages were written again when evicted.
    assert_eq!(plain["swap"]["pswpin"], 32);
    assert_eq!(r["swap"]["pswpin"], 32);
    assert_eq!(
        (p["normal"].as_u64(), p["in_and_in"].as_u64()),
        (Some(16), Some(16))
    );
    assert_eq!(
        (d["normal"].as_u64(), d["in_and_in"].as_u64()),
        (Some(32), Some(0))
    );
    assert_eq!(d["cdh_marked_pages"], 32);
    assert_eq!(d["cdh_rewrites"], 16, "{d}");
    assert_eq!(p["cdh_rewrites"], 0);
    // From the block trace: each of the 16 pages (resident again, in the swap cache on its slot) was
    // written exactly twice to its slot — swapped out in phase 1, rewritten by CDH in phase 3 — though
    // the program only ever wrote it once.
    let base = sim.host.vm.procs[0].base;
    for p in 0..16 {
        let pte = sim.host.vm.ptes[(base + p) as usize];
        assert!(page::is_present(pte), "page {p}");
        let fr = &sim.host.vm.frames[page::pte_frame(pte) as usize];
        assert!(
            fr.has(page::F_SWAPCACHE) && fr.has(page::F_DIRTY),
            "page {p}"
        );
        let slot_page = sim.host.swap.offset(fr.key) / 4096;
        assert_eq!(
            writes.get(&slot_page),
            Some(&2),
            "page {p} (slot {})",
            fr.key
        );
    }
}

#[test]
fn cl_sdi_invalidates_exactly_the_pages_swapped_in() {
    let mut c = scenario(0);
    diss(&mut c, true, true, true, false);
    let sim = run(&c, true);
    let r = report(&sim);
    let f = ssd(&sim).ftl.counters();
    assert_eq!(r["swap"]["pswpin"], 32);
    // No write buffer: every swapped-in page was read from flash and invalidated in that access.
    assert_eq!(f.swap_invalidated_units, 32);
    assert_eq!(f.trimmed_units, 0);
    // Without the registration the device cannot tell swap from file data: nothing is invalidated.
    let mut c = scenario(0);
    diss(&mut c, false, true, true, false);
    let sim = run(&c, true);
    assert_eq!(ssd(&sim).ftl.counters().swap_invalidated_units, 0);
}

#[test]
fn cl_sdi_never_invalidates_file_data_and_sds_never_mixes_kinds() {
    let mut c = phone();
    diss(&mut c, true, true, true, true);
    let sim = run(&c, true);
    let r = report(&sim);
    let s = ssd(&sim);
    let f = s.ftl.counters();
    let pswpin = r["swap"]["pswpin"].as_u64().unwrap();
    assert!(pswpin > 100, "{}", r["swap"]);
    // File pages were read back after the flusher wrote them: reads of file data on flash.
    let file_reads = r["file"]["read_pages"].as_u64().unwrap();
    let file_empty = r["file"]["read_pages_no_data"].as_u64().unwrap();
    assert!(file_reads > file_empty, "{}", r["file"]);
    assert!(r["file"]["write_pages"].as_u64().unwrap() > 0);
    // Exactly the swap pages read were invalidated: none of the file reads of written data was.
    assert_eq!(f.swap_invalidated_units, pswpin);
    // SDS: every block's valid data is of one kind.
    let (first, end) = s.ftl.swap_range().expect("registered");
    let g = s.ftl.geometry();
    let upb = (g.pages_per_block * (g.page_size_bytes / 4096)) as usize;
    let mut kinds = vec![[false; 2]; g.total_blocks() as usize];
    for lpn in 0..s.ftl.logical_units() {
        if let Some(pua) = s.ftl.lookup(lpn) {
            kinds[pua as usize / upb][usize::from((first..end).contains(&lpn))] = true;
        }
    }
    let mixed = kinds.iter().filter(|k| k[0] && k[1]).count();
    assert_eq!(mixed, 0, "{mixed} blocks mix swap and file data");
    assert!(kinds.iter().any(|k| k[0]) && kinds.iter().any(|k| k[1]));
    // The same run without SDS mixes them (the check above can fail).
    let mut c = phone();
    diss(&mut c, true, true, true, false);
    let sim = run(&c, true);
    let s = ssd(&sim);
    let mut kinds = vec![[false; 2]; g.total_blocks() as usize];
    for lpn in 0..s.ftl.logical_units() {
        if let Some(pua) = s.ftl.lookup(lpn) {
            kinds[pua as usize / upb][usize::from((first..end).contains(&lpn))] = true;
        }
    }
    assert!(
        kinds.iter().any(|k| k[0] && k[1]),
        "single placement mixes kinds"
    );
}

#[test]
fn strim_or_cl_sdi_without_cdh_lose_swapped_in_pages_evicted_clean() {
    for (what, strim, cl_sdi) in [("STRIM", true, false), ("CL-SDI", false, true)] {
        let mut c = scenario(0);
        diss(&mut c, cl_sdi, false, cl_sdi, false);
        if strim {
            set(
                &mut c,
                &["host", "swap", "discard"],
                json!({"mode": "strim", "strim_slots": 8}),
            );
        }
        let e = err(&c);
        assert!(e.contains("host data lost"), "{what}: {e}");
        // With the clean-data handler the same run keeps every page (and verifies).
        set(&mut c, &["host", "swap", "clean_data_handler"], json!(true));
        let r = report(&run(&c, true));
        assert_eq!(r["swap"]["pswpin"], 32, "{what}");
        if strim {
            let d = &r["swap"]["discard"];
            assert!(d["strim_batches"].as_u64().unwrap() > 0, "{what}: {d}");
            assert!(r["swap"]["discard_pages"].as_u64().unwrap() > 0);
        }
    }
}

#[test]
fn itrim_trims_freed_slots_only_in_idle_time() {
    // Write faults on swapped-out pages free their slots; iTRIM holds them until the device has been
    // idle for 100 ms: with 50 ms gaps it never is, with 300 ms gaps it is after each phase.
    let with_writes = |gap_us: u64| {
        let mut c = scenario(gap_us);
        let refs = c["workload"]["processes"][0]["workload"]["refs"]
            .as_str()
            .unwrap()
            .replace('R', "W");
        c["workload"]["processes"][0]["workload"]["refs"] = json!(refs);
        set(&mut c, &["host", "swap", "discard", "mode"], json!("itrim"));
        report(&run(&c, true))
    };
    let busy = with_writes(50_000);
    let idle = with_writes(300_000);
    assert!(busy["swap"]["swap_ins"]["normal"].as_u64().unwrap() > 0);
    assert_eq!(
        busy["swap"]["discard_requests"], 0,
        "{}",
        busy["swap"]["discard"]
    );
    assert!(
        busy["swap"]["discard"]["idle_pending_slots_end"]
            .as_u64()
            .unwrap()
            > 0
    );
    let d = &idle["swap"]["discard"];
    assert!(
        idle["swap"]["discard_requests"].as_u64().unwrap() > 0,
        "{d}"
    );
    // Every TRIMmed slot was free when trimmed; contiguous freed slots went out together.
    assert_eq!(
        idle["swap"]["discard_pages"].as_u64(),
        d["idle_trimmed_slots"].as_u64()
    );
    assert!(
        d["idle_trim_commands"].as_u64() < d["idle_trimmed_slots"].as_u64(),
        "{d}"
    );
}

#[test]
fn cdh_covers_pages_read_ahead() {
    // Read-ahead pages are read from the device (and invalidated by CL-SDI) without being mapped; CDH
    // marks them dirty too, so one evicted before use is written back instead of dropped — the run
    // would otherwise stop at the first swap-in that finds no data.
    for ra in ["vma", "cluster"] {
        let mut c = phone();
        set(&mut c, &["host", "readahead", "policy"], json!(ra));
        diss(&mut c, true, true, true, true);
        let r = report(&run(&c, true));
        assert!(r["swap"]["readahead_pages"].as_u64().unwrap() > 0, "{ra}");
        assert!(
            r["swap"]["swap_ins"]["cdh_rewrites"].as_u64().unwrap() > 0,
            "{ra}"
        );
    }
}

#[test]
fn swap_in_kinds_count_device_reads_only() {
    // Zero pages (a bit of the swap layer) and zswap hits are served in memory: neither is a read of
    // the device, so neither is a swap-in of either kind, while every page read from the device —
    // read-ahead pages included — is exactly one. The device counts on its own: memtouch has no file
    // I/O, so every unit the device reads is a swap-in; under CL-SDI (no write buffer) it invalidates
    // each of them once, in the read.
    let corpus = crate::cswap::tiny_corpus();
    for (dissed, zswap) in [(false, false), (false, true), (true, false), (true, true)] {
        let what = format!("DISS {dissed}, zswap {zswap}");
        // Two programs in one cgroup: one whose pages are 40% zero, one of incompressible pages that
        // fill zswap's pool (1% of 64 MiB: 163 pages), so most of what it stores is written back.
        let mut w = memtouch(3000, 20_000, "uniform", 30, 5);
        w["content"] = json!("zero:40:tiny");
        w["corpus_dir"] = json!(corpus.path().display().to_string());
        let mut c = one(600, w);
        let mut w = memtouch(1500, 10_000, "uniform", 30, 6);
        w["content"] = json!("random");
        c["workload"]["processes"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "q", "cgroup": "t", "workload": w}));
        set(&mut c, &["host", "ram_mib"], json!(64));
        set(&mut c, &["host", "readahead", "policy"], json!("cluster"));
        if zswap {
            set(
                &mut c,
                &["host", "zswap"],
                json!({"enabled": true, "compressor": "lzo", "max_pool_percent": 1}),
            );
        }
        diss(&mut c, dissed, dissed, dissed, false);
        let sim = run(&c, true);
        let r = report(&sim);
        let s = &r["swap"];
        let u = |v: &Value| v.as_u64().unwrap_or(0);
        let (pswpin, zero) = (u(&s["pswpin"]), u(&s["swpin_zero"]));
        let k = &s["swap_ins"];
        assert!(
            pswpin > 500 && zero > 500,
            "{what}: pswpin {pswpin}, swpin_zero {zero}"
        );
        assert!(u(&s["readahead_pages"]) > 0, "{what}");
        if zswap {
            let z = &r["zswap"];
            assert!(u(&z["zswpin"]) > 500 && u(&z["zswpwb"]) > 0, "{what}: {z}");
        }
        assert_eq!(u(&k["normal"]) + u(&k["in_and_in"]), pswpin, "{what}: {k}");
        let f = ssd(&sim).ftl.counters();
        assert_eq!(f.host_read_units, pswpin, "{what}");
        if dissed {
            assert_eq!(f.swap_invalidated_units, pswpin, "{what}");
            // CDH marks at most the pages read from the device (a write fault's page is dirty anyway).
            assert!(u(&k["cdh_marked_pages"]) <= pswpin, "{what}: {k}");
        } else {
            // Read-only references swap pages in and out unchanged: both kinds occur.
            assert!(u(&k["in_and_in"]) > 0 && u(&k["normal"]) > 0, "{what}: {k}");
        }
    }
}
