//! Aged devices kept per process (`nandstack_sim::aged`): a run that starts from a copy of a device
//! an earlier run aged reports exactly what aging its own would have; runs whose aging differs in
//! anything it reads (the seed, the device, what the host told the device) never share one.

use nandstack_sim::{aged, run_toml, RunOptions};
use serde_json::Value;

mod common;
use common::strip_wall;

fn run(toml: &str) -> Value {
    let r = run_toml(toml, &RunOptions::default()).unwrap();
    let mut v = serde_json::to_value(&r).unwrap();
    strip_wall(&mut v);
    v
}

/// The report of `toml` aging its own device (nothing kept before).
fn fresh(toml: &str) -> Value {
    aged::clear();
    run(toml)
}

/// The report of `toml` run after `before` (which kept its aged device), and whether it took a copy.
fn after(before: &str, toml: &str) -> (Value, bool) {
    aged::clear();
    run(before);
    assert!(
        aged::holds(),
        "a block or hybrid device aged without verification is kept"
    );
    let copies = aged::copies();
    let report = run(toml);
    (report, aged::copies() > copies)
}

const DEVICE: &str =
    "[device]\nkind = \"block\"\n[device.geometry]\nchannels = 2\nchips_per_channel = 1\n\
    dies_per_chip = 1\nplanes_per_die = 2\nblocks_per_plane = 256\npages_per_block = 64\n\
    page_size_bytes = 4096\n[device.ftl]\nover_provisioning = 0.2\n";

/// Synthetic block runs: the warm-up draws from the measured workload's generator, which the measured
/// phase continues (the kept generator is copied with the device).
fn block(seed: u64, victim: &str, series: bool) -> String {
    format!(
        "seed = {seed}\n[workload]\npattern = \"zipf\"\nzipf_theta = 0.8\nread_fraction = 0.2\nrequests = 30000\n\
         [precondition]\nfill_fraction = 0.9\nfill_order = \"random\"\nwarmup_capacity_multiples = 1.0\n\
         [run]\ninterval_host_bytes = {}\n{DEVICE}[device.ftl.gc]\nvictim = {{ policy = \"{victim}\" }}\n",
        if series { 8 << 20 } else { 0 }
    )
}

/// A small phone on an aged device; `host` is appended to `[host.swap]`.
fn phone(seed: u64, swap: &str) -> String {
    format!(
        "seed = {seed}\n[workload]\nkind = \"host\"\nfootprint_fraction = 0.5\n[[workload.processes]]\nname = \"phone\"\n\
         workload = {{ type = \"mobile\", scenario = \"game\", minute_ms = 20.0, foreground_refs_per_ms = 300, \
         background_refs_per_ms = 10, apps = [{{ anon_mib = 12, file_mib = 6 }}, {{ anon_mib = 20, file_mib = 8 }}, \
         {{ anon_mib = 14, file_mib = 6 }}, {{ anon_mib = 16, file_mib = 4 }}] }}\n\
         [precondition]\nfill_fraction = 0.75\nwarmup_capacity_multiples = 0.5\n\
         [host]\nram_mib = 48\n[host.pagecache]\noffset_mib = 0\n[host.swap]\nsize_mib = 96\noffset_mib = 200\n{swap}\n\
         {}",
        DEVICE.replace("blocks_per_plane = 256", "blocks_per_plane = 512")
    )
}

/// Hybrid stand-ins: the warm-up draws from `[workload.synthetic]`, not from the stand-in, so two
/// stand-ins on the same device and seed age the same drive (the RL paper's managers measure six
/// workloads each).
fn hybrid(seed: u64, standin: &str, manager: &str) -> String {
    format!(
        "seed = {seed}
[workload]
kind = \"standin\"
standin = {{ name = \"{standin}\", scale = 0.003 }}
\
         [workload.io]
queue_depth = 1
[precondition]
fill_fraction = 0.7
warmup_capacity_multiples = 0.5
\
         [device]
kind = \"hybrid\"
[device.hybrid]
total_blocks = 256
page_bytes = 4096
\
         over_provisioning = 0.25
[device.manager]
kind = \"{manager}\"
"
    )
}

/// One test: the kept device is per process, and the assertions count the copies taken.
#[test]
fn runs_from_a_kept_aged_device_report_what_aging_their_own_would() {
    // Not keeping (the default): a run leaves no device behind.
    aged::set_keeping(false);
    aged::clear();
    run(&block(3, "greedy", false));
    assert!(!aged::holds(), "a run keeps nothing unless asked");
    aged::set_keeping(true);
    // Block runs: the same aging (a run with other run options) takes the copy.
    let (copied, took) = after(&block(3, "greedy", false), &block(3, "greedy", true));
    assert!(took, "the same aging takes the kept device");
    assert_eq!(copied, fresh(&block(3, "greedy", true)));
    // Another seed or another device: never the copy, and each reports what aging its own does.
    for other in [block(4, "greedy", false), block(3, "cost_benefit", false)] {
        let (report, took) = after(&block(3, "greedy", false), &other);
        assert!(!took, "a different aging must not take the kept device");
        assert_eq!(report, fresh(&other));
    }

    // Host runs: schemes that differ in the host only share the aged device.
    let (itrim, strim) = (
        phone(5, "discard = { mode = \"itrim\" }"),
        phone(
            5,
            "discard = { mode = \"strim\" }\nclean_data_handler = true",
        ),
    );
    let (copied, took) = after(&itrim, &strim);
    assert!(
        took,
        "host runs that differ in the host only take the kept device"
    );
    assert_eq!(copied, fresh(&strim));
    assert_ne!(
        copied,
        fresh(&itrim),
        "the two schemes differ: the test compares something"
    );
    // Registering the swap range with the device (DISS) is something the device was told before
    // aging: a run that registers never takes a device aged without it, nor the reverse.
    let registered = phone(5, "register_range = true");
    for (before, then) in [(&itrim, &registered), (&registered, &itrim)] {
        let (report, took) = after(before, then);
        assert!(!took, "registration differs: no copy");
        assert_eq!(report, fresh(then));
    }
    // Hybrid runs: another stand-in after the same aging takes the copy, whatever the manager (its
    // state is copied with the device); another seed or manager does not.
    for manager in ["static", "ust", "rl"] {
        let (pc, phone) = (hybrid(7, "pc", manager), hybrid(7, "phone", manager));
        let (copied, took) = after(&pc, &phone);
        assert!(
            took,
            "{manager}: the same hybrid aging takes the kept device"
        );
        assert_eq!(copied, fresh(&phone), "{manager}");
        assert_ne!(copied, fresh(&pc), "{manager}: the two stand-ins differ");
    }
    for other in [hybrid(8, "phone", "static"), hybrid(7, "phone", "dwa")] {
        let (report, took) = after(&hybrid(7, "pc", "static"), &other);
        assert!(
            !took,
            "a different hybrid aging must not take the kept device"
        );
        assert_eq!(report, fresh(&other));
    }
    // The last run of a group takes the kept device itself (keeping off): the same report, nothing left.
    aged::clear();
    run(&block(3, "greedy", false));
    aged::set_keeping(false);
    let copies = aged::copies();
    let last = run(&block(3, "greedy", true));
    assert!(aged::copies() > copies && !aged::holds());
    assert_eq!(last, fresh(&block(3, "greedy", true)));

    // Several agings kept at once (DISS's schemes, scenario after scenario): each later run finds its
    // own, whatever ran between, and reports what aging its own would.
    let agings: Vec<String> = (0..aged::KEPT_MAX as u64 + 1)
        .map(|s| block(10 + s, "greedy", false))
        .collect();
    aged::clear();
    aged::set_keeping(true);
    for a in &agings[..3] {
        run(a);
    }
    assert_eq!(aged::held(), 3, "three agings, three kept devices");
    for a in agings[..3].iter().rev() {
        let copies = aged::copies();
        let report = run(&a.replace("interval_host_bytes = 0", "interval_host_bytes = 8388608"));
        assert!(
            aged::copies() > copies,
            "a kept aging is found among several"
        );
        assert_eq!(
            report,
            fresh(&a.replace("interval_host_bytes = 0", "interval_host_bytes = 8388608"))
        );
        // `fresh` forgot them all: keep the three again for the next round.
        aged::set_keeping(true);
        for b in &agings[..3] {
            run(b);
        }
    }
    // At most KEPT_MAX: one more aging sends the least recently used away (the first one kept).
    for a in &agings[3..] {
        run(a);
    }
    assert_eq!(aged::held(), aged::KEPT_MAX);
    let copies = aged::copies();
    run(&agings[0]);
    assert_eq!(
        aged::copies(),
        copies,
        "the least recently used aging left first"
    );
    // (It aged and was kept in place of the next least recent, the second.)
    run(&agings[2]);
    assert!(aged::copies() > copies, "a more recent one stayed");
    // A run that does not keep takes its own aging's device and leaves the others.
    aged::set_keeping(false);
    let held = aged::held();
    run(&agings[3]);
    assert_eq!(aged::held(), held - 1);
    run(&agings[1]);
    assert_eq!(
        aged::held(),
        held - 1,
        "a run not keeping ages its own and keeps nothing"
    );
    aged::clear();
    assert!(!aged::holds());
}
