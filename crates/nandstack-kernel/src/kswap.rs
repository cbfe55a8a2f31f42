//! Real-kernel swap captures (`../shared/traces/kernel-swap/`): read a capture (its JSON description and
//! its block requests), group the repetitions of a program, build the host config that runs the same
//! program on the captures' setup, and summarise both sides the same way for comparison.
//!
//! A capture's JSON names the command (`memtouch PAGES OPS PATTERN WRITE_PCT SEED`), the cgroup-v1
//! memory limit, the swap size and the discard mode (`capture-swap.sh`); its CSV lists every request
//! the kernel issued to the swap device (`time_s,op,sector,sectors,comm`, 512-byte sectors). Captures
//! named `NAME_r1`, `NAME_r2`, … are repetitions of program `NAME` (the kernel varies from run to run);
//! the model is compared with their range.

use std::fs::File;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use nandstack_core::{Error, Result};
use serde_json::{json, Value};

use nandstack_host::block::HIST_PAGES;
use nandstack_host::config::LoopPacking;
use nandstack_sim::hostrun::Sim;
use nandstack_sim::SimConfig;

/// The environment variable naming a folder of captures to use instead of the shared one (what
/// `nandstack reproduce kernel-swap --captures DIR` sets; also read by this crate's kswap examples).
pub const CAPTURES_ENV: &str = "NANDSTACK_KERNEL_SWAP";

/// The captures' folder: `$NANDSTACK_KERNEL_SWAP` when set and not empty, else
/// `$NANDSTACK_DATA/kernel-swap` (docs/data.md), else `../shared/traces/kernel-swap` beside the repository.
pub fn captures_dir() -> PathBuf {
    let set = |name: &str| std::env::var_os(name).filter(|d| !d.is_empty());
    match (set(CAPTURES_ENV), set(nandstack_host::workloads::DATA_ENV)) {
        (Some(d), _) => PathBuf::from(d),
        (None, Some(root)) => PathBuf::from(root).join("kernel-swap"),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/kernel-swap"),
    }
}

/// A distribution of request sizes in pages (index = pages; the last bucket holds larger requests).
#[derive(Clone, Debug, PartialEq)]
pub struct Sizes {
    pub hist: Vec<u64>,
}

impl Default for Sizes {
    fn default() -> Self {
        Sizes {
            hist: vec![0; HIST_PAGES + 1],
        }
    }
}

impl Sizes {
    pub fn add(&mut self, pages: u64) {
        self.hist[(pages as usize).min(HIST_PAGES)] += 1;
    }
    /// Requests.
    pub fn count(&self) -> u64 {
        self.hist.iter().sum()
    }
    /// Pages (requests larger than the histogram count as its last bucket).
    pub fn pages(&self) -> u64 {
        self.hist
            .iter()
            .enumerate()
            .map(|(s, &n)| s as u64 * n)
            .sum()
    }
    /// Mean pages per request (0 without requests).
    pub fn mean(&self) -> f64 {
        self.pages() as f64 / self.count().max(1) as f64
    }
    /// The nearest-rank `q` quantile: the smallest size with at least ⌈q·n⌉ requests at or below it
    /// (0 without requests).
    pub fn quantile(&self, q: f64) -> u64 {
        let n = self.count();
        if n == 0 {
            return 0;
        }
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
        let mut seen = 0;
        for (s, &c) in self.hist.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return s as u64;
            }
        }
        HIST_PAGES as u64
    }
}

/// What a capture (or a model run) did to the swap device.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SwapSummary {
    /// Pages swapped in / out (kernel: the `pswpin` / `pswpout` deltas).
    pub pswpin: u64,
    pub pswpout: u64,
    pub reads: Sizes,
    pub writes: Sizes,
    /// Read / write requests that start where the previous one of the same direction ended.
    pub sequential_reads: u64,
    pub sequential_writes: u64,
    /// Discards while the program ran (kernel: before its last read or write; the captures also hold the
    /// first discards of the program's exit, which frees every slot, until the tracer stopped).
    pub discard_requests: u64,
    pub discard_pages: u64,
    /// Highest slot written (how far into the partition swap reached; slot 0 is the header).
    pub highest_slot: u64,
}

impl SwapSummary {
    pub fn read_requests(&self) -> u64 {
        self.reads.count()
    }
    pub fn write_requests(&self) -> u64 {
        self.writes.count()
    }
    /// Share of read (write) requests that are sequential.
    pub fn sequential_read_share(&self) -> f64 {
        self.sequential_reads as f64 / self.read_requests().max(1) as f64
    }
    pub fn sequential_write_share(&self) -> f64 {
        self.sequential_writes as f64 / self.write_requests().max(1) as f64
    }
    /// The figures the comparison reports, by name.
    pub fn figures(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("pswpin", self.pswpin as f64),
            ("pswpout", self.pswpout as f64),
            ("discard_pages", self.discard_pages as f64),
            ("read_requests", self.read_requests() as f64),
            ("read_pages_mean", self.reads.mean()),
            ("read_pages_p50", self.reads.quantile(0.5) as f64),
            ("read_pages_p90", self.reads.quantile(0.9) as f64),
            ("read_sequential_share", self.sequential_read_share()),
            ("write_requests", self.write_requests() as f64),
            ("write_pages_mean", self.writes.mean()),
            ("write_pages_p50", self.writes.quantile(0.5) as f64),
            ("write_pages_p90", self.writes.quantile(0.9) as f64),
            ("write_sequential_share", self.sequential_write_share()),
            ("highest_slot", self.highest_slot as f64),
        ]
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

/// A program and its captures (one, or the repetitions `_r1`, `_r2`, …).
#[derive(Clone, Debug)]
pub struct Program {
    pub name: String,
    pub captures: Vec<Capture>,
}

impl Program {
    /// The kernel's range (min, max) of `figure` over the repetitions.
    pub fn range(&self, figure: &str) -> (f64, f64) {
        let v: Vec<f64> = self
            .captures
            .iter()
            .map(|c| figure_of(&c.kernel, figure))
            .collect();
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lo, hi)
    }
}

fn figure_of(s: &SwapSummary, name: &str) -> f64 {
    s.figures()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map_or(f64::NAN, |(_, v)| v)
}

/// How far `v` lies outside `[lo, hi]`, relative to the nearer end (0 inside).
pub fn outside(v: f64, (lo, hi): (f64, f64)) -> f64 {
    if v > hi {
        (v - hi) / hi.max(f64::MIN_POSITIVE)
    } else if v < lo {
        (v - lo) / lo.max(f64::MIN_POSITIVE)
    } else {
        0.0
    }
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
    read_requests(&cp, &mut kernel)?;
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

/// Read a capture's requests (`time_s,op,sector,sectors,comm`) into `s`.
fn read_requests(path: &Path, s: &mut SwapSummary) -> Result<()> {
    let f = File::open(path).map_err(|e| io(path, e))?;
    let (_, r) = nandstack_workload::trace::decompress(f).map_err(|e| io(path, e))?;
    let mut next = [u64::MAX; 2];
    // Discards (time, pages) and when the last read or write was issued.
    let mut discards: Vec<(f64, u64)> = Vec::new();
    let mut last_rw = f64::NEG_INFINITY;
    for (i, line) in r.lines().enumerate() {
        let line = line.map_err(|e| io(path, e))?;
        if i == 0 {
            continue;
        }
        let c: Vec<&str> = line.split(',').collect();
        let field = |k: usize| c.get(k).and_then(|x| x.parse::<u64>().ok());
        let (Some(sector), Some(sectors)) = (field(2), field(3)) else {
            return Err(Error::Trace {
                file: path.display().to_string(),
                line: i as u64 + 1,
                text: line.clone(),
                msg: "expected time_s,op,sector,sectors,comm".into(),
            });
        };
        let (first, pages) = (sector / 8, sectors / 8);
        let t = c[0].parse::<f64>().unwrap_or(f64::NAN);
        match c[1] {
            "R" | "W" => {
                last_rw = last_rw.max(t);
                let w = (c[1] == "W") as usize;
                if next[w] == sector {
                    if w == 1 {
                        s.sequential_writes += 1;
                    } else {
                        s.sequential_reads += 1;
                    }
                }
                next[w] = sector + sectors;
                if w == 1 {
                    s.highest_slot = s.highest_slot.max(first + pages.max(1) - 1);
                    s.writes.add(pages);
                } else {
                    s.reads.add(pages);
                }
            }
            "D" => discards.push((t, pages)),
            _ => {}
        }
    }
    for (t, pages) in discards {
        if t <= last_rw {
            s.discard_requests += 1;
            s.discard_pages += pages;
        }
    }
    Ok(())
}

/// Every program in `dir` (each `NAME.json` with its `NAME.csv.gz`; captures `NAME_rK` of which there
/// are at least two grouped as program `NAME`), sorted by name, repetitions in order.
pub fn programs(dir: &Path) -> Result<Vec<Program>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| io(dir, e))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_suffix(".json").map(str::to_owned)
        })
        .filter(|n| dir.join(format!("{n}.csv.gz")).exists())
        .collect();
    names.sort();
    let stem = |n: &str| repetition_stem(n).unwrap_or(n).to_owned();
    let mut out: Vec<Program> = Vec::new();
    for n in &names {
        let s = stem(n);
        let siblings = names.iter().filter(|m| stem(m) == s).count();
        let program = if siblings >= 2 {
            s.as_str()
        } else {
            n.as_str()
        };
        let n = n.as_str();
        let c = load(dir, n)?;
        match out.last_mut() {
            Some(p) if p.name == program => p.captures.push(c),
            _ => out.push(Program {
                name: program.to_owned(),
                captures: vec![c],
            }),
        }
    }
    Ok(out)
}

/// `NAME_rK` (K of one or two digits) → `NAME`.
pub fn repetition_stem(capture: &str) -> Option<&str> {
    match capture.rsplit_once("_r") {
        Some((p, k)) if (1..=2).contains(&k.len()) && k.bytes().all(|b| b.is_ascii_digit()) => {
            Some(p)
        }
        _ => None,
    }
}

/// How much longer than its median the wake-up of the idle loop worker on the other vCPU takes, as points
/// `[quantile, µs]` of its distribution (`host.swap.backend.wake_tail`). Traced on a VM of the captures'
/// family (Linux 6.18.44-fc-v657, 2 vCPUs, `tools/capture/trace-reclaim.sh --sched`): from `sched_waking`
/// on memtouch's CPU to `sched_wakeup` in the IPI on the idle CPU, 238,695 wake-ups of four programs
/// (uniform_w100_discard, hot_r100_p49152, seq_w100, normal_w70_discard, pinned): median 20 µs, p90 27,
/// p99 55, p99.9 421, p99.99 2,937, max 8,817 µs; each program alone has the same shape (p99 45–82 µs,
/// 0.02–0.07% over 1 ms). The median itself is in `wake_us`. The tail's weight follows the host's load:
/// traces an hour later had one 5–10× lighter, and instead the VM's scheduler packed the worker onto
/// the reclaimer's CPU more often ([`VCPU_PACKING`]; docs/kernel-swap-comparison.md, "Waking the loop
/// worker, and where it runs").
pub const VCPU_WAKE_TAIL_US: [[f64; 2]; 9] = [
    [0.0, 0.0],
    [0.5, 0.0],
    [0.9, 7.0],
    [0.99, 35.0],
    [0.995, 72.0],
    [0.999, 401.0],
    [0.9995, 852.0],
    [0.9999, 2917.0],
    [1.0, 8797.0],
];

/// When the VM's scheduler packs the loop worker onto the CPU of the task that wakes it
/// (`host.swap.backend.packing`; the kernel command line's `sched_vcpu_pack`, not upstream Linux).
/// Pooled over seven `trace-reclaim.sh --sched` traces of four programs (uniform_w100_discard ×3,
/// hot_r100_p49152 ×2, normal_w70_discard, seq_w100; `analyze-trace.py`'s placement lines), on the VM
/// of the wake-up tail: a wake-up of the worker idle on the other CPU packs it in 73% of 10,198 cases
/// when that CPU went idle less than 10 µs before, in 3.0% of 401,209 otherwise — almost never (2 of
/// 91,209) while memtouch's and the worker's PELT utilisation add up to 0.5 or more; a wake-up of the packed
/// worker keeps it packed in 87% of 146,981 cases. Ticks at HZ 250.
/// They are also `host.swap.backend.packing`'s defaults.
pub const VCPU_PACKING: LoopPacking = LoopPacking::VCPU;

/// The host config that runs the capture's program on the captures' setup (`capture-swap.sh` on
/// Linux 6.18 in a 2-CPU VM): a cgroup-v1 memory limit, swap of the same size on a loop device over a
/// tmpfs file (`swapon`, with `--discard=pages` when the capture used it), Linux defaults otherwise
/// (swappiness 60, page-cluster 3). The loop device counts as rotational (the captures' reads are
/// aligned blocks of slots: `swap_cluster_readahead`; VMA readahead is off while a rotational swap
/// device is active, and the allocator uses one global cluster). The VM's reclaim CPU costs are the
/// ones its captures show: a reclaim pass takes about 4.3 µs per page it writes (1 µs to scan,
/// 3.3 µs to unmap and submit). A swap-in takes as long as the captures show: in every capture the
/// median time between two single-page swap-in reads with nothing written between them is 19–21 µs
/// (`uniform_w20`: 20 µs in each run); the loop worker's own time (5 µs per request, 1 µs per page)
/// and the fault's (3 µs) leave 10 µs, the wake-up of the idle loop worker on the other vCPU
/// (`wake_us`). That wake-up sometimes takes far longer: the captures' machine is a VM, and an idle
/// vCPU runs only once the hypervisor schedules it; [`VCPU_WAKE_TAIL_US`] adds the traced excess over
/// the median to each wake-up of the idle worker. Time matters to reclaim: it reads the memcg
/// statistics of the last periodic flush, every 2 s (`nandstack_host::vm::vmstats`). The SSD below the host sees no swap I/O.
pub fn config(c: &Capture) -> SimConfig {
    SimConfig::from_value(config_json(c)).expect("capture config is valid")
}

/// The capture kernel's memory-cgroup statistics flush period, ms (Linux 6.18's `FLUSH_TIME`): the
/// captures' setups read reclaim's statistics as of the last periodic flush (`host.reclaim.stats_flush_ms`).
pub const STATS_FLUSH_MS: u64 = 2000;

/// The phases at which a capture's program is run, as `host.reclaim.stats_flush_first_ms`: the default
/// (the first flush one period after the start) first, then three more. The kernel's flusher runs from
/// boot, so each capture started somewhere in its period; and a capture holds only a run that finished
/// (the memory controller's OOM killer ends some runs under heavy thrashing: the zram captures' README
/// says those were repeated). So a comparison runs the model at each of these phases and takes, per
/// figure, the median over those whose runs finish ([`median_figures`]); [`run_first_finishing`] takes
/// the first that finishes, for diagnostics.
pub const FLUSH_PHASES_MS: [u64; 4] = [STATS_FLUSH_MS, 500, 1000, 1500];

/// One run of `config_at(phase)`: `Ok(Ok(sim))` when it finishes, `Ok(Err(e))` when it ran out of
/// memory ([`is_out_of_memory`]), `Err(e)` on any other error.
fn run_at_phase(
    config_at: &impl Fn(u64) -> Result<SimConfig>,
    phase: u64,
    verify: bool,
) -> Result<std::result::Result<Sim, Error>> {
    match nandstack_sim::hostrun::simulate(&config_at(phase)?, verify) {
        Ok(sim) => Ok(Ok(sim)),
        Err(e) if is_out_of_memory(&e) => Ok(Err(e)),
        Err(e) => Err(e),
    }
}

/// Run `config_at(phase)` for each first-flush phase of [`FLUSH_PHASES_MS`] in turn until a run
/// finishes (`verify`: with read-after-write verification): that run, its phase (ms, as
/// `host.reclaim.stats_flush_first_ms`), and the phases whose runs ran out of memory. Any other error is
/// returned at once, and the last out-of-memory error when no phase finishes.
pub fn run_first_finishing(
    config_at: impl Fn(u64) -> Result<SimConfig>,
    verify: bool,
) -> Result<(Sim, u64, Vec<u64>)> {
    let mut oom = Vec::new();
    let mut last = None;
    for phase in FLUSH_PHASES_MS {
        match run_at_phase(&config_at, phase, verify)? {
            Ok(sim) => return Ok((sim, phase, oom)),
            Err(e) => {
                oom.push(phase);
                last = Some(e);
            }
        }
    }
    Err(last.expect("at least one phase"))
}

/// Whether `patch` sets the first statistics flush itself (then a capture's program runs once, at
/// that phase, instead of at [`FLUSH_PHASES_MS`]).
fn patch_sets_phase(patch: &Value) -> bool {
    !patch["host"]["reclaim"]["stats_flush_first_ms"].is_null()
}

/// Capture `c`'s program, `patch` merged into the captures' setup, run once.
fn run_once(c: &Capture, patch: &Value, verify: bool) -> Result<Sim> {
    nandstack_sim::hostrun::simulate(&config_patched(c, patch)?, verify)
}

/// Run capture `c`'s program with `patch` merged into the captures' setup: at the first of
/// [`FLUSH_PHASES_MS`] that finishes ([`run_first_finishing`]), unless the patch sets the first flush
/// itself (then that one run, reported at phase 0 with no phase out of memory).
pub fn run_patched(c: &Capture, patch: &Value, verify: bool) -> Result<(Sim, u64, Vec<u64>)> {
    if patch_sets_phase(patch) {
        Ok((run_once(c, patch, verify)?, 0, Vec::new()))
    } else {
        run_first_finishing(|ph| config_patched(c, &phase_patch(ph, patch)), verify)
    }
}

/// The summaries of the runs that finished, with their first-flush phases (ms), and the phases whose
/// runs ran out of memory.
pub type PhaseRuns<T = SwapSummary> = (Vec<(u64, T)>, Vec<u64>);

/// Run `config_at(phase)` at every first-flush phase of [`FLUSH_PHASES_MS`] (`verify`: with
/// read-after-write verification) and keep `summary(&sim)` of each run that finishes, with its phase, in
/// the order of [`FLUSH_PHASES_MS`], and the phases whose runs ran out of memory. Any other error is
/// returned at once, and the last out-of-memory error when no phase finishes.
pub fn runs_at_every_phase<T>(
    config_at: impl Fn(u64) -> Result<SimConfig>,
    verify: bool,
    summary: impl Fn(&Sim) -> T,
) -> Result<PhaseRuns<T>> {
    let mut runs = Vec::new();
    let mut oom = Vec::new();
    let mut last = None;
    for phase in FLUSH_PHASES_MS {
        match run_at_phase(&config_at, phase, verify)? {
            Ok(sim) => runs.push((phase, summary(&sim))),
            Err(e) => {
                oom.push(phase);
                last = Some(e);
            }
        }
    }
    if runs.is_empty() {
        return Err(last.expect("at least one phase"));
    }
    Ok((runs, oom))
}

/// [`runs_at_every_phase`] keeping each run's [`model_summary`].
pub fn summaries_at_every_phase(
    config_at: impl Fn(u64) -> Result<SimConfig>,
    verify: bool,
) -> Result<PhaseRuns> {
    runs_at_every_phase(config_at, verify, model_summary)
}

/// The median of `v` (the mean of the two middle values for an even count, as Python's
/// `statistics.median`); `v` must not be empty.
pub fn median(mut v: Vec<f64>) -> f64 {
    assert!(!v.is_empty(), "median of nothing");
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Capture `c`'s program with `patch` merged into the captures' setup, at every phase
/// ([`summaries_at_every_phase`]), unless the patch sets the first flush itself (then that one run,
/// reported at phase 0 with no phase out of memory).
pub fn summaries_patched(c: &Capture, patch: &Value, verify: bool) -> Result<PhaseRuns> {
    if patch_sets_phase(patch) {
        Ok((
            vec![(0, model_summary(&run_once(c, patch, verify)?))],
            Vec::new(),
        ))
    } else {
        summaries_at_every_phase(|ph| config_patched(c, &phase_patch(ph, patch)), verify)
    }
}

/// The model's side of a comparison: per figure, the median over the runs that finished (the mean of
/// the two middle values for an even count, as Python's `statistics.median`). Each kernel capture
/// started at its own point of the flusher's 2 s period, so the model is summarised over the phases
/// rather than taken at one of them.
pub fn median_figures(runs: &[SwapSummary]) -> Vec<(&'static str, f64)> {
    assert!(!runs.is_empty(), "median of no runs");
    let per_run: Vec<Vec<(&'static str, f64)>> = runs.iter().map(SwapSummary::figures).collect();
    per_run[0]
        .iter()
        .enumerate()
        .map(|(i, &(name, _))| (name, median(per_run.iter().map(|f| f[i].1).collect())))
        .collect()
}

/// The patch that sets the first statistics flush at `phase` ms, with `patch` merged over it.
pub fn phase_patch(phase: u64, patch: &Value) -> Value {
    let mut p = json!({"host": {"reclaim": {"stats_flush_first_ms": phase}}});
    merge_patch(&mut p, patch);
    p
}

/// Whether a run's error is the memory controller running out of memory (the kernel would OOM-kill the
/// program) rather than anything else.
pub fn is_out_of_memory(e: &nandstack_core::Error) -> bool {
    e.to_string().contains(nandstack_host::host::OUT_OF_MEMORY)
}

/// The seed of the captures' setup: it draws the loop worker's wake-up tail and its packing decisions.
pub const SEED: u64 = 1;

/// The captures' swap device as `host.swap.backend` ([`config`] explains the values); the Python
/// kernel-swap experiment takes it from here through the binding.
pub fn loop_backend_json() -> Value {
    json!({"kind": "loop", "wake_us": 10.0, "wake_tail": VCPU_WAKE_TAIL_US, "packing": VCPU_PACKING})
}

/// [`config`] as JSON (to derive variants).
pub fn config_json(c: &Capture) -> Value {
    json!({
        "seed": SEED,
        "host": {
            "ram_mib": 2048,
            "cpus": 2,
            "swap": {"size_mib": c.swap_mib, "solid_state": false,
                     "discard": {"mode": if c.discard { "cluster" } else { "off" }},
                     "backend": loop_backend_json()},
            "readahead": {"policy": "cluster"},
            "costs": {"reclaim_scan_ns": 1000, "reclaim_write_ns": 3300},
            "reclaim": {"stats_flush_ms": STATS_FLUSH_MS},
            "cgroups": [{"name": "capswap", "limit_mib": c.limit_mib}],
        },
        "workload": {"kind": "host", "processes": [{"name": "memtouch", "cgroup": "capswap", "workload": {
            "type": "memtouch", "pages": c.pages, "ops": c.ops, "pattern": c.pattern,
            "write_pct": c.write_pct, "seed": c.seed}}]},
        "device": {"geometry": {"blocks_per_plane": 128, "cell_mode": "slc"}},
        "run": {"interval_sim_seconds": 1.0},
    })
}

/// [`config_json`] with `patch` merged in (objects key by key, anything else replaced), as a config.
pub fn config_patched(c: &Capture, patch: &Value) -> Result<SimConfig> {
    let mut v = config_json(c);
    merge_patch(&mut v, patch);
    SimConfig::from_value(v)
}

/// Merge `b` into `a`: objects key by key, anything else replaced.
pub fn merge_patch(a: &mut Value, b: &Value) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge_patch(a.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (a, b) => *a = b.clone(),
    }
}

/// The model's side of the comparison, from a finished run.
pub fn model_summary(sim: &Sim) -> SwapSummary {
    let s = &sim.host.stats;
    let c = &sim.host.io.counters;
    SwapSummary {
        pswpin: s.pswpin,
        pswpout: s.pswpout,
        reads: Sizes {
            hist: c.sizes[0].clone(),
        },
        writes: Sizes {
            hist: c.sizes[1].clone(),
        },
        sequential_reads: c.sequential[0][0],
        sequential_writes: c.sequential[0][1],
        discard_requests: c.requests[0][2],
        discard_pages: c.pages[0][2],
        highest_slot: sim.host.swap.stats.max_slot as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_nearest_rank_and_names_group_repetitions() {
        let mut s = Sizes::default();
        for p in [1, 1, 1, 2, 8, 128] {
            s.add(p);
        }
        assert_eq!(s.count(), 6);
        assert_eq!(s.pages(), 141);
        assert_eq!(s.quantile(0.5), 1);
        assert_eq!(s.quantile(0.9), 128);
        assert_eq!(s.quantile(0.6), 2);
        assert_eq!(s.quantile(0.67), 8);
        assert_eq!(Sizes::default().quantile(0.5), 0);
        assert_eq!(repetition_stem("kswap_seq_w50_r3"), Some("kswap_seq_w50"));
        assert_eq!(repetition_stem("kswap_uniform_r100"), None);
        assert_eq!(outside(11.0, (8.0, 10.0)), 0.1);
        assert_eq!(outside(9.0, (8.0, 10.0)), 0.0);
        assert_eq!(outside(6.0, (8.0, 10.0)), -0.25);
    }

    #[test]
    fn the_model_side_is_the_median_of_each_figure_over_the_runs() {
        let run = |pswpin: u64, pswpout: u64, write_sizes: &[u64]| {
            let mut s = SwapSummary {
                pswpin,
                pswpout,
                ..SwapSummary::default()
            };
            for &n in write_sizes {
                s.writes.add(n);
            }
            s
        };
        let get = |f: &[(&str, f64)], k: &str| f.iter().find(|x| x.0 == k).unwrap().1;
        // Odd count: the middle value, figure by figure (here from different runs).
        let three = [
            run(30, 5, &[4]),
            run(10, 9, &[1, 1]),
            run(20, 7, &[8, 8, 8]),
        ];
        let m = median_figures(&three);
        assert_eq!(get(&m, "pswpin"), 20.0);
        assert_eq!(get(&m, "pswpout"), 7.0);
        assert_eq!(get(&m, "write_pages_mean"), 4.0);
        // Even count: the mean of the two middle values; one run: itself.
        let m = median_figures(&three[..2]);
        assert_eq!(get(&m, "pswpin"), 20.0);
        assert_eq!(get(&m, "write_pages_mean"), 2.5);
        assert_eq!(median_figures(&three[1..2]), three[1].figures());
    }
}
