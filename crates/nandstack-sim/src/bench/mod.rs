//! Built-in benchmarks (`nandstack bench`): simulated operations per wall-clock second and peak memory.
//! Benchmarks are measurements, not tests: nothing here asserts a speed.

mod naive;

use nandstack_core::{Error, Result, MAPPING_UNIT_BYTES};
use serde::Serialize;

pub use crate::usage::{cpu_seconds, peak_rss_bytes};
use crate::{run_toml, RunOptions};

#[derive(Serialize)]
struct BenchResult {
    name: &'static str,
    description: String,
    device_raw_bytes: u64,
    over_provisioning: f64,
    measured_host_writes: u64,
    waf: Option<f64>,
    wall_seconds: f64,
    host_writes_per_second: f64,
    flash_programs_per_second: f64,
    metadata_bytes_per_physical_page: f64,
    peak_rss_bytes: Option<u64>,
    write_latency_us_mean: Option<f64>,
    simulated_iops: Option<f64>,
    /// CPU seconds of the measured phase and flash programs per CPU second (robust to a loaded machine).
    cpu_seconds: Option<f64>,
    flash_programs_per_cpu_second: Option<f64>,
    host_writes_per_cpu_second: Option<f64>,
    /// `ftl` only: the naive reference FTL on the same geometry and requests, run right after.
    #[serde(skip_serializing_if = "Option::is_none")]
    reference: Option<naive::NaiveResult>,
    /// `ftl` only: flash programs per CPU second (and per wall second) ÷ the reference's.
    #[serde(skip_serializing_if = "Option::is_none")]
    ratio_to_reference_cpu: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ratio_to_reference_wall: Option<f64>,
}

/// Geometry of the benchmark device: (channels, chips per channel, dies per chip, blocks per plane);
/// 2 planes per die, 128 pages of 4 KiB per block.
fn device_shape(quick: bool) -> (u32, u32, u32, u32) {
    if quick {
        (2, 1, 1, 256)
    } else {
        (8, 4, 2, 1024)
    }
}
const PLANES_PER_DIE: u32 = 2;
const PAGES_PER_BLOCK: u32 = 128;
const OVER_PROVISIONING: f64 = 0.12;

/// 64 GiB device of 4 KiB pages (8 ch × 4 chips × 2 dies × 2 planes × 1024 blocks × 128 pages), OP 12%,
/// greedy GC; `quick` shrinks it to 512 MiB (2 × 1 × 1 × 2 × 256 blocks).
fn device_toml(quick: bool) -> String {
    let (channels, chips, dies, blocks) = device_shape(quick);
    format!(
        "seed = 1\n[device.geometry]\nchannels = {channels}\nchips_per_channel = {chips}\ndies_per_chip = {dies}\n\
         planes_per_die = {PLANES_PER_DIE}\nblocks_per_plane = {blocks}\npages_per_block = {PAGES_PER_BLOCK}\n\
         page_size_bytes = 4096\n[device.ftl]\nover_provisioning = {OVER_PROVISIONING}\n"
    )
}

fn result(name: &'static str, description: String, r: &crate::Report) -> BenchResult {
    let dev = |k: &str| {
        r.device
            .get(k)
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(0.0)
    };
    let pages = dev("blocks") * dev("pages_per_block");
    let metadata = r.block.as_ref().map_or(0, |b| b.metadata_bytes);
    BenchResult {
        name,
        description,
        device_raw_bytes: dev("raw_bytes") as u64,
        over_provisioning: dev("over_provisioning"),
        measured_host_writes: r.host_write_requests,
        waf: r.waf,
        wall_seconds: r.wall_seconds,
        host_writes_per_second: r.host_write_requests as f64 / r.wall_seconds,
        flash_programs_per_second: r.wall_flash_programs_per_second,
        metadata_bytes_per_physical_page: metadata as f64 / pages,
        peak_rss_bytes: peak_rss_bytes(),
        write_latency_us_mean: r.write_latency_us.as_ref().map(|p| p.mean),
        simulated_iops: r.iops,
        cpu_seconds: r.wall_cpu_seconds,
        flash_programs_per_cpu_second: r.wall_cpu_seconds.map(|c| r.flash_program_pages as f64 / c),
        host_writes_per_cpu_second: r.wall_cpu_seconds.map(|c| r.host_write_requests as f64 / c),
        reference: None,
        ratio_to_reference_cpu: None,
        ratio_to_reference_wall: None,
    }
}

/// FTL only (timing off): steady state of 4 KiB uniform random writes over the whole logical space,
/// filled sequentially and warmed up with one capacity of random writes; the measured phase writes about
/// twice the logical capacity (quick: 400 K writes).
fn ftl_bench(quick: bool) -> Result<BenchResult> {
    let requests = if quick { 400_000 } else { 30_000_000 };
    let toml = format!(
        "{}[device.timing]\nenabled = false\n[precondition]\nwarmup_capacity_multiples = 1.0\n\
         [workload]\npattern = \"uniform\"\nrequests = {requests}\n",
        device_toml(quick)
    );
    let r = run_toml(&toml, &RunOptions::default())?;
    let mut out = result(
        "ftl",
        "FTL only (no timing): 4 KiB uniform random writes, steady state, greedy GC, OP 12%".into(),
        &r,
    );
    // The naive reference, after the engine's peak memory was read (its tables are its own: the
    // engine's, kept for a next device, are freed first so the two never add up in the peak).
    nandstack_core::alloc::release_kept();
    let reference = naive_reference(&toml, quick, requests, &r)?;
    out.ratio_to_reference_cpu = out
        .flash_programs_per_cpu_second
        .zip(reference.flash_programs_per_cpu_second)
        .map(|(a, b)| a / b);
    out.ratio_to_reference_wall =
        Some(out.flash_programs_per_second / reference.flash_programs_per_second);
    out.reference = Some(reference);
    Ok(out)
}

/// Run the naive FTL on the device and phases of `toml` (the `ftl` benchmark's).
fn naive_reference(
    toml: &str,
    quick: bool,
    requests: u64,
    engine: &crate::Report,
) -> Result<naive::NaiveResult> {
    let (channels, chips, dies, blocks_per_plane) = device_shape(quick);
    let planes = channels * chips * dies * PLANES_PER_DIE;
    let total_units = planes as u64 * blocks_per_plane as u64 * PAGES_PER_BLOCK as u64;
    let logical_units = (total_units as f64 / (1.0 + OVER_PROVISIONING)).floor() as u64;
    let capacity = logical_units * MAPPING_UNIT_BYTES;
    let engine_capacity = engine.device.get("logical_bytes").and_then(|v| v.as_u64());
    if engine_capacity != Some(capacity) {
        return Err(Error::Invariant(format!(
            "bench: the naive FTL's logical capacity {capacity} B differs from the engine's {engine_capacity:?}"
        )));
    }
    let cfg = crate::config::SimConfig::from_toml(toml)?;
    let gen = nandstack_workload::BlockGenerator::new(&cfg.workload.synthetic, capacity, cfg.seed)?;
    let plan = naive::NaivePlan {
        planes,
        blocks_per_plane,
        units_per_block: PAGES_PER_BLOCK,
        logical_units: logical_units as u32,
        warmup_bytes: capacity,
        requests,
    };
    naive::run(&plan, gen)
}

/// Timing on, closed loop at queue depth 32, light GC: half the logical space filled and written at
/// random (the other half stays empty, so victims are mostly invalid). `queued`: the same run through
/// the queued controller with every scheduling mechanism on (read priority, multi-plane commands,
/// program/erase suspension, semi-preemptible GC).
fn timed_bench(quick: bool, queued: bool) -> Result<BenchResult> {
    let requests = if quick { 400_000 } else { 20_000_000 };
    let mechanisms = if queued {
        "[device.controller.scheduling]\npolicy = \"read_priority\"\nmulti_plane = true\n\
         [device.controller.suspension]\nprogram = true\nerase = true\n\
         [device.controller.gc_preemption]\nenabled = true\n"
    } else {
        ""
    };
    let toml = format!(
        "{}{mechanisms}[workload.io]\nqueue_depth = 32\n[precondition]\nfill_fraction = 0.5\nwarmup_capacity_multiples = 0.5\n\
         [workload]\npattern = \"uniform\"\nfootprint_fraction = 0.5\nrequests = {requests}\n",
        device_toml(quick)
    );
    let r = run_toml(&toml, &RunOptions::default())?;
    let what = "closed loop QD 32: 4 KiB uniform random writes over half the space (light GC), greedy, OP 12%";
    Ok(if queued {
        result(
            "timed_queued",
            format!("timing on, queued controller with every mechanism on, {what}"),
            &r,
        )
    } else {
        result("timed", format!("timing on, {what}"), &r)
    })
}

/// The hybrid SLC/QLC model's benchmark (its own figures: it counts costs, it has no timing queue).
#[derive(Serialize)]
struct HybridBenchResult {
    name: &'static str,
    description: String,
    managers: Vec<&'static str>,
    host_write_requests: u64,
    host_write_bytes: u64,
    flash_page_programs: u64,
    wall_seconds: f64,
    host_writes_per_second: f64,
    flash_programs_per_second: f64,
    cpu_seconds: Option<f64>,
    host_writes_per_cpu_second: Option<f64>,
    flash_programs_per_cpu_second: Option<f64>,
    peak_rss_bytes: Option<u64>,
}

/// Hybrid model: the paper's 32 GB device with the RL and UST managers on the PC and TPC-C stand-ins at
/// Table 4 scale (about 86 GB of host writes per manager); quick: the quarter device at scale 0.05.
fn hybrid_bench(quick: bool) -> Result<HybridBenchResult> {
    let (device, scale) = if quick {
        ("page_bytes = 4096", 0.05)
    } else {
        ("", 1.0)
    };
    let managers = vec!["rl", "ust"];
    let (mut requests, mut bytes, mut programs) = (0u64, 0u64, 0u64);
    let cpu0 = cpu_seconds();
    let t0 = std::time::Instant::now();
    for kind in &managers {
        for name in ["pc", "tpcc"] {
            let toml = format!(
                "seed = 1\n[workload]\nkind = \"standin\"\n[workload.standin]\nname = \"{name}\"\n\
                 scale = {scale}\n[workload.io]\nqueue_depth = 1\n[device]\nkind = \"hybrid\"\n\
                 [device.hybrid]\n{device}\n[device.manager]\nkind = \"{kind}\"\n"
            );
            let r = crate::run_toml(&toml, &crate::RunOptions::default())?;
            requests += r.host_write_requests;
            bytes += r.host_write_bytes;
            programs += r.flash_program_pages;
        }
    }
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu0.and_then(|c0| cpu_seconds().map(|c| c - c0));
    Ok(HybridBenchResult {
        name: "hybrid",
        description:
            "hybrid SLC/QLC model: RL and UST managers, PC and TPC-C stand-ins, paper device".into(),
        managers,
        host_write_requests: requests,
        host_write_bytes: bytes,
        flash_page_programs: programs,
        wall_seconds: wall,
        host_writes_per_second: requests as f64 / wall,
        flash_programs_per_second: programs as f64 / wall,
        cpu_seconds: cpu,
        host_writes_per_cpu_second: cpu.map(|c| requests as f64 / c),
        flash_programs_per_cpu_second: cpu.map(|c| programs as f64 / c),
        peak_rss_bytes: peak_rss_bytes(),
    })
}

/// Compressed swap through the host model: real compression of real page bytes on every swap-out.
#[derive(Serialize)]
struct CompressedBenchResult {
    name: &'static str,
    description: String,
    presets: Vec<&'static str>,
    references: u64,
    /// Pages compressed (zswap stores, zram writes) and decompressed (zswap loads and writebacks, zram
    /// reads).
    pages_compressed: u64,
    pages_decompressed: u64,
    wall_seconds: f64,
    pages_compressed_per_second: f64,
    references_per_second: f64,
    cpu_seconds: Option<f64>,
    pages_compressed_per_cpu_second: Option<f64>,
    peak_rss_bytes: Option<u64>,
}

/// The `host-zswap` and `host-zram` presets (memtouch, 192 MiB in a 64 MiB cgroup, sparse page contents;
/// quick: 30,000 accesses instead of 300,000): pages compressed per wall second through the whole model.
fn compressed_bench(quick: bool) -> Result<CompressedBenchResult> {
    let presets = vec!["host-zswap", "host-zram"];
    let (mut refs, mut comp, mut decomp) = (0u64, 0u64, 0u64);
    let cpu0 = cpu_seconds();
    let t0 = std::time::Instant::now();
    for name in &presets {
        let mut cfg = crate::config::SimConfig::from_toml(crate::presets::preset(name)?.toml)?;
        if quick {
            for p in &mut cfg.workload.processes {
                if let nandstack_host::config::WorkloadConfig::Memtouch(m) = &mut p.workload {
                    m.ops = 30_000;
                }
            }
        }
        let r = crate::run::run(cfg, &crate::RunOptions::default(), &mut |_| true)?;
        let h = r.host.as_ref().expect("host programs have a host section");
        let n = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
        refs += n(&h["references"]);
        let z = &h["zswap"];
        comp += n(&z["zswpout"]) + n(&z["reject_compress_poor"]) + n(&z["reject_alloc_fail"]);
        decomp += n(&z["zswpin"]) + n(&z["zswpwb"]);
        if h["swap"]["backend"]["kind"] == "zram" {
            let mm = &h["swap"]["backend"]["mm_stat"];
            comp += n(&h["swap"]["pswpout"]) - n(&mm["same_pages"]).min(n(&h["swap"]["pswpout"]));
            decomp += n(&h["swap"]["pswpin"]);
        }
    }
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu0.and_then(|c0| cpu_seconds().map(|c| c - c0));
    Ok(CompressedBenchResult {
        name: "compressed",
        description:
            "host-zswap (lzo) and host-zram (lzo-rle) presets: memtouch's sparse pages compressed \
                      and decompressed for real on every swap-out and swap-in"
                .into(),
        presets,
        references: refs,
        pages_compressed: comp,
        pages_decompressed: decomp,
        wall_seconds: wall,
        pages_compressed_per_second: comp as f64 / wall,
        references_per_second: refs as f64 / wall,
        cpu_seconds: cpu,
        pages_compressed_per_cpu_second: cpu.map(|c| comp as f64 / c),
        peak_rss_bytes: peak_rss_bytes(),
    })
}

/// One benchmark's result, serialized as its own fields (in declaration order).
#[derive(Serialize)]
#[serde(untagged)]
enum AnyBench {
    Block(BenchResult),
    Hybrid(HybridBenchResult),
    Compressed(CompressedBenchResult),
    Host(serde_json::Value),
}

/// Run the benchmark `name` (`ftl`, `timed`, `timed_queued`, `hybrid`, `compressed`, `host` or `all`:
/// every one but `timed_queued`); a JSON array of results.
pub fn bench_json(name: &str, quick: bool) -> Result<String> {
    let mut out = Vec::new();
    if matches!(name, "ftl" | "all") {
        out.push(AnyBench::Block(ftl_bench(quick)?));
    }
    if matches!(name, "timed" | "all") {
        out.push(AnyBench::Block(timed_bench(quick, false)?));
    }
    // Not in `all`: the queued controller's figures (docs/benchmarks.md).
    if name == "timed_queued" {
        out.push(AnyBench::Block(timed_bench(quick, true)?));
    }
    if matches!(name, "hybrid" | "all") {
        out.push(AnyBench::Hybrid(hybrid_bench(quick)?));
    }
    if matches!(name, "compressed" | "all") {
        out.push(AnyBench::Compressed(compressed_bench(quick)?));
    }
    if matches!(name, "host" | "all") {
        out.push(AnyBench::Host(crate::hostrun::bench_host_value(quick)?));
    }
    if out.is_empty() {
        return Err(Error::config(
            "bench",
            format!(
                "unknown benchmark `{name}`; available: ftl, timed, timed_queued, hybrid, compressed, host, all"
            ),
        ));
    }
    Ok(serde_json::to_string_pretty(&out).expect("serializes"))
}
