//! Workload configs: one variant per memory-reference generator, selected by `type`.

use nandstack_core::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A process's memory-reference workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WorkloadConfig {
    /// `tools/memtouch.c` exactly: fill every page in order, then seeded single-word accesses.
    Memtouch(MemtouchConfig),
    /// vm-scalability-like: an anonymous region read/written sequentially or randomly by N threads.
    VmScalability(VmScalConfig),
    /// pmbench-like: page accesses from a normal distribution (σ = working set / 12).
    Pmbench(PmbenchConfig),
    /// YCSB-like key-value requests over a record → page layout (zipf, hotspot or uniform keys).
    Ycsb(YcsbConfig),
    /// memcached ETC-like requests (90% of requests on 10% of keys) over slab-allocated items.
    MemcachedEtc(EtcConfig),
    /// Mobile app switching per Table 2 of the DISS paper (Video/Game/Social/Office).
    Mobile(MobileConfig),
    /// The ezswap paper's app launch cycle (Table 2 apps launched in turn, repeated), with contents.
    Launch(super::launch_config::LaunchConfig),
    /// Replay of a memory-reference trace file (vm `hexaddr R|W`, UCSD `l|s 0xADDR n`, LIRS, nsref).
    Trace(TraceRefsConfig),
    /// A short reference string given in the config (tests, textbook examples).
    Inline(InlineConfig),
}

/// An inline reference string: tokens `R<page>`, `W<page>`, `S<µs>` (sleep), `B`/`E` (request
/// begin/end), separated by white space or commas; pages are 0-based.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InlineConfig {
    /// Size of the anonymous address space, pages.
    pub pages: u32,
    /// The references.
    pub refs: String,
}

/// `memtouch PAGES OPS PATTERN WRITE_PCT SEED [CONTENT]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemtouchConfig {
    /// PAGES: size of the anonymous mapping, 4 KiB pages.
    pub pages: u64,
    /// OPS: accesses after the fill.
    pub ops: u64,
    /// PATTERN: `uniform`, `normal`, `seq` or `hot`.
    pub pattern: MemtouchPattern,
    /// WRITE_PCT: percentage of accesses that are writes, 0–100.
    pub write_pct: u32,
    /// SEED of the program's xorshift64 generator (the program uses `SEED | 1`).
    pub seed: u64,
    /// CONTENT: what the fill writes into each page — `sparse` (every 8th word random), `random`,
    /// `corpus:NAME` (page p = 4 KiB chunk p mod chunks of Silesia file NAME), `mix:PCT:NAME` (per page
    /// random with PCT% probability, else the chunk), `zero:PCT:NAME` (zero-filled with PCT%
    /// probability, else the chunk). The pages' bytes are what zswap and zram compress. Default
    /// `sparse`.
    #[serde(default)]
    pub content: Option<String>,
    /// Folder holding `silesia_NAME.zip` for the corpus modes. Default: `$NANDSTACK_CORPUS_DIR`, else
    /// `../shared/traces/compress` from the working directory or beside the source checkout.
    #[serde(default)]
    pub corpus_dir: Option<String>,
}

/// memtouch's PATTERN.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemtouchPattern {
    Uniform,
    Normal,
    Seq,
    Hot,
}

/// vm-scalability access pattern.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VmScalPattern {
    /// Each thread walks its own slice of the region in order (`case-anon-*-seq`).
    Seq,
    /// Each thread picks uniformly random pages of the whole region (`case-anon-*-rand`).
    Rand,
}

/// vm-scalability-like anonymous-memory workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VmScalConfig {
    /// Size of the anonymous region, MiB.
    pub size_mib: u64,
    /// Threads sharing the region. Default 1.
    #[serde(default = "d_one")]
    pub threads: u32,
    /// `seq` or `rand`. Default `seq`.
    #[serde(default = "d_vmpat")]
    pub pattern: VmScalPattern,
    /// Fraction of accesses that are writes, 0–1. Default 1 (usemem writes).
    #[serde(default = "d_one_f")]
    pub write_ratio: f64,
    /// Accesses per thread, as passes over its slice (seq) or over the region size (rand). Default 2.
    #[serde(default = "d_two")]
    pub passes: f64,
}
fn d_one() -> u32 {
    1
}
fn d_one_f() -> f64 {
    1.0
}
fn d_two() -> f64 {
    2.0
}
fn d_vmpat() -> VmScalPattern {
    VmScalPattern::Seq
}

/// pmbench-like workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PmbenchConfig {
    /// Working set, MiB.
    pub working_set_mib: u64,
    /// Fraction of accesses that are reads, 0–1 (pmbench `-r` / 100). Default 0.5.
    #[serde(default = "d_half")]
    pub read_ratio: f64,
    /// Accesses after the initialisation.
    pub references: u64,
    /// Touch (write) every page once in order first, as pmbench initialises its buffer. Default true.
    #[serde(default = "d_true")]
    pub init: bool,
}
fn d_half() -> f64 {
    0.5
}
fn d_true() -> bool {
    true
}

/// Key popularity.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeyDistribution {
    Uniform,
    /// Zipf with exponent `zipf_theta`, popular keys scattered over the key space (YCSB scrambled zipf).
    Zipf,
    /// `hot_op_fraction` of requests on the first `hot_data_fraction` of keys (YCSB hotspot).
    Hotspot,
}

/// YCSB-like key-value store in anonymous memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct YcsbConfig {
    /// Records. Default 1 000 000.
    #[serde(default = "d_records")]
    pub records: u64,
    /// Bytes per record (laid out back to back). Default 1024.
    #[serde(default = "d_record_bytes")]
    pub record_bytes: u32,
    /// `uniform`, `zipf` or `hotspot`. Default `zipf`.
    #[serde(default = "d_dist")]
    pub distribution: KeyDistribution,
    /// Zipf exponent. Default 0.99.
    #[serde(default = "d_theta")]
    pub zipf_theta: f64,
    /// Hotspot: fraction of records that are hot. Default 0.2.
    #[serde(default = "d_hot_data")]
    pub hot_data_fraction: f64,
    /// Hotspot: fraction of requests on hot records. Default 0.8.
    #[serde(default = "d_hot_op")]
    pub hot_op_fraction: f64,
    /// Fraction of requests that are reads; the rest are updates. Default 0.95 (workload B).
    #[serde(default = "d_read")]
    pub read_ratio: f64,
    /// Requests after the load phase.
    pub requests: u64,
    /// Hash index of 16 bytes per record in front of the records (one index page per request).
    /// Default true.
    #[serde(default = "d_true")]
    pub index: bool,
    /// Insert every record first (the YCSB load phase). Default true.
    #[serde(default = "d_true")]
    pub load: bool,
    /// Client think time between requests, µs. Default 0.
    #[serde(default)]
    pub think_us: u32,
    /// Requests after the load phase that run before the measured `requests` and are not counted in
    /// the throughput and latency (a ramp-up to steady state). Default 0.
    #[serde(default)]
    pub ramp_up_requests: u64,
}
fn d_records() -> u64 {
    1_000_000
}
fn d_record_bytes() -> u32 {
    1024
}
fn d_dist() -> KeyDistribution {
    KeyDistribution::Zipf
}
fn d_theta() -> f64 {
    0.99
}
fn d_hot_data() -> f64 {
    0.2
}
fn d_hot_op() -> f64 {
    0.8
}
fn d_read() -> f64 {
    0.95
}

/// memcached ETC-like cache (Atikoglu et al., SIGMETRICS'12): key sizes GEV(30.8, 8.2, 0.079), value
/// sizes generalized Pareto(0, 214.5, 0.348), items in slab classes growing by 1.25×.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EtcConfig {
    /// Keys. Default 1 000 000.
    #[serde(default = "d_records")]
    pub keys: u64,
    /// Requests after the load phase.
    pub requests: u64,
    /// Fraction of requests that are GETs (ETC: 30 GETs per SET). Default 0.967.
    #[serde(default = "d_get")]
    pub get_ratio: f64,
    /// Fraction of keys that are hot. Default 0.1.
    #[serde(default = "d_hot_key")]
    pub hot_key_fraction: f64,
    /// Fraction of requests on hot keys. Default 0.9.
    #[serde(default = "d_hot_req")]
    pub hot_request_fraction: f64,
    /// Client think time between requests, µs. Default 0.
    #[serde(default)]
    pub think_us: u32,
    /// Value sizes: `gpareto` (a generalized Pareto(0, 214.476, 0.348238), the default) or `mutilate`
    /// (mutilate's `fb_value`: a discrete head of 0–14 B values, 44% of them, over a generalized
    /// Pareto(15, 214.476, 0.348238) — `Generator.cc` `createFacebookValue`).
    #[serde(default)]
    pub value_sizes: EtcValueSizes,
    /// Requests after the load phase that run before the measured `requests` and are not counted in
    /// the throughput and latency (a ramp-up to steady state). Default 0.
    #[serde(default)]
    pub ramp_up_requests: u64,
}

/// Value-size distribution of the memcached ETC workload.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EtcValueSizes {
    /// Generalized Pareto with location 0 (Atikoglu et al.'s fit, without the small-value head).
    #[default]
    Gpareto,
    /// mutilate's `fb_value` mixture.
    Mutilate,
}
fn d_get() -> f64 {
    0.967
}
fn d_hot_key() -> f64 {
    0.1
}
fn d_hot_req() -> f64 {
    0.9
}

/// Table 2 scenarios of the DISS paper.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MobileScenario {
    /// G W O V(30) O W G V.
    Video,
    /// O V W G(30) W V O G.
    Game,
    /// V O G W(30) G O V W.
    Social,
    /// G W V O(30) V W G O.
    Office,
}

/// One application's memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppProfile {
    /// Anonymous working set (heap, stacks), MiB.
    pub anon_mib: u64,
    /// File-backed working set (code, libraries, resources; mapped read-only), MiB.
    pub file_mib: u64,
}

/// Mobile app switching: four apps (V video, G game, O office, W web) launched in the scenario's order
/// (first half) then switched (second half), each phase lasting Table 2's minutes. Launched apps stay
/// in the background and keep touching memory at a low rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MobileConfig {
    /// `video`, `game`, `social` or `office`.
    pub scenario: MobileScenario,
    /// Simulated ms per Table 2 minute (time scale). Default 1000.
    #[serde(default = "d_minute")]
    pub minute_ms: f64,
    /// Memory references of the foreground app per simulated ms; a fraction spreads them over the ms
    /// ticks (tick t makes ⌊(t+1)·rate⌋ − ⌊t·rate⌋), so `minute_ms` and the rates divided by the same
    /// factor keep every reference and stretch the time. Default 2000.
    #[serde(default = "d_fg")]
    pub foreground_refs_per_ms: f64,
    /// Memory references of each background app per simulated ms (fractions as above). Default 50.
    #[serde(default = "d_bg")]
    pub background_refs_per_ms: f64,
    /// Fraction of anonymous references that write. Default 0.3.
    #[serde(default = "d_wr")]
    pub write_ratio: f64,
    /// Fraction of each app's anonymous pages that are only read after the launch wrote them (decoded
    /// resources, caches kept in the heap): references to them never write. Default 0.
    #[serde(default)]
    pub read_mostly_fraction: f64,
    /// Fraction of references to the shared data file that write. Default: `write_ratio`.
    #[serde(default)]
    pub data_write_ratio: Option<f64>,
    /// Zipf exponent of page popularity inside an app. Default 0.9.
    #[serde(default = "d_app_theta")]
    pub zipf_theta: f64,
    /// Profiles of V, G, O, W (in that order). Default V 300/200, G 700/400, O 400/250, W 600/150
    /// MiB anon/file.
    #[serde(default)]
    pub apps: Option<Vec<AppProfile>>,
}
fn d_minute() -> f64 {
    1000.0
}
fn d_fg() -> f64 {
    2000.0
}
fn d_bg() -> f64 {
    50.0
}
fn d_wr() -> f64 {
    0.3
}
fn d_app_theta() -> f64 {
    0.9
}

/// Memory-reference trace formats.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RefFormat {
    /// Decide from the first non-blank line.
    Auto,
    /// `hexaddr R|W` (byte address; page = address / 4096).
    Vm,
    /// UCSD `l|s 0xADDR n`.
    Ucsd,
    /// LIRS: one page number per line, `*` checkpoint lines skipped; all reads unless
    /// `lirs_write_ratio` > 0.
    Lirs,
    /// nandstack's own reference file (docs/model-host.md).
    Nsref,
}

/// Replay of a memory-reference trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceRefsConfig {
    /// Path of the trace (plain, gzip, bzip2, xz or zstd).
    pub path: String,
    /// Format. Default `auto`.
    #[serde(default = "d_fmt")]
    pub format: RefFormat,
    /// Replay the trace this many times. Default 1.
    #[serde(default = "d_one")]
    pub repeat: u32,
    /// Stop after this many references. Default: the whole trace.
    #[serde(default)]
    pub max_refs: Option<u64>,
    /// LIRS traces carry no read/write: make this fraction of references writes (seeded). Default 0.
    #[serde(default)]
    pub lirs_write_ratio: f64,
}
fn d_fmt() -> RefFormat {
    RefFormat::Auto
}

fn ratio(key: &str, v: f64) -> Result<()> {
    if v.is_finite() && (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(Error::config(key, format!("is {v}: must be in [0, 1]")))
    }
}
fn positive(key: &str, v: u64) -> Result<()> {
    if v == 0 {
        Err(Error::config(key, "must be ≥ 1"))
    } else {
        Ok(())
    }
}
const MAX_PAGES: u64 = 1 << 26;

impl WorkloadConfig {
    pub fn validate(&self, key: &str) -> Result<()> {
        let k = |f: &str| format!("{key}.{f}");
        match self {
            WorkloadConfig::Memtouch(c) => {
                positive(&k("pages"), c.pages)?;
                if c.pages > MAX_PAGES {
                    return Err(Error::config(k("pages"), "at most 2^26 pages (256 GiB)"));
                }
                if c.write_pct > 100 {
                    return Err(Error::config(
                        k("write_pct"),
                        format!("is {}: must be in [0, 100]", c.write_pct),
                    ));
                }
                if c.pattern == MemtouchPattern::Hot && c.pages < 5 {
                    return Err(Error::config(k("pages"), "the hot pattern needs ≥ 5 pages"));
                }
                if let Some(content) = &c.content {
                    nandstack_workload::content::ContentSpec::parse(content).map_err(|e| {
                        let msg = match e {
                            Error::Config { msg, .. } => msg,
                            other => other.to_string(),
                        };
                        Error::config(k("content"), msg)
                    })?;
                }
            }
            WorkloadConfig::VmScalability(c) => {
                positive(&k("size_mib"), c.size_mib)?;
                if c.threads == 0 || c.threads > 1024 {
                    return Err(Error::config(k("threads"), "must be in [1, 1024]"));
                }
                if c.size_mib * 256 < c.threads as u64 {
                    return Err(Error::config(k("threads"), "more threads than pages"));
                }
                ratio(&k("write_ratio"), c.write_ratio)?;
                if !(c.passes.is_finite() && c.passes > 0.0) {
                    return Err(Error::config(k("passes"), "must be > 0"));
                }
            }
            WorkloadConfig::Pmbench(c) => {
                positive(&k("working_set_mib"), c.working_set_mib)?;
                ratio(&k("read_ratio"), c.read_ratio)?;
            }
            WorkloadConfig::Ycsb(c) => {
                positive(&k("records"), c.records)?;
                if c.record_bytes == 0 || c.record_bytes > 1 << 20 {
                    return Err(Error::config(k("record_bytes"), "must be in [1, 1 MiB]"));
                }
                ratio(&k("read_ratio"), c.read_ratio)?;
                ratio(&k("hot_data_fraction"), c.hot_data_fraction)?;
                ratio(&k("hot_op_fraction"), c.hot_op_fraction)?;
                if !(c.zipf_theta.is_finite() && c.zipf_theta > 0.0 && c.zipf_theta < 10.0) {
                    return Err(Error::config(k("zipf_theta"), "must be in (0, 10)"));
                }
            }
            WorkloadConfig::MemcachedEtc(c) => {
                positive(&k("keys"), c.keys)?;
                ratio(&k("get_ratio"), c.get_ratio)?;
                ratio(&k("hot_key_fraction"), c.hot_key_fraction)?;
                ratio(&k("hot_request_fraction"), c.hot_request_fraction)?;
            }
            WorkloadConfig::Mobile(c) => {
                if !(c.minute_ms.is_finite() && c.minute_ms >= 1.0) {
                    return Err(Error::config(k("minute_ms"), "must be ≥ 1"));
                }
                for (name, rate) in [
                    ("foreground_refs_per_ms", c.foreground_refs_per_ms),
                    ("background_refs_per_ms", c.background_refs_per_ms),
                ] {
                    if !(rate.is_finite() && (0.0..=1e6).contains(&rate)) {
                        return Err(Error::config(k(name), "must be in [0, 1000000]"));
                    }
                }
                ratio(&k("write_ratio"), c.write_ratio)?;
                ratio(&k("read_mostly_fraction"), c.read_mostly_fraction)?;
                if let Some(d) = c.data_write_ratio {
                    ratio(&k("data_write_ratio"), d)?;
                }
                if !(c.zipf_theta.is_finite() && c.zipf_theta > 0.0 && c.zipf_theta < 10.0) {
                    return Err(Error::config(k("zipf_theta"), "must be in (0, 10)"));
                }
                if let Some(apps) = &c.apps {
                    if apps.len() != 4 {
                        return Err(Error::config(
                            k("apps"),
                            "needs exactly four profiles: V, G, O, W",
                        ));
                    }
                    for (i, a) in apps.iter().enumerate() {
                        positive(&k(&format!("apps[{i}].anon_mib")), a.anon_mib)?;
                    }
                }
            }
            WorkloadConfig::Launch(c) => c.validate(key)?,
            WorkloadConfig::Inline(c) => {
                positive(&k("pages"), c.pages as u64)?;
                if c.pages as u64 > MAX_PAGES {
                    return Err(Error::config(k("pages"), "at most 2^26 pages"));
                }
            }
            WorkloadConfig::Trace(c) => {
                if c.path.is_empty() {
                    return Err(Error::config(k("path"), "must name a file"));
                }
                positive(&k("repeat"), c.repeat as u64)?;
                ratio(&k("lirs_write_ratio"), c.lirs_write_ratio)?;
            }
        }
        Ok(())
    }
}
