//! Replay every shared block trace that has request sizes through the whole engine (timing on) and check
//! the accounting identities: the host bytes and request counts equal the trace's, every read is served,
//! WAF ≥ 1 whenever the trace writes. Skips with a message when ../shared is absent.

use std::path::{Path, PathBuf};

use nandstack_sim::{run_toml, RunOptions};
use nandstack_workload::trace::{scan, TraceFormat};

mod common;

fn shared_dir() -> Option<PathBuf> {
    common::shared_block_traces("the shared-trace replays")
}

/// The format of a shared trace, from its file name (see the MANIFEST).
fn format_of(name: &str) -> Option<TraceFormat> {
    use TraceFormat::*;
    let table = [
        ("msr_", Msr),
        ("cloudphysics_vscsi", CloudPhysics),
        ("tencent_", TencentCbs),
        ("systor17_", Systor17),
        ("arc_", Arc),
        ("disksim_", Disksim),
        ("hpl_", HpSrt),
        ("mqsim_", Mqsim),
        ("ssdsim_", Ssdsim),
        ("wiscsee_", Wiscsee),
        ("heimdall_", Heimdall),
    ];
    table
        .iter()
        .find(|(p, _)| name.starts_with(p))
        .map(|&(_, f)| f)
}

#[test]
fn every_sized_shared_trace_replays_with_exact_accounting() {
    let Some(dir) = shared_dir() else { return };
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut replayed = 0;
    for name in &names {
        let Some(format) = format_of(name) else {
            // cloudphysics_w106_blocks carries block numbers only (no sizes, no op): nothing to check here.
            assert!(
                name.starts_with("cloudphysics_w106"),
                "no format known for shared trace {name}"
            );
            continue;
        };
        let path = dir.join(name);
        let stats = scan(&path, format).unwrap();
        let timed = format.has_time();
        let host = if timed {
            "mode = \"open_loop\""
        } else {
            "mode = \"closed_loop\"\nqueue_depth = 16"
        };
        // 4 GiB TLC device, half filled at random so reads find data; the trace's address space is scaled
        // onto the device.
        let cfg = format!(
            "[device.geometry]\nblocks_per_plane = 128\n[workload.io]\n{host}\n\
             [precondition]\nfill_fraction = 0.5\nfill_order = \"random\"\nwarmup_capacity_multiples = 0.0\n\
             [workload]\nkind = \"trace\"\n[workload.trace]\npath = \"{}\"\nformat = \"{format}\"\nlba = \"scale\"\n",
            path.display()
        );
        let r = run_toml(&cfg, &RunOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(r.requests, stats.records, "{name}: requests");
        assert_eq!(r.host_read_requests, stats.reads, "{name}: reads");
        assert_eq!(r.host_write_requests, stats.writes, "{name}: writes");
        assert_eq!(r.host_trim_requests, stats.trims, "{name}: trims");
        assert_eq!(r.host_read_bytes, stats.read_bytes, "{name}: read bytes");
        assert_eq!(r.host_write_bytes, stats.write_bytes, "{name}: write bytes");
        assert_eq!(r.host_trim_bytes, stats.trim_bytes, "{name}: trim bytes");
        assert_eq!(
            r.read_latency_us.as_ref().map_or(0, |p| p.count),
            stats.reads,
            "{name}: every read completed"
        );
        if stats.writes > 0 {
            let waf = r.waf.unwrap();
            assert!(waf >= 1.0, "{name}: WAF {waf} < 1");
        }
        assert_eq!(
            r.blk().units.valid + r.blk().units.invalid + r.blk().units.free,
            r.blk().units.total,
            "{name}"
        );
        eprintln!(
            "{name}: {} requests, WAF {:?}, iops {:.0}",
            r.requests,
            r.waf,
            r.iops.unwrap_or(0.0)
        );
        replayed += 1;
    }
    assert!(replayed >= 19, "only {replayed} traces replayed");
}

#[test]
fn out_of_range_trace_requests_name_the_request() {
    let Some(dir) = shared_dir() else { return };
    // The MSR sample addresses up to 13.6 GB; a 4 GiB device cannot hold it with lba = "error".
    let cfg = format!(
        "[device.geometry]\nblocks_per_plane = 128\n[precondition]\nfill_fraction = 0.0\nwarmup_capacity_multiples = 0.0\n\
         [workload]\nkind = \"trace\"\n[workload.trace]\npath = \"{}\"\nformat = \"msr\"\n",
        dir.join("msr_cambridge_hm0_sample.csv").display()
    );
    let e = run_toml(&cfg, &RunOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("msr_cambridge_hm0_sample.csv") && e.contains("request #") && e.contains("wrap"),
        "{e}"
    );
    let bad = cfg.replace("format = \"msr\"", "format = \"msrr\"");
    let e = run_toml(&bad, &RunOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("trace.format") && e.contains("mqsim"), "{e}");
}

/// One function fits trace addresses to every device (`source::map_lba`, the device's capacity its only
/// input): the same trace — a request longer than either device, one ending exactly at the trace's
/// extent, reads and writes across the space — replays onto a block and a hybrid device under `wrap` and
/// `scale` with the same clipping, and each device receives exactly the bytes the rule gives for its
/// capacity (computed here independently), with verification on.
#[test]
fn trace_addresses_fit_block_and_hybrid_devices_by_one_rule() {
    let dir = std::env::temp_dir().join(format!("nandstack-fit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("fit.csv");
    const MIB: u64 = 1 << 20;
    // (op, offset, len): the extent is 64 MiB; the 40 MiB write is longer than both devices.
    let reqs: [(&str, u64, u64); 6] = [
        ("Write", 0, 64 << 10),
        ("Write", 40 * MIB, 40 * MIB),
        ("Read", 8 * MIB, 16 << 10),
        ("Write", 64 * MIB - (128 << 10), 128 << 10),
        ("Read", 64 * MIB - 4096, 4096),
        ("Write", 33 * MIB + 512, 3 * 4096),
    ];
    let text: String = reqs
        .iter()
        .enumerate()
        .map(|(i, (op, o, l))| format!("{},h,0,{op},{o},{l},1\n", 1000 + i))
        .collect();
    std::fs::write(&path, text).unwrap();
    let devices = [
        (
            "block",
            "[device.geometry]\nchannels = 1\nchips_per_channel = 1\ndies_per_chip = 1\nplanes_per_die = 1\n\
             blocks_per_plane = 160\npages_per_block = 32\npage_size_bytes = 4096\n[device.ftl]\n\
             over_provisioning = 0.25\n[precondition]\nfill_fraction = 0.0\nwarmup_capacity_multiples = 0.0\n",
        ),
        (
            "hybrid",
            "[device]\nkind = \"hybrid\"\n[device.hybrid]\ntotal_blocks = 120\npage_bytes = 4096\n\
             qlc_pages_per_block = 64\nslc_pages_per_block = 16\nover_provisioning = 0.25\n",
        ),
    ];
    for lba in ["wrap", "scale"] {
        for (kind, device) in devices {
            let cfg = format!(
                "{device}[workload]\nkind = \"trace\"\n[workload.trace]\npath = \"{}\"\nformat = \"msr\"\nlba = \"{lba}\"\n",
                path.display()
            );
            let opts = RunOptions {
                verify: true,
                ..RunOptions::default()
            };
            let r = run_toml(&cfg, &opts).unwrap_or_else(|e| panic!("{kind} {lba}: {e}"));
            let cap = r.device["logical_bytes"].as_u64().unwrap();
            assert!(cap < 40 * MIB, "{kind}: the long write must not fit");
            let fitted = |op: &str| -> u64 {
                reqs.iter()
                    .filter(|r| r.0 == op)
                    .map(|r| r.2.min(cap))
                    .sum()
            };
            assert_eq!(r.workload.clipped_requests, 1, "{kind} {lba}");
            assert_eq!(r.host_write_bytes, fitted("Write"), "{kind} {lba}");
            assert_eq!(r.host_read_bytes, fitted("Read"), "{kind} {lba}");
            assert_eq!(r.requests, reqs.len() as u64, "{kind} {lba}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

// ---------------------------------------------------------------------------------------------------
// Time order: rows out of order in the file replay like the sorted trace (the reorder window)
// ---------------------------------------------------------------------------------------------------

/// MSR rows (time in 100 ns units, op, offset, size), written as a file.
type MsrRow = (u64, &'static str, u64, u64);

fn write_msr(path: &Path, rows: &[MsrRow]) {
    let text: String = rows
        .iter()
        .map(|(t, op, off, size)| format!("{t},hm,0,{op},{off},{size},100\n"))
        .collect();
    std::fs::write(path, text).unwrap();
}

/// Swap `n` pairs of rows at most `distance` positions apart (seeded); returns the swapped copy.
fn swap_rows(rows: &[MsrRow], n: usize, distance: u64, seed: u64) -> Vec<MsrRow> {
    let mut rng = nandstack_core::Rng::new(seed);
    let mut out = rows.to_vec();
    for _ in 0..n {
        let i = rng.below(rows.len() as u64 - distance) as usize;
        let j = i + 1 + rng.below(distance - 1) as usize;
        out.swap(i, j);
    }
    out
}

/// Open-loop replay of an MSR file on a 4 GiB TLC device: (mean, p99) write latency in µs and the
/// summary's `trace` section.
fn replay(path: &Path, extra: &str) -> (f64, f64, nandstack_sim::source::TraceCounts) {
    let cfg = format!(
        "[device.geometry]\nblocks_per_plane = 128\n[precondition]\nwarmup_capacity_multiples = 0.1\n\
         [workload]\nkind = \"trace\"\n[workload.io]\nmode = \"open_loop\"\n\
         [workload.trace]\npath = \"{}\"\nformat = \"msr\"\nlba = \"wrap\"\n{extra}",
        path.display()
    );
    let r = run_toml(&cfg, &RunOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let w = r.write_latency_us.expect("writes");
    (
        w.mean,
        w.p99,
        r.trace.expect("a trace replay has a trace section"),
    )
}

fn within(a: f64, b: f64, tolerance: f64) -> bool {
    (a / b - 1.0).abs() <= tolerance
}

/// Rows the file has earlier than the row just before them, counted directly.
fn descents(rows: &[MsrRow]) -> u64 {
    rows.windows(2).filter(|w| w[1].0 < w[0].0).count() as u64
}

#[test]
fn rows_swapped_within_a_few_hundred_positions_replay_like_the_sorted_trace() {
    // 6,000 MSR rows, 80% 4 KiB writes at random offsets of 1 GiB, Poisson arrivals 2 ms apart on
    // average; then 30 pairs of rows swapped up to 300 positions apart.
    let mut rng = nandstack_core::Rng::new(20);
    let mut t = 128_166_372_000_000_000u64;
    let rows: Vec<MsrRow> = (0..6000)
        .map(|_| {
            t += (-(1.0 - rng.unit_f64()).ln() * 20_000.0) as u64;
            let op = if rng.chance(0.8) { "Write" } else { "Read" };
            (t, op, rng.below(1 << 18) * 4096, 4096)
        })
        .collect();
    let swapped = swap_rows(&rows, 30, 300, 7);
    let dir = std::env::temp_dir().join(format!("nandstack-order-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("sorted.csv"), dir.join("swapped.csv"));
    write_msr(&a, &rows);
    write_msr(&b, &swapped);
    let (mean, p99, counts) = replay(&a, "");
    assert_eq!((counts.out_of_order_rows, counts.late_rows), (0, 0));
    let (s_mean, s_p99, s_counts) = replay(&b, "");
    println!("sorted: mean {mean:.0} µs, p99 {p99:.0} µs; swapped: {s_mean:.0}, {s_p99:.0}; {s_counts:?}");
    assert!(
        within(s_mean, mean, 0.15),
        "mean write latency {s_mean} vs sorted {mean}"
    );
    assert!(
        within(s_p99, p99, 0.15),
        "p99 write latency {s_p99} vs sorted {p99}"
    );
    assert_eq!(s_counts.out_of_order_rows, descents(&swapped));
    assert_eq!(s_counts.late_rows, 0);
    // The test can tell: replayed in file order (no window), the swapped trace is late thousands of
    // times and its latency is far from the sorted trace's, as it was before the window.
    let unsorted = "reorder_window_rows = 0\nmax_late_rows = 100000\n";
    let (u_mean, _, u_counts) = replay(&b, unsorted);
    println!("swapped, file order: mean {u_mean:.0} µs; {u_counts:?}");
    assert!(u_mean > 1.15 * mean, "{u_mean} vs {mean}");
    assert!(u_counts.late_rows > 1000);
    // Too many late rows is an error naming the line.
    let e = run_toml(
        &format!(
            "[device.geometry]\nblocks_per_plane = 128\n[workload]\nkind = \"trace\"\n\
             [workload.trace]\npath = \"{}\"\nformat = \"msr\"\nlba = \"wrap\"\nreorder_window_rows = 2\n\
             max_late_rows = 3\n",
            b.display()
        ),
        &RunOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("swapped.csv:") && e.contains("reorder window"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn shared_traces_replay_in_time_order() {
    let Some(dir) = shared_dir() else { return };
    let tmp = std::env::temp_dir().join(format!("nandstack-order-shared-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    // The MSR sample, sorted as captured, and with rows swapped within a few hundred positions.
    let text = std::fs::read_to_string(dir.join("msr_cambridge_hm0_sample.csv")).unwrap();
    let rows: Vec<MsrRow> = text
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let op = if f[3] == "Read" { "Read" } else { "Write" };
            (
                f[0].parse().unwrap(),
                op,
                f[4].parse().unwrap(),
                f[5].parse().unwrap(),
            )
        })
        .collect();
    let (a, b) = (tmp.join("hm0.csv"), tmp.join("hm0_swapped.csv"));
    write_msr(&a, &rows);
    write_msr(&b, &swap_rows(&rows, 10, 200, 3));
    let (mean, p99, _) = replay(&a, "");
    let (s_mean, s_p99, counts) = replay(&b, "");
    println!("hm0: mean {mean:.0} / {s_mean:.0} µs, p99 {p99:.0} / {s_p99:.0} µs, {counts:?}");
    assert!(within(s_mean, mean, 0.15) && within(s_p99, p99, 0.15));
    assert!(counts.out_of_order_rows > 0 && counts.late_rows == 0);
    std::fs::remove_dir_all(&tmp).ok();
}
