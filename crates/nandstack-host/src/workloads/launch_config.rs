//! `type = "launch"`: the app launch cycle of the ezswap paper (§IV-A): apps launched one after another,
//! each run for a while, the whole list repeated; every page has bytes from a per-app content mix.

use nandstack_core::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One app: its memory and what its pages hold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchApp {
    /// Name (for the report).
    pub name: String,
    /// Anonymous memory (heap), MiB at scale 1.
    pub anon_mib: f64,
    /// File-backed memory (code, libraries, resources, media; mapped read-only), MiB at scale 1.
    pub file_mib: f64,
    /// Content mix of the anonymous pages: `CLASS:PCT,…` with classes `zero`, `sparse` (a zero page
    /// with every 64th word set: a mostly empty heap page), `random` (already-compressed data) and the
    /// Silesia files `dickens`, `mr`, `nci`, `ooffice`, `osdb`, `reymont`, `xml`; percentages sum to 100.
    pub anon_content: String,
    /// Content mix of the file pages, same syntax.
    pub file_content: String,
}

/// The launch cycle. Defaults: the 14 apps of Table 2 (`apps` unset), 5 repetitions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchConfig {
    /// The first `app_count` apps of the list run (the paper: 8–16 of Table 2 + Excel, 2048).
    /// Default 14.
    #[serde(default = "d_count")]
    pub app_count: u32,
    /// Passes over the apps. Default 5.
    #[serde(default = "d_reps")]
    pub repetitions: u32,
    /// Launches of the first `warmup_repetitions` passes are not timed (no request markers). Default 1.
    #[serde(default = "d_warm")]
    pub warmup_repetitions: u32,
    /// Sizes of every app are multiplied by this. Default 0.125.
    #[serde(default = "d_scale")]
    pub scale: f64,
    /// Fraction of an app's file pages read at launch (in file order, as the loader maps code and
    /// resources); the rest are reached only while it runs. Default 0.5.
    #[serde(default = "d_launch_file")]
    pub launch_file_fraction: f64,
    /// Fraction of an app's anonymous pages touched at launch (written the first time, read after).
    /// Default 0.5.
    #[serde(default = "d_launch_anon")]
    pub launch_anon_fraction: f64,
    /// The app's own CPU work in each launch, ms at scale 1 (multiplied by `scale`, as the sizes
    /// are, so CPU and I/O keep their proportion): the time from launch to first frame that is not
    /// spent in faults (binding, inflating views, the first draw). Spread evenly over the launch's
    /// references, so writebacks and reads in flight overlap it as they would. Default 0 (a launch
    /// is only its faults). Left out of the resolved configuration while 0, so configurations
    /// without it keep their hashes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub startup_cpu_ms: f64,
    /// How long an app runs after its launch, simulated ms (the paper: 30 s). Default 1000.
    #[serde(default = "d_run")]
    pub run_ms: f64,
    /// References of the running app per simulated ms. Default 20.
    #[serde(default = "d_refs")]
    pub refs_per_ms: u32,
    /// Share of the running app's references that go to anonymous pages. Default 0.4.
    #[serde(default = "d_anon_share")]
    pub anon_share: f64,
    /// Fraction of anonymous references that write. Default 0.2.
    #[serde(default = "d_write")]
    pub write_ratio: f64,
    /// Zipf exponent of page popularity inside an app. Default 0.8.
    #[serde(default = "d_theta")]
    pub zipf_theta: f64,
    /// The apps (at least `app_count`). Default: Table 2's 14 then Excel and 2048 (docs/ezswap.md).
    #[serde(default)]
    pub apps: Option<Vec<LaunchApp>>,
    /// Folder holding `silesia_NAME.zip`. Default: `$NANDSTACK_CORPUS_DIR`, else
    /// `../shared/traces/compress`.
    #[serde(default)]
    pub corpus_dir: Option<String>,
}
fn is_zero(v: &f64) -> bool {
    *v == 0.0
}
fn d_count() -> u32 {
    14
}
fn d_reps() -> u32 {
    5
}
fn d_warm() -> u32 {
    1
}
fn d_scale() -> f64 {
    0.125
}
fn d_launch_file() -> f64 {
    0.5
}
fn d_launch_anon() -> f64 {
    0.5
}
fn d_run() -> f64 {
    1000.0
}
fn d_refs() -> u32 {
    20
}
fn d_anon_share() -> f64 {
    0.4
}
fn d_write() -> f64 {
    0.2
}
fn d_theta() -> f64 {
    0.8
}

impl Default for LaunchConfig {
    fn default() -> Self {
        LaunchConfig {
            app_count: d_count(),
            repetitions: d_reps(),
            warmup_repetitions: d_warm(),
            scale: d_scale(),
            launch_file_fraction: d_launch_file(),
            launch_anon_fraction: d_launch_anon(),
            startup_cpu_ms: 0.0,
            run_ms: d_run(),
            refs_per_ms: d_refs(),
            anon_share: d_anon_share(),
            write_ratio: d_write(),
            zipf_theta: d_theta(),
            apps: None,
            corpus_dir: None,
        }
    }
}

/// The content classes of a mix.
pub const CLASSES: [&str; 10] = [
    "zero", "sparse", "random", "dickens", "mr", "nci", "ooffice", "osdb", "reymont", "xml",
];

/// Parse `CLASS:PCT,…` into percentages per [`CLASSES`] entry (summing to 100).
pub fn parse_mix(key: &str, text: &str) -> Result<[u32; CLASSES.len()]> {
    let mut pct = [0u32; CLASSES.len()];
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, v) = part
            .split_once(':')
            .ok_or_else(|| Error::config(key, format!("`{part}`: expected CLASS:PCT")))?;
        let i = CLASSES
            .iter()
            .position(|&c| c == name.trim())
            .ok_or_else(|| {
                Error::config(
                    key,
                    format!("`{name}`: expected one of {}", CLASSES.join(" | ")),
                )
            })?;
        pct[i] += v
            .trim()
            .parse::<u32>()
            .map_err(|_| Error::config(key, format!("`{v}`: a whole percentage")))?;
    }
    let total: u32 = pct.iter().sum();
    if total != 100 {
        return Err(Error::config(
            key,
            format!("percentages sum to {total}, not 100"),
        ));
    }
    Ok(pct)
}

impl LaunchConfig {
    pub fn validate(&self, key: &str) -> Result<()> {
        let k = |f: &str| format!("{key}.{f}");
        let apps = self.apps.clone().unwrap_or_else(super::launch::table2);
        if self.app_count == 0 || self.app_count as usize > apps.len() {
            return Err(Error::config(
                k("app_count"),
                format!(
                    "is {}: must be in [1, {}] (the apps listed)",
                    self.app_count,
                    apps.len()
                ),
            ));
        }
        if self.repetitions == 0 || self.repetitions > 1000 {
            return Err(Error::config(k("repetitions"), "must be in [1, 1000]"));
        }
        if self.warmup_repetitions > self.repetitions {
            return Err(Error::config(
                k("warmup_repetitions"),
                "more than the repetitions",
            ));
        }
        for (f, v) in [
            ("launch_file_fraction", self.launch_file_fraction),
            ("launch_anon_fraction", self.launch_anon_fraction),
            ("anon_share", self.anon_share),
            ("write_ratio", self.write_ratio),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(Error::config(k(f), format!("is {v}: must be in [0, 1]")));
            }
        }
        if !(self.scale.is_finite() && self.scale > 0.0 && self.scale <= 16.0) {
            return Err(Error::config(k("scale"), "must be in (0, 16]"));
        }
        if !(self.startup_cpu_ms.is_finite() && (0.0..=60_000.0).contains(&self.startup_cpu_ms)) {
            return Err(Error::config(
                k("startup_cpu_ms"),
                format!("is {}: must be in [0, 60000] ms", self.startup_cpu_ms),
            ));
        }
        if !(self.run_ms.is_finite() && (0.0..1e9).contains(&self.run_ms)) {
            return Err(Error::config(k("run_ms"), "must be in [0, 1e9)"));
        }
        if !(self.zipf_theta.is_finite() && self.zipf_theta > 0.0 && self.zipf_theta < 10.0) {
            return Err(Error::config(k("zipf_theta"), "must be in (0, 10)"));
        }
        for (i, a) in apps.iter().enumerate() {
            for (f, v) in [("anon_mib", a.anon_mib), ("file_mib", a.file_mib)] {
                if !(v.is_finite() && v >= 0.0 && v * self.scale < 65_536.0) {
                    return Err(Error::config(
                        k(&format!("apps[{i}].{f}")),
                        "must be in [0, 64 GiB / scale)",
                    ));
                }
            }
            parse_mix(&k(&format!("apps[{i}].anon_content")), &a.anon_content)?;
            parse_mix(&k(&format!("apps[{i}].file_content")), &a.file_content)?;
        }
        Ok(())
    }
}
