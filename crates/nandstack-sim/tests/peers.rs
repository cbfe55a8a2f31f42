//! Peer sanity anchors (docs/peers.md): the committed configs `configs/peers/mqsim_default.toml` and
//! `configs/peers/ssdsim_default.toml` replay the traces MQSim and SSDsim ship with. These are not
//! calibration targets; the checks are that every trace request is served and that the figures are
//! physically possible (reads no faster than tR + one 4 KiB transfer, WAF consistent with the write
//! buffer, no GC), plus the configs' idle-device latencies against the closed form.
//!
//! The trace replays skip with a message when `<repo>/../shared/traces/block` is absent; the idle-device
//! probes use small traces written to a temporary directory and always run.

use std::path::{Path, PathBuf};

use nandstack_sim::{run_toml, Report, RunOptions};
use nandstack_workload::trace::{scan, TraceFormat};

mod common;

const UNIT_BYTES: u64 = 4096;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn shared_dir() -> Option<PathBuf> {
    common::shared_block_traces("the peer trace replays (the idle-device probes still run)")
}

/// The timing values of a config that the sanity bounds need.
struct Timing {
    read_us: f64,
    program_us: f64,
    channel_mb_per_s: f64,
}

impl Timing {
    /// Channel time of `bytes` in µs (MB/s = 10^6 B/s, so B ÷ (MB/s) = µs).
    fn xfer_us(&self, bytes: u64) -> f64 {
        bytes as f64 / self.channel_mb_per_s
    }
}

/// A committed peer config with `trace.path` set to `trace` (and `precondition.fill_fraction` to `fill`
/// when given), as TOML text, and its timing.
fn peer_config(name: &str, trace: &Path, fill: Option<f64>) -> (String, Timing) {
    let path = repo_root().join("configs/peers").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut doc: toml::Table = text.parse().unwrap_or_else(|e| panic!("{name}: {e}"));
    let num = |doc: &toml::Table, section: &[&str], key: &str| -> f64 {
        let mut t = doc;
        for s in section {
            t = t[*s]
                .as_table()
                .unwrap_or_else(|| panic!("{name}: no [{}]", section.join(".")));
        }
        t[key]
            .as_float()
            .unwrap_or_else(|| panic!("{name}: {}.{key} is not a float", section.join(".")))
    };
    let timing = Timing {
        read_us: num(&doc, &["device", "timing"], "read_us"),
        program_us: num(&doc, &["device", "timing"], "program_us"),
        channel_mb_per_s: num(&doc, &["device", "timing"], "channel_mb_per_s"),
    };
    let committed = doc["workload"]["trace"]["path"]
        .as_str()
        .expect("workload.trace.path")
        .to_string();
    assert!(
        committed.starts_with("../shared/traces/block/"),
        "{name}: workload.trace.path should be relative to the repository root, got {committed}"
    );
    doc["workload"]["trace"]
        .as_table_mut()
        .expect("[workload.trace]")
        .insert("path".into(), trace.display().to_string().into());
    if let Some(f) = fill {
        doc["precondition"]
            .as_table_mut()
            .expect("[precondition]")
            .insert("fill_fraction".into(), f.into());
    }
    (toml::to_string(&doc).expect("TOML"), timing)
}

fn run(name: &str, cfg: &str) -> Report {
    run_toml(cfg, &RunOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Replay `trace` with the committed config `config` and check the sanity properties.
fn replay(config: &str, trace: &str, format: TraceFormat) {
    let Some(dir) = shared_dir() else { return };
    let path = dir.join(trace);
    let stats = scan(&path, format).unwrap_or_else(|e| panic!("{trace}: {e}"));
    let (cfg, t) = peer_config(config, &path, None);
    let what = format!("{config} on {trace}");
    let r = run(&what, &cfg);

    // Every trace request is served, with the trace's bytes.
    assert_eq!(r.requests, stats.records, "{what}: requests");
    assert_eq!(r.host_read_requests, stats.reads, "{what}: reads");
    assert_eq!(r.host_write_requests, stats.writes, "{what}: writes");
    assert_eq!(r.host_trim_requests, stats.trims, "{what}: trims");
    assert_eq!(r.host_read_bytes, stats.read_bytes, "{what}: read bytes");
    assert_eq!(r.host_write_bytes, stats.write_bytes, "{what}: write bytes");
    // Both peers serve every read from flash; the preconditioning must cover every address read.
    assert_eq!(
        r.blk().unmapped_read_pages,
        0,
        "{what}: reads of never-written data"
    );

    // Reads: no faster than sensing a page and moving 4 KiB over the channel; all finite.
    let reads = r.read_latency_us.as_ref().expect("read latencies");
    assert_eq!(reads.count, stats.reads, "{what}: every read completed");
    let floor = t.read_us + t.xfer_us(UNIT_BYTES);
    assert!(
        reads.mean.is_finite() && reads.max.is_finite(),
        "{what}: read latency not finite: {reads:?}"
    );
    assert!(
        reads.mean >= floor - 1e-3,
        "{what}: mean read {} µs < tR + 4 KiB transfer = {floor} µs",
        reads.mean
    );
    assert!(reads.max >= reads.mean, "{what}: {reads:?}");

    // Writes: finite; WAF consistent with what the write buffer absorbed.
    if stats.writes > 0 {
        let writes = r.write_latency_us.as_ref().expect("write latencies");
        assert_eq!(writes.count, stats.writes, "{what}: every write completed");
        assert!(
            writes.mean.is_finite() && writes.mean > 0.0 && writes.max.is_finite(),
            "{what}: {writes:?}"
        );
        let waf = r.waf.expect("WAF when the trace writes");
        assert!(waf.is_finite() && waf > 0.0, "{what}: WAF {waf}");
        // Every 4 KiB unit a host write touches is either programmed (at the end-of-run flush at the
        // latest) or overwritten in the write buffer first; a misaligned write touches more units than its
        // bytes fill.
        let upp = r.device_num("units_per_page");
        let programmed_units = r.blk().flash_program_pages_by_cause.host * upp;
        let absorbed = r.blk().caches.write_buffer_absorbed_pages as f64;
        let min_units = r.host_write_bytes as f64 / UNIT_BYTES as f64;
        assert!(
            programmed_units + absorbed >= min_units - 1e-9,
            "{what}: {programmed_units} units programmed + {absorbed} absorbed < {min_units} written"
        );
        if absorbed == 0.0 {
            assert!(
                waf >= 1.0,
                "{what}: WAF {waf} < 1 with nothing absorbed by a write buffer"
            );
        }
    }

    // The traces write far less than the free space above the GC thresholds (MQSim's own published run of
    // tpcc-small reports no GC either).
    assert_eq!(
        (r.blk().gc_invocations, r.flash_erases, r.gc_migrated_pages),
        (0, 0, 0),
        "{what}: GC ran"
    );
    assert_eq!(
        r.blk().units.valid + r.blk().units.invalid + r.blk().units.free,
        r.blk().units.total,
        "{what}: unit census"
    );

    // Open loop: the run lasts at least as long as the trace.
    let span_s = stats.last_ns.unwrap_or(0) as f64 / 1e9;
    let sim_s = r.sim_seconds.expect("timed run");
    assert!(
        sim_s >= span_s,
        "{what}: simulated {sim_s} s < trace span {span_s} s"
    );

    println!(
        "{what}: read mean {:.1} µs p99 {:.1}, write mean {:.1} µs p99 {:.1}, GC {}, erases {}, WAF {:.3}, \
         {:.0} IOPS over {:.3} s",
        reads.mean,
        reads.p99,
        r.write_latency_us.as_ref().map_or(f64::NAN, |w| w.mean),
        r.write_latency_us.as_ref().map_or(f64::NAN, |w| w.p99),
        r.blk().gc_invocations,
        r.flash_erases,
        r.waf.unwrap_or(f64::NAN),
        r.iops.unwrap_or(0.0),
        sim_s,
    );
}

#[test]
fn mqsim_default_replays_tpcc_small() {
    replay(
        "mqsim_default.toml",
        "mqsim_tpcc_small.trace",
        TraceFormat::Mqsim,
    );
}

#[test]
fn mqsim_default_replays_wsrch_small() {
    replay(
        "mqsim_default.toml",
        "mqsim_wsrch_small.trace",
        TraceFormat::Mqsim,
    );
}

#[test]
fn ssdsim_default_replays_its_example_trace() {
    replay(
        "ssdsim_default.toml",
        "ssdsim_example_financial1_10k.ascii",
        TraceFormat::Ssdsim,
    );
}

/// One request on an idle device takes exactly its closed-form time. The probe lines are in the column
/// order both formats share: `time_ns dev sector count op` with op 1 = read, 0 = write.
#[test]
fn idle_device_latencies_equal_the_closed_form() {
    let dir = std::env::temp_dir().join(format!("nandstack-peers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Sector 0 is page-aligned; sectors 4096 and 8192 are 2 and 4 MiB in. The first 1% of the logical
    // space is written before the run, so the reads find data.
    type Expect = fn(&Timing) -> f64;
    let probes: [(&str, &str, &str, Expect); 7] = [
        // MQSim: reads sense one page and move only the units read; writes land in the DRAM buffer.
        ("mqsim_default.toml", "mqsim", "0 0 0 16 1", |t| {
            t.read_us + t.xfer_us(8192)
        }),
        ("mqsim_default.toml", "mqsim", "0 0 0 8 1", |t| {
            t.read_us + t.xfer_us(4096)
        }),
        // The write buffer's DRAM access time (controller.write_buffer.dram_access_ns, default 1000 ns).
        ("mqsim_default.toml", "mqsim", "0 0 4096 8 0", |_| 1.0),
        // SSDsim (no buffer): a full-page write waits for its program, a half page only for its data.
        ("ssdsim_default.toml", "ssdsim", "0 0 0 16 1", |t| {
            t.read_us + t.xfer_us(8192)
        }),
        ("ssdsim_default.toml", "ssdsim", "0 0 0 8 1", |t| {
            t.read_us + t.xfer_us(4096)
        }),
        ("ssdsim_default.toml", "ssdsim", "0 0 4096 16 0", |t| {
            2.0 * t.xfer_us(4096) + t.program_us
        }),
        ("ssdsim_default.toml", "ssdsim", "0 0 8192 8 0", |t| {
            t.xfer_us(4096)
        }),
    ];
    for (i, (config, format, line, expect)) in probes.iter().enumerate() {
        let trace = dir.join(format!("probe{i}.{format}"));
        std::fs::write(&trace, format!("{line}\n")).unwrap();
        let (cfg, t) = peer_config(config, &trace, Some(0.01));
        let what = format!("{config}, probe `{line}`");
        let r = run(&what, &cfg);
        let lat = if line.ends_with(" 1") {
            &r.read_latency_us
        } else {
            &r.write_latency_us
        };
        let got = lat.as_ref().expect("one latency").mean;
        let want = expect(&t);
        // The channel rate is held as whole picoseconds per byte and times as whole ns.
        assert!(
            (got - want).abs() < 2e-3,
            "{what}: {got} µs, closed form {want} µs"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
