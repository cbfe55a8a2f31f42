//! Host runs side by side (`nandstack_sim::run::run_many`, `hostrun::lockstep`): runs that read the same
//! reference streams share them through a tee, and each report is exactly the report of the run alone
//! (`wall_*` aside) — across schemes, devices, several processes and threads, verification, a run that
//! stops early and one whose config is refused.

use nandstack_sim::hostrun::lockstep::{run_lockstep, runs_shared, stream_key};
use nandstack_sim::run::run_many;
use nandstack_sim::{run_toml, RunOptions, SimConfig};
use serde_json::Value;

mod common;
use common::strip_wall;

fn plain(r: &nandstack_sim::Report) -> Value {
    let mut v = serde_json::to_value(r).unwrap();
    strip_wall(&mut v);
    v
}

const DEVICE: &str =
    "[device]\nkind = \"block\"\n[device.geometry]\nchannels = 2\nchips_per_channel = 1\n\
    dies_per_chip = 1\nplanes_per_die = 2\nblocks_per_plane = 512\npages_per_block = 64\n\
    page_size_bytes = 4096\n";

/// A phone (one thread) beside a vm-scalability job of `threads` threads, on a small host that swaps;
/// `extra` is appended (swap and device settings).
fn host(seed: u64, threads: u32, extra: &str) -> String {
    format!(
        "seed = {seed}\n[workload]\nkind = \"host\"\nfootprint_fraction = 0.5\n\
         [[workload.processes]]\nname = \"phone\"\n\
         workload = {{ type = \"mobile\", scenario = \"game\", minute_ms = 20.0, foreground_refs_per_ms = 300, \
         background_refs_per_ms = 10, apps = [{{ anon_mib = 12, file_mib = 6 }}, {{ anon_mib = 20, file_mib = 8 }}, \
         {{ anon_mib = 14, file_mib = 6 }}, {{ anon_mib = 16, file_mib = 4 }}] }}\n\
         [[workload.processes]]\nname = \"usemem\"\n\
         workload = {{ type = \"vm_scalability\", size_mib = 24, threads = {threads}, pattern = \"rand\", \
         write_ratio = 0.5, passes = 3.0 }}\n\
         [host]\nram_mib = 40\n[host.pagecache]\noffset_mib = 0\n[host.swap]\nsize_mib = 96\noffset_mib = 200\n\
         {extra}\n{DEVICE}"
    )
}

fn cfg(toml: &str) -> SimConfig {
    SimConfig::from_toml(toml).unwrap()
}

/// Every config run alone and all of them through `side`: the same reports, in order.
fn same_as_alone_by(
    tomls: &[String],
    verify: bool,
    side: impl FnOnce(Vec<SimConfig>, &RunOptions) -> Vec<nandstack_core::Result<nandstack_sim::Report>>,
) -> Vec<Value> {
    let opts = RunOptions {
        verify,
        ..RunOptions::default()
    };
    let alone: Vec<Value> = tomls
        .iter()
        .map(|t| plain(&run_toml(t, &opts).unwrap()))
        .collect();
    let many = side(tomls.iter().map(|t| cfg(t)).collect(), &opts);
    assert_eq!(many.len(), tomls.len());
    for (k, (a, m)) in alone.iter().zip(&many).enumerate() {
        let m = plain(m.as_ref().unwrap());
        assert_eq!(a, &m, "config {k} side by side differs from alone");
    }
    alone
}

/// Every config run alone and all of them through `run_many`: the same reports, in order.
fn same_as_alone(tomls: &[String], verify: bool) -> Vec<Value> {
    same_as_alone_by(tomls, verify, |cfgs, opts| {
        run_many(cfgs, opts, false, &mut |_| true)
    })
}

#[test]
fn runs_side_by_side_report_what_each_reports_alone() {
    let tomls = vec![
        host(7, 3, "discard = { mode = \"off\" }"),
        host(7, 3, "discard = { mode = \"itrim\" }"),
        host(7, 3, "allocator = \"cluster\""),
        // Another device (more over-provisioning) under the same streams.
        host(7, 3, "").replace(
            "page_size_bytes = 4096\n",
            "page_size_bytes = 4096\n[device.ftl]\nover_provisioning = 0.3\n",
        ),
        // Another seed: other streams, run in turn between the others.
        host(8, 3, ""),
    ];
    let keys: Vec<_> = tomls.iter().map(|t| stream_key(&cfg(t))).collect();
    assert!(keys[..4].iter().all(|k| k.is_some() && *k == keys[0]));
    assert_ne!(keys[4], keys[0]);
    let shared = runs_shared().0;
    let reports = same_as_alone(&tomls, false);
    assert!(
        runs_shared().0 >= shared + 4,
        "the four runs on the same streams went side by side"
    );
    // Not a vacuous comparison: the schemes' reports differ, and the host swapped.
    assert_ne!(reports[0], reports[1]);
    assert_ne!(reports[0], reports[3]);
    let swapped = reports[0]["host"]["pswpout"].as_u64().unwrap_or(0);
    assert!(swapped > 0, "the host swapped: {}", reports[0]["host"]);
}

/// A window of one chunk: the runs take turns every chunk and their threads' clocks diverge (one host
/// hardly swaps) — still the reports of the runs alone. (Runs waiting on each other — ahead on one
/// thread's stream, behind on another's — would widen the windows; not seen with these runs, so the
/// widening itself is tested on the tee, `workloads::tee`.)
#[test]
fn turns_of_one_chunk_and_widened_windows_change_nothing() {
    let tomls = vec![
        host(11, 4, "discard = { mode = \"off\" }"),
        host(11, 4, "discard = { mode = \"itrim\" }"),
        host(11, 4, "allocator = \"cluster\""),
        // Much more memory: hardly any swapping, so its threads' clocks run in another order.
        host(11, 4, "").replace("ram_mib = 40", "ram_mib = 72"),
    ];
    let (_, pauses, _) = runs_shared();
    same_as_alone_by(&tomls, false, |cfgs, opts| {
        run_lockstep(&cfgs, opts, false, 1, &mut |_| true)
    });
    let (_, pauses_now, _) = runs_shared();
    assert!(
        pauses_now > pauses + 100,
        "runs took turns often: {}",
        pauses_now - pauses
    );
}

/// Verification (read-after-write versions, FTL and host invariants) runs inside each run side by side.
#[test]
fn verified_runs_side_by_side() {
    let tomls = vec![
        host(3, 2, "discard = { mode = \"off\" }"),
        host(3, 2, "discard = { mode = \"itrim\" }"),
    ];
    same_as_alone(&tomls, true);
}

/// A run stopped by its reference limit leaves the tee; the others still read every chunk. A refused
/// config is that run's error alone.
#[test]
fn a_run_that_stops_early_or_is_refused_leaves_the_others_whole() {
    let short = host(5, 1, "").replace("[host]\n", "[run]\nmax_references = 200000\n[host]\n");
    let tomls = vec![host(5, 1, ""), short, host(5, 1, "allocator = \"cluster\"")];
    assert_eq!(stream_key(&cfg(&tomls[0])), stream_key(&cfg(&tomls[1])));
    let reports = same_as_alone(&tomls, false);
    assert_ne!(reports[0], reports[1]);
    let bad = cfg(&host(5, 0, ""));
    assert!(bad.check().is_err(), "a job of 0 threads is refused");
    let cfgs = vec![cfg(&tomls[0]), bad, cfg(&tomls[2])];
    let many = run_many(cfgs, &RunOptions::default(), false, &mut |_| true);
    assert_eq!(plain(many[0].as_ref().unwrap()), reports[0]);
    assert!(matches!(many[1], Err(nandstack_core::Error::Config { .. })));
    assert_eq!(plain(many[2].as_ref().unwrap()), reports[2]);
}

/// Ctrl-C (the callback says stop): every run ends; none runs on after it.
#[test]
fn an_interrupt_stops_every_run() {
    let tomls = [
        host(9, 1, ""),
        host(9, 1, "allocator = \"cluster\""),
        host(10, 1, ""),
    ];
    let mut calls = 0u32;
    let many = run_many(
        tomls.iter().map(|t| cfg(t)).collect(),
        &RunOptions::default(),
        false,
        &mut |p| {
            calls += 1;
            p.phase != "measure" || p.done < 50_000
        },
    );
    assert_eq!(many.len(), 3);
    for r in &many[..2] {
        let r = r
            .as_ref()
            .expect("an interrupted host run reports what ran");
        assert!(plain(r)["host"].is_object());
    }
    assert!(
        matches!(many[2], Err(nandstack_core::Error::Interrupted)),
        "the run after the interrupt does not start"
    );
    assert!(calls > 0);
}
