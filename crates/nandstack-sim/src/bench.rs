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
    write_latency_us_mean: Option<f64>,
    simulated_iops: Option<f64>,
    /// CPU seconds of the measured phase and flash programs per CPU second (robust to a loaded machine).
    cpu_seconds: Option<f64>,
    flash_programs_per_cpu_second: Option<f64>,
    host_writes_per_cpu_second: Option<f64>,
}

/// CPU time (user + system) this process has used so far, in seconds (Linux: /proc/self/stat), if known.
/// Unlike wall time it does not grow while other processes hold the cores.
pub fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th fields.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0) // USER_HZ is 100 on Linux
}

/// Peak resident set size of this process (Linux: VmHWM), if known.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// 64 GiB device of 4 KiB pages (8 ch × 4 chips × 2 dies × 2 planes × 1024 blocks × 128 pages), OP 12%,
/// greedy GC; `quick` shrinks it to 512 MiB (2 × 1 × 1 × 2 × 256 blocks).
fn device_toml(quick: bool) -> String {
    let (channels, chips, dies, blocks) = if quick {
        (2, 1, 1, 256)
    } else {
        (8, 4, 2, 1024)
    };
    format!(
        "seed = 1\n[device.geometry]\nchannels = {channels}\nchips_per_channel = {chips}\ndies_per_chip = {dies}\n\
         planes_per_die = 2\nblocks_per_plane = {blocks}\npages_per_block = 128\npage_size_bytes = 4096\n\
         [ftl]\nover_provisioning = 0.12\n"
    )
}

fn result(name: &'static str, description: String, r: &crate::Report) -> BenchResult {
    let pages = (r.device.blocks as u64 * r.device.pages_per_block as u64) as f64;
    BenchResult {
        name,
        description,
        device_raw_bytes: r.device.raw_bytes,
        over_provisioning: r.device.over_provisioning,
        measured_host_writes: r.host_write_requests,
        waf: r.waf,
        wall_seconds: r.wall_seconds,
        host_writes_per_second: r.host_write_requests as f64 / r.wall_seconds,
        flash_programs_per_second: r.wall_flash_programs_per_second,
        metadata_bytes_per_physical_page: r.metadata_bytes as f64 / pages,
        peak_rss_bytes: peak_rss_bytes(),
        write_latency_us_mean: r.write_latency_us.as_ref().map(|p| p.mean),
        simulated_iops: r.iops,
        cpu_seconds: r.wall_cpu_seconds,
        flash_programs_per_cpu_second: r.wall_cpu_seconds.map(|c| r.flash_program_pages as f64 / c),
        host_writes_per_cpu_second: r.wall_cpu_seconds.map(|c| r.host_write_requests as f64 / c),
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
    Ok(result(
        "ftl",
        "FTL only (no timing): 4 KiB uniform random writes, steady state, greedy GC, OP 12%".into(),
        &r,
    ))
}

/// Timing on, closed loop at queue depth 32, light GC: half the logical space filled and written at
/// random (the other half stays empty, so victims are mostly invalid).
fn timed_bench(quick: bool) -> Result<BenchResult> {
    let requests = if quick { 400_000 } else { 20_000_000 };
    let toml = format!(
        "{}[host]\nqueue_depth = 32\n[precondition]\nfill_fraction = 0.5\nwarmup_capacity_multiples = 0.5\n\
         [workload]\npattern = \"uniform\"\nfootprint_fraction = 0.5\nrequests = {requests}\n",
        device_toml(quick)
    );
    let r = run_toml(&toml, &RunOptions::default())?;
    Ok(result(
        "timed",
        "timing on, closed loop QD 32: 4 KiB uniform random writes over half the space (light GC), greedy, OP 12%".into(),
        &r,
    ))
}

/// Run the benchmark `name` (`ftl`, `timed` or `all`); a JSON array of results.
pub fn bench_json(name: &str, quick: bool) -> Result<String> {
    let r = match name {
        "ftl" => vec![ftl_bench(quick)?],
        "timed" => vec![timed_bench(quick)?],
        "all" => vec![ftl_bench(quick)?, timed_bench(quick)?],
        other => {
            return Err(Error::config(
                "bench",
                format!("unknown benchmark `{other}`; available: ftl, timed, all"),
            ))
        }
    };
    Ok(serde_json::to_string_pretty(&r).expect("serializes"))
}
