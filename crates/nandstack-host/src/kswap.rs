//! Real-kernel swap captures (`../shared/traces/kernel-swap/`): read a capture (its JSON description and
//! its block requests), build the host config that runs the same program description, and summarise
//! both sides the same way for comparison.
//!
//! A capture's JSON names the command (`memtouch PAGES OPS PATTERN WRITE_PCT SEED`), the cgroup-v1
//! memory limit, the swap size and the discard mode (`capture-swap.sh`); its CSV lists every request
//! the kernel issued to the swap device (`time_s,op,sector,sectors,comm`, 512-byte sectors).

use std::fs::File;
use std::io::BufRead;
use std::path::Path;

use nandstack_core::{Error, Result};
use serde_json::{json, Value};

use crate::config::HostSimConfig;
use crate::sim::Sim;

/// What a capture (or a model run) did to the swap device.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SwapSummary {
    /// Pages swapped in / out (kernel: the `pswpin` / `pswpout` deltas).
    pub pswpin: u64,
    pub pswpout: u64,
    pub read_requests: u64,
    pub write_requests: u64,
    pub discard_requests: u64,
    pub read_pages: u64,
    pub write_pages: u64,
    pub discard_pages: u64,
    /// Requests of exactly one page.
    pub single_page_reads: u64,
    pub single_page_writes: u64,
    /// Highest slot written (how far into the partition swap reached; slot 0 is the header).
    pub highest_slot: u64,
}

impl SwapSummary {
    pub fn read_request_pages_mean(&self) -> f64 {
        self.read_pages as f64 / self.read_requests.max(1) as f64
    }
    pub fn write_request_pages_mean(&self) -> f64 {
        self.write_pages as f64 / self.write_requests.max(1) as f64
    }
    /// Fraction of read+write requests that are reads.
    pub fn read_share(&self) -> f64 {
        self.read_requests as f64 / (self.read_requests + self.write_requests).max(1) as f64
    }
}

/// One capture.
#[derive(Clone, Debug)]
pub struct Capture {
    pub name: String,
    pub pages: u64,
    pub ops: u64,
    pub pattern: String,
    pub write_pct: u32,
    pub seed: u64,
    pub limit_mib: u64,
    pub swap_mib: u64,
    pub discard: bool,
    pub kernel: SwapSummary,
}

fn io(path: &Path, e: std::io::Error) -> Error {
    Error::Io {
        path: path.display().to_string(),
        source: e,
    }
}

/// Load capture `name` from `dir` (`NAME.json` and `NAME.csv.gz`).
pub fn load(dir: &Path, name: &str) -> Result<Capture> {
    let jp = dir.join(format!("{name}.json"));
    let text = std::fs::read_to_string(&jp).map_err(|e| io(&jp, e))?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| Error::config(jp.display().to_string(), e.to_string()))?;
    let bad = |k: &str| Error::config(format!("{}: {k}", jp.display()), "missing or malformed");
    let cmd: Vec<&str> = v["command"]
        .as_array()
        .ok_or_else(|| bad("command"))?
        .iter()
        .filter_map(|x| x.as_str())
        .collect();
    if cmd.len() != 6 || cmd[0] != "memtouch" {
        return Err(bad("command (memtouch PAGES OPS PATTERN WRITE_PCT SEED)"));
    }
    let num = |s: &str, k: &str| s.parse::<u64>().map_err(|_| bad(k));
    let vm = &v["vmstat_delta_system_wide"];
    let mut kernel = SwapSummary {
        pswpin: vm["pswpin"].as_u64().ok_or_else(|| bad("pswpin"))?,
        pswpout: vm["pswpout"].as_u64().ok_or_else(|| bad("pswpout"))?,
        ..SwapSummary::default()
    };
    let cp = dir.join(format!("{name}.csv.gz"));
    let f = File::open(&cp).map_err(|e| io(&cp, e))?;
    let (_, r) = nandstack_workload::trace::decompress(f).map_err(|e| io(&cp, e))?;
    for (i, line) in r.lines().enumerate() {
        let line = line.map_err(|e| io(&cp, e))?;
        if i == 0 {
            continue;
        }
        let c: Vec<&str> = line.split(',').collect();
        if c.len() < 4 {
            continue;
        }
        let pages = c[3].parse::<u64>().unwrap_or(0) / 8;
        let first = c[2].parse::<u64>().unwrap_or(0) / 8;
        match c[1] {
            "R" => {
                kernel.read_requests += 1;
                kernel.read_pages += pages;
                kernel.single_page_reads += (pages == 1) as u64;
            }
            "W" => {
                kernel.highest_slot = kernel.highest_slot.max(first + pages.max(1) - 1);
                kernel.write_requests += 1;
                kernel.write_pages += pages;
                kernel.single_page_writes += (pages == 1) as u64;
            }
            "D" => {
                kernel.discard_requests += 1;
                kernel.discard_pages += pages;
            }
            _ => {}
        }
    }
    Ok(Capture {
        name: name.into(),
        pages: num(cmd[1], "PAGES")?,
        ops: num(cmd[2], "OPS")?,
        pattern: cmd[3].into(),
        write_pct: num(cmd[4], "WRITE_PCT")? as u32,
        seed: num(cmd[5], "SEED")?,
        limit_mib: v["memory_limit_mb"]
            .as_u64()
            .ok_or_else(|| bad("memory_limit_mb"))?,
        swap_mib: v["swap_mb"].as_u64().ok_or_else(|| bad("swap_mb"))?,
        discard: v["discard"].as_str() == Some("pages"),
        kernel,
    })
}

/// The host config that runs the capture's program under the capture's setup: a cgroup-v1 memory
/// limit, swap of the same size (`swapon`, with `--discard=pages` when the capture used it), Linux
/// defaults otherwise (swappiness 60, page-cluster 3, VMA readahead on a non-rotational device). The
/// captures swapped to a loop device over tmpfs; a fast SSD stands in for it: the default geometry
/// (16 planes) in SLC mode (tR 30 µs, tPROG 160 µs: about 400 000 pages/s of writes, above the
/// 100 000–135 000 pages/s the captures reached while filling).
pub fn config(c: &Capture) -> HostSimConfig {
    HostSimConfig::from_json(&config_json(c).to_string()).expect("capture config is valid")
}

/// [`config`] as JSON (to derive variants).
pub fn config_json(c: &Capture) -> Value {
    json!({
        "seed": 1,
        "host": {
            "ram_mib": 2048,
            "cpus": 2,
            "swap": {"size_mib": c.swap_mib, "discard": {"mode": if c.discard { "cluster" } else { "off" }},
                     "backend": {"kind": "loop"}},
            "cgroups": [{"name": "capswap", "limit_mib": c.limit_mib}],
        },
        "processes": [{"name": "memtouch", "cgroup": "capswap", "workload": {
            "type": "memtouch", "pages": c.pages, "ops": c.ops, "pattern": c.pattern,
            "write_pct": c.write_pct, "seed": c.seed}}],
        "device": {"geometry": {"blocks_per_plane": 128, "cell_mode": "slc"}},
        "run": {"series_interval_ms": 1000.0},
    })
}

/// The model's side of the comparison, from a finished run.
pub fn model_summary(sim: &Sim) -> SwapSummary {
    let s = &sim.host.stats;
    let c = &sim.host.io.counters;
    SwapSummary {
        pswpin: s.pswpin,
        pswpout: s.pswpout,
        read_requests: c.requests[0][0],
        write_requests: c.requests[0][1],
        discard_requests: c.requests[0][2],
        read_pages: c.pages[0][0],
        write_pages: c.pages[0][1],
        discard_pages: c.pages[0][2],
        single_page_reads: c.sizes[0][1],
        single_page_writes: c.sizes[1][1],
        highest_slot: sim.host.swap.stats.max_slot as u64,
    }
}

/// The captures shipped in `../shared/traces/kernel-swap/`.
pub const CAPTURES: [&str; 6] = [
    "kswap_uniform_w50",
    "kswap_normal_w50",
    "kswap_hot_w100",
    "kswap_uniform_r100",
    "kswap_seq_w100",
    "kswap_uniform_w100_discard",
];
