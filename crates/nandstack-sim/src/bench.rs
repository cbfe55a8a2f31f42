//! Built-in benchmarks (`nandstack bench`): simulated operations per wall-clock second and peak memory.
//! Benchmarks are measurements, not tests: nothing here asserts a speed.

use nandstack_core::{Error, Result};
use serde::Serialize;

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
}

/// Peak resident set size of this process (Linux: VmHWM), if known.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// FTL-only steady state: 4 KiB uniform random writes, greedy GC, OP 12%, on a 64 GiB device of 4 KiB
/// pages (128 planes × 1024 blocks × 128 pages), filled sequentially and warmed up with one capacity of
/// random writes; the measured phase writes twice the logical capacity. `quick` uses a 512 MiB device.
fn ftl_bench(quick: bool) -> Result<BenchResult> {
    // quick: 2 channels × 1 chip × 1 die × 2 planes × 256 blocks = 512 MiB.
    let (chips, dies, blocks, requests) = if quick { (1, 1, 256, 400_000) } else { (4, 2, 1024, 30_000_000) };
    let channels = if quick { 2 } else { 8 };
    let toml = format!(
        "seed = 1\n[device.geometry]\nchannels = {channels}\nchips_per_channel = {chips}\ndies_per_chip = {dies}\n\
         planes_per_die = 2\nblocks_per_plane = {blocks}\npages_per_block = 128\npage_size_bytes = 4096\n\
         [ftl]\nover_provisioning = 0.12\n[precondition]\nwarmup_capacity_multiples = 1.0\n\
         [workload]\npattern = \"uniform\"\nrequests = {requests}\n"
    );
    let r = run_toml(&toml, &RunOptions::default())?;
    let pages = (r.device.blocks as u64 * r.device.pages_per_block as u64) as f64;
    Ok(BenchResult {
        name: "ftl",
        description: "FTL only (no timing): 4 KiB uniform random writes, steady state, greedy GC, OP 12%".into(),
        device_raw_bytes: r.device.raw_bytes,
        over_provisioning: 0.12,
        measured_host_writes: r.host_write_requests,
        waf: r.waf,
        wall_seconds: r.wall_seconds,
        host_writes_per_second: r.host_write_requests as f64 / r.wall_seconds,
        flash_programs_per_second: r.wall_flash_programs_per_second,
        metadata_bytes_per_physical_page: r.metadata_bytes as f64 / pages,
        peak_rss_bytes: peak_rss_bytes(),
    })
}

/// Run the benchmark `name` ("ftl"); JSON result.
pub fn bench_json(name: &str, quick: bool) -> Result<String> {
    let r = match name {
        "ftl" => ftl_bench(quick)?,
        other => return Err(Error::config("bench", format!("unknown benchmark `{other}`; available: ftl"))),
    };
    Ok(serde_json::to_string_pretty(&r).expect("serializes"))
}
