//! Real-kernel compressed-swap captures (`../shared/traces/kernel-zswap/`, `../shared/traces/kernel-zram/`):
//! read a capture's JSON (`capture-zswap.sh`, `capture-zram.sh`), build the host config that runs the same
//! program with the same page contents under the same setup, and name both sides' figures the same way.
//!
//! Figures (the names): zswap — `zswpout, zswpin, zswpwb, pswpout, pswpin, swpout_zero,
//! swpin_zero, stored_pages, pool_total_size, stored_incompressible_pages, pool_limit_hit`; zram —
//! `pswpout, pswpin, swpout_zero, swpin_zero, orig_data_size, compr_data_size, mem_used_total,
//! huge_pages, notify_free`; both — `pool_bytes_per_stored_page`. A capture made before the recorder
//! read `swpout_zero`/`swpin_zero` lacks them; its figures are those it has.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use nandstack_core::{Error, Result};
use serde_json::{json, Value};

use nandstack_sim::hostrun::Sim;
use nandstack_sim::SimConfig;

/// Which kernel mechanism a capture recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Zswap,
    Zram,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Zswap => "zswap",
            Kind::Zram => "zram",
        }
    }

    /// The figures compared, in report order.
    pub fn figures(self) -> &'static [&'static str] {
        match self {
            Kind::Zswap => &ZSWAP_FIGURES,
            Kind::Zram => &ZRAM_FIGURES,
        }
    }

    /// Folder name under `../shared/traces/`.
    pub fn folder(self) -> &'static str {
        match self {
            Kind::Zswap => "kernel-zswap",
            Kind::Zram => "kernel-zram",
        }
    }
}

pub const ZSWAP_FIGURES: [&str; 12] = [
    "zswpout",
    "zswpin",
    "zswpwb",
    "pswpout",
    "pswpin",
    "swpout_zero",
    "swpin_zero",
    "stored_pages",
    "pool_total_size",
    "stored_incompressible_pages",
    "pool_limit_hit",
    "pool_bytes_per_stored_page",
];

pub const ZRAM_FIGURES: [&str; 10] = [
    "pswpout",
    "pswpin",
    "swpout_zero",
    "swpin_zero",
    "orig_data_size",
    "compr_data_size",
    "mem_used_total",
    "huge_pages",
    "notify_free",
    "pool_bytes_per_stored_page",
];

/// The figures in bytes (their floor in the tolerance is 1000 pages of 4 KiB).
pub const BYTE_FIGURES: [&str; 4] = [
    "pool_total_size",
    "orig_data_size",
    "compr_data_size",
    "mem_used_total",
];

/// Whether `figure` is in bytes ([`BYTE_FIGURES`]).
pub fn is_bytes(figure: &str) -> bool {
    BYTE_FIGURES.contains(&figure)
}

/// The figure lists as JSON, `{"zswap": [...], "zram": [...], "bytes": [...]}`: the Python experiments
/// `kernel-zswap` and `kernel-zram` read them from here (written once).
pub fn figures_json() -> serde_json::Value {
    json!({"zswap": ZSWAP_FIGURES, "zram": ZRAM_FIGURES, "bytes": BYTE_FIGURES})
}

/// One capture (one repetition of a program).
#[derive(Clone, Debug)]
pub struct Capture {
    /// File stem, e.g. `kzswap_hot_w30_xml_deflate_r1`.
    pub name: String,
    /// The program: the name without `_rN`.
    pub program: String,
    pub kind: Kind,
    /// memtouch's arguments after the program name: PAGES OPS PATTERN WRITE_PCT SEED [CONTENT].
    pub args: Vec<String>,
    pub limit_mib: u64,
    /// Swap size (zswap: the loop device; zram: `disksize`), MiB.
    pub swap_mib: u64,
    pub compressor: String,
    pub max_pool_percent: u64,
    pub accept_threshold_percent: u64,
    pub shrinker_enabled: bool,
    pub page_cluster: u64,
    pub total_ram_bytes: u64,
    /// The cgroup's inactive and active anon pages at the end (`cgroup_memory_stat_at_end`), when
    /// recorded.
    pub lru_end_pages: Option<(u64, u64)>,
    /// The kernel's figures.
    pub kernel: BTreeMap<String, f64>,
}

fn bad(path: &Path, what: &str) -> Error {
    Error::config(
        format!("{}: {what}", path.display()),
        "missing or malformed",
    )
}

/// Load one capture JSON (`NAME_rN.json` of either folder).
pub fn load(path: &Path) -> Result<Capture> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
        path: path.display().to_string(),
        source: e,
    })?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| Error::config(path.display().to_string(), e.to_string()))?;
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or_else(|| bad(path, "file name"))?
        .to_string();
    let program = match name.rsplit_once("_r") {
        Some((p, r)) if r.chars().all(|c| c.is_ascii_digit()) && !r.is_empty() => p.to_string(),
        _ => name.clone(),
    };
    let cmd: Vec<String> = v["command"]
        .as_array()
        .ok_or_else(|| bad(path, "command"))?
        .iter()
        .filter_map(|x| x.as_str().map(str::to_string))
        .collect();
    if !(cmd.len() == 6 || cmd.len() == 7) || !cmd[0].ends_with("memtouch") {
        return Err(bad(
            path,
            "command (memtouch PAGES OPS PATTERN WRITE_PCT SEED [CONTENT])",
        ));
    }
    let u = |x: &Value, k: &str| x.as_u64().ok_or_else(|| bad(path, k));
    let vm = &v["vmstat_delta_system_wide"];
    let mut kernel = BTreeMap::new();
    for k in ["pswpin", "pswpout", "swpout_zero", "swpin_zero"] {
        if let Some(x) = vm[k].as_u64() {
            kernel.insert(k.to_string(), x as f64);
        }
    }
    let kind = if v.get("zswap").is_some() {
        Kind::Zswap
    } else if v.get("zram").is_some() {
        Kind::Zram
    } else {
        return Err(bad(path, "zswap or zram section"));
    };
    let section = &v[kind.name()];
    let mut c = Capture {
        name,
        program,
        kind,
        args: cmd[1..].to_vec(),
        limit_mib: u(&v["memory_limit_mb"], "memory_limit_mb")?,
        swap_mib: 0,
        compressor: String::new(),
        max_pool_percent: 0,
        accept_threshold_percent: 0,
        shrinker_enabled: false,
        page_cluster: u(&v["page_cluster"], "page_cluster")?,
        total_ram_bytes: u(&section["total_ram_bytes"], "total_ram_bytes")?,
        lru_end_pages: None,
        kernel: BTreeMap::new(),
    };
    let stat = &v["cgroup_memory_stat_at_end"];
    let pages = |k: &str| stat[k].as_u64().map(|b| b / 4096);
    c.lru_end_pages = pages("inactive_anon").zip(pages("active_anon"));
    let text = |x: &Value, k: &str| -> Result<String> {
        x.as_str().map(str::to_string).ok_or_else(|| bad(path, k))
    };
    // (figure, value) pairs read from the kind's sections, then the derived per-page figure.
    let (read, stored, pool): (Vec<(&str, &Value)>, f64, &str) = match kind {
        Kind::Zswap => {
            c.swap_mib = u(&v["swap_mb"], "swap_mb")?;
            c.compressor = text(&section["compressor"], "zswap.compressor")?;
            c.max_pool_percent = u(&section["max_pool_percent"], "max_pool_percent")?;
            c.accept_threshold_percent = u(
                &section["accept_threshold_percent"],
                "accept_threshold_percent",
            )?;
            c.shrinker_enabled = section["shrinker_enabled"].as_bool().unwrap_or(false);
            let end = &v["zswap_at_end"];
            let read = vec![
                ("zswpout", &vm["zswpout"]),
                ("zswpin", &vm["zswpin"]),
                ("zswpwb", &vm["zswpwb"]),
                ("stored_pages", &end["stored_pages"]),
                ("pool_total_size", &end["pool_total_size"]),
                (
                    "stored_incompressible_pages",
                    &end["stored_incompressible_pages"],
                ),
                (
                    "pool_limit_hit",
                    &v["zswap_counters_delta"]["pool_limit_hit"],
                ),
            ];
            (
                read,
                u(&end["stored_pages"], "stored_pages")? as f64,
                "pool_total_size",
            )
        }
        Kind::Zram => {
            c.swap_mib = u(&section["disksize_mb"], "disksize_mb")?;
            c.compressor = text(&section["comp_algorithm"], "zram.comp_algorithm")?;
            let mm = &v["mm_stat_at_end"];
            let read = vec![
                ("orig_data_size", &mm["orig_data_size"]),
                ("compr_data_size", &mm["compr_data_size"]),
                ("mem_used_total", &mm["mem_used_total"]),
                ("huge_pages", &mm["huge_pages"]),
                ("notify_free", &v["io_stat_delta"]["notify_free"]),
            ];
            let orig = u(&mm["orig_data_size"], "orig_data_size")?;
            (read, orig as f64 / 4096.0, "mem_used_total")
        }
    };
    for (k, x) in read {
        kernel.insert(k.to_string(), u(x, k)? as f64);
    }
    kernel.insert(
        "pool_bytes_per_stored_page".into(),
        kernel[pool] / stored.max(1.0),
    );
    c.kernel = kernel;
    Ok(c)
}

/// Every capture JSON in `dir`, sorted by name.
pub fn load_dir(dir: &Path) -> Result<Vec<Capture>> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::Io {
        path: dir.display().to_string(),
        source: e,
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths.iter().map(|p| load(p)).collect()
}

/// Every capture in `dir` grouped by program (the repetitions `_r1`, `_r2`, … of one program together),
/// programs and repetitions sorted by name.
pub fn programs(dir: &Path) -> Result<BTreeMap<String, Vec<Capture>>> {
    let mut out: BTreeMap<String, Vec<Capture>> = BTreeMap::new();
    for c in load_dir(dir)? {
        out.entry(c.program.clone()).or_default().push(c);
    }
    Ok(out)
}

/// The host config running capture `c`'s program under its setup: a cgroup-v1 memory limit, the
/// machine's RAM (zswap's pool limit is a percentage of it), 2 CPUs, `vm.page-cluster` as recorded, and
/// either swap on a block device with zswap in front (zsmalloc, the recorded compressor and limits) or
/// zram of the recorded `disksize`; the Silesia files from `corpus_dir`. The block device stands in for
/// the loop device over tmpfs that the zswap captures swapped to: µs-scale reads and writes
/// ([`LOOP_DEVICE_US`]). Everything else is a Linux default; nothing is fitted.
pub fn config(c: &Capture, corpus_dir: &Path) -> Result<SimConfig> {
    config_patched(c, corpus_dir, &json!({}))
}

/// [`config`] with `patch` merged in ([`crate::kswap::merge_patch`]: objects key by key, anything else
/// replaced), e.g. another statistics-flush setting.
pub fn config_patched(c: &Capture, corpus_dir: &Path, patch: &Value) -> Result<SimConfig> {
    let a = &c.args;
    let num = |i: usize| -> Result<u64> {
        a.get(i).and_then(|s| s.parse().ok()).ok_or_else(|| {
            Error::config(&c.name, format!("memtouch argument {i} `{:?}`", a.get(i)))
        })
    };
    let mut workload = json!({
        "type": "memtouch", "pages": num(0)?, "ops": num(1)?, "pattern": a[2],
        "write_pct": num(3)?, "seed": num(4)?,
        "corpus_dir": corpus_dir.display().to_string(),
    });
    if let Some(content) = a.get(5) {
        workload["content"] = json!(content);
    }
    let mut swap = json!({"size_mib": c.swap_mib, "discard": {"mode": "off"}});
    let mut host = json!({
        "ram_mib": c.total_ram_bytes >> 20,
        "cpus": 2,
        "readahead": {"page_cluster": c.page_cluster},
        "cgroups": [{"name": "capture", "limit_mib": c.limit_mib}],
        "reclaim": {"stats_flush_ms": crate::kswap::STATS_FLUSH_MS},
    });
    match c.kind {
        Kind::Zswap => {
            host["zswap"] = json!({
                "enabled": true,
                "compressor": c.compressor,
                "zpool": "zsmalloc",
                "max_pool_percent": c.max_pool_percent,
                "accept_threshold_percent": c.accept_threshold_percent,
                "shrinker_enabled": c.shrinker_enabled,
            });
        }
        Kind::Zram => {
            swap["backend"] = json!({"kind": "zram", "comp_algorithm": c.compressor});
        }
    }
    host["swap"] = swap;
    let mut v = json!({
        "seed": 1,
        "host": host,
        "workload": {"kind": "host", "processes": [{"name": "memtouch", "cgroup": "capture", "workload": workload}]},
        "device": {
            "geometry": {"blocks_per_plane": 256, "cell_mode": "slc"},
            "timing": {"read_us": LOOP_DEVICE_US, "program_us": LOOP_DEVICE_US,
                       "channel_mb_per_s": 4000.0, "plane_parallelism": true},
        },
        "run": {"interval_sim_seconds": 1.0},
    });
    crate::kswap::merge_patch(&mut v, patch);
    SimConfig::from_value(v)
}

/// Array time of a read or a write of the block device standing in for the captures' loop device over
/// tmpfs, µs: a RAM copy behind the loop driver's worker, far faster than flash.
pub const LOOP_DEVICE_US: f64 = 5.0;

/// The model's figures after a run, named as the captures' (`kind`'s figures).
pub fn model_figures(sim: &Sim, kind: Kind) -> BTreeMap<String, f64> {
    let h = &sim.host;
    let mut m = BTreeMap::new();
    let mut put = |k: &str, v: f64| {
        m.insert(k.to_string(), v);
    };
    put("pswpin", h.stats.pswpin as f64);
    put("pswpout", h.stats.pswpout as f64);
    put("swpout_zero", h.swap.stats.swpout_zero as f64);
    put("swpin_zero", h.swap.stats.swpin_zero as f64);
    match kind {
        Kind::Zswap => {
            let r = h.store.zswap.as_ref().map_or(json!({}), |z| z.report());
            for k in [
                "zswpout",
                "zswpin",
                "zswpwb",
                "stored_pages",
                "pool_total_size",
                "stored_incompressible_pages",
                "pool_limit_hit",
            ] {
                put(k, r[k].as_f64().unwrap_or(0.0));
            }
            let stored = r["stored_pages"].as_f64().unwrap_or(0.0).max(1.0);
            put(
                "pool_bytes_per_stored_page",
                r["pool_total_size"].as_f64().unwrap_or(0.0) / stored,
            );
        }
        Kind::Zram => {
            let r = h.store.backend.report();
            for k in [
                "orig_data_size",
                "compr_data_size",
                "mem_used_total",
                "huge_pages",
            ] {
                put(k, r["mm_stat"][k].as_f64().unwrap_or(0.0));
            }
            put(
                "notify_free",
                r["io_stat"]["notify_free"].as_f64().unwrap_or(0.0),
            );
            let stored = (r["mm_stat"]["orig_data_size"].as_f64().unwrap_or(0.0) / 4096.0).max(1.0);
            put(
                "pool_bytes_per_stored_page",
                r["mm_stat"]["mem_used_total"].as_f64().unwrap_or(0.0) / stored,
            );
        }
    }
    m
}

/// The kernel's range over repetitions of one program, per figure: (min, max, mean).
pub fn kernel_range(reps: &[Capture]) -> BTreeMap<String, (f64, f64, f64)> {
    let mut out = BTreeMap::new();
    if let Some(first) = reps.first() {
        for &f in first.kind.figures() {
            let v: Vec<f64> = reps
                .iter()
                .filter_map(|c| c.kernel.get(f).copied())
                .collect();
            if v.is_empty() {
                continue;
            }
            let min = v.iter().copied().fold(f64::INFINITY, f64::min);
            let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            out.insert(
                f.to_string(),
                (min, max, v.iter().sum::<f64>() / v.len() as f64),
            );
        }
    }
    out
}

/// The distance of a model value to the kernel's range: how far outside [min, max], relative to
/// the larger of the kernel's mean and 1000 pages (4,096,000 bytes for byte figures; the per-page ratio
/// is relative to its mean).
pub fn distance(figure: &str, model: f64, (min, max, mean): (f64, f64, f64)) -> f64 {
    let outside = (min - model).max(model - max).max(0.0);
    let floor = if figure == "pool_bytes_per_stored_page" {
        0.0
    } else if is_bytes(figure) {
        1000.0 * 4096.0
    } else {
        1000.0
    };
    outside / mean.max(floor).max(1e-9)
}

/// The tolerance of a figure: 20% for zswap's timing-dependent `pswpout`, `pswpin` and `zswpwb`,
/// 10% otherwise.
pub fn tolerance(kind: Kind, figure: &str) -> f64 {
    if kind == Kind::Zswap && matches!(figure, "pswpout" | "pswpin" | "zswpwb") {
        0.20
    } else {
        0.10
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_is_zero_inside_and_relative_outside() {
        let r = (100.0, 200.0, 150.0);
        assert_eq!(distance("pswpin", 150.0, r), 0.0);
        // Below 1000 pages the floor is 1000: 300 − 200 = 100 → 10%.
        assert!((distance("pswpin", 300.0, r) - 0.1).abs() < 1e-12);
        let big = (50_000.0, 60_000.0, 55_000.0);
        assert!((distance("zswpout", 44_500.0, big) - 0.1).abs() < 1e-12);
        assert!((distance("pool_total_size", 0.0, (4096.0, 4096.0, 4096.0)) - 0.001).abs() < 1e-12);
        assert_eq!(tolerance(Kind::Zswap, "zswpwb"), 0.2);
        assert_eq!(tolerance(Kind::Zram, "pswpin"), 0.1);
    }
}
