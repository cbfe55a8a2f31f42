//! DISS through the one runner (docs/diss.md): host programs on an aged device (`[precondition]` ages
//! the device for host programs only when asked), and a kernel swap capture (`format = "kswap"`)
//! replayed with its swap range registered, so the device invalidates swap data on read.

use nandstack_core::Error;
use nandstack_sim::{run_toml, RunOptions};
use serde_json::Value;

fn opts(verify: bool) -> RunOptions {
    RunOptions {
        verify,
        ..RunOptions::default()
    }
}

const DEVICE: &str =
    "[device]\nkind = \"block\"\n[device.geometry]\nchannels = 2\nchips_per_channel = 1\n\
    dies_per_chip = 1\nplanes_per_die = 2\nblocks_per_plane = 512\npages_per_block = 64\n\
    page_size_bytes = 4096\n[device.ftl]\nover_provisioning = 0.25\n";

/// A small phone switching apps on a 64 MiB host; `extra` is appended (TOML).
fn phone(extra: &str) -> String {
    format!(
        "[workload]\nkind = \"host\"\nfootprint_fraction = 0.5\n[[workload.processes]]\nname = \"phone\"\n\
         workload = {{ type = \"mobile\", scenario = \"game\", minute_ms = 20.0, foreground_refs_per_ms = 300, \
         background_refs_per_ms = 10, apps = [{{ anon_mib = 12, file_mib = 6 }}, {{ anon_mib = 20, file_mib = 8 }}, \
         {{ anon_mib = 14, file_mib = 6 }}, {{ anon_mib = 16, file_mib = 4 }}] }}\n\
         [host]\nram_mib = 48\n[host.pagecache]\noffset_mib = 0\n[host.swap]\nsize_mib = 96\noffset_mib = 200\n\
         {DEVICE}{extra}"
    )
}

fn json(r: &nandstack_sim::Report) -> Value {
    serde_json::to_value(r).unwrap()
}

#[test]
fn host_programs_start_fresh_unless_precondition_ages_the_device() {
    let fresh = run_toml(&phone(""), &opts(true)).unwrap();
    let aged = run_toml(
        &phone("[precondition]\nfill_fraction = 0.5\nwarmup_capacity_multiples = 2.0\n"),
        &opts(true),
    )
    .unwrap();
    assert!(fresh.verified && aged.verified);
    // Same host program: the same swap traffic reaches both devices.
    let (f, a) = (fresh.host.as_ref().unwrap(), aged.host.as_ref().unwrap());
    assert!(f["pswpout"].as_u64().unwrap() > 1000, "{}", f["pswpout"]);
    assert!(a["pswpout"].as_u64().unwrap() > 1000);
    // The fresh device holds no file data but what the flusher wrote; on the aged one the apps' files
    // lie inside the filled half, so every file read finds data on flash.
    let file =
        |r: &nandstack_sim::Report, k: &str| r.host.as_ref().unwrap()["file"][k].as_u64().unwrap();
    assert!(file(&fresh, "read_pages_no_data") > file(&fresh, "read_pages") / 2);
    assert_eq!(file(&aged, "read_pages_no_data"), 0);
    assert!(file(&aged, "read_pages") > 1000);
}

/// A capture of three requests on page 1–4 of the swap device: a write, a read (a normal swap-in),
/// the same read again (a swap-in-and-in: nothing was written between).
const CAPTURE: &str =
    "time_s,op,sector,sectors,comm\n1.000000,W,8,32,memtouch\n1.000100,R,8,32,memtouch\n\
                       1.000200,R,8,32,memtouch\n";

fn replay(register: bool, invalidate: bool) -> Result<Value, Error> {
    let dir = std::env::temp_dir().join(format!("nandstack-diss-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("capture.csv");
    std::fs::write(&path, CAPTURE).unwrap();
    let range = if register {
        "swap_range = { offset_mib = 0, size_mib = 64 }\n"
    } else {
        ""
    };
    let cfg = format!(
        "[workload]\nkind = \"trace\"\n[workload.trace]\npath = \"{}\"\nformat = \"kswap\"\n{range}\
         [workload.io]\nmode = \"open_loop\"\n{DEVICE}[device.ftl.swap]\ninvalidate_on_read = {invalidate}\n\
         [precondition]\nfill_fraction = 0.0\nwarmup_capacity_multiples = 0.0\n",
        path.display()
    );
    run_toml(&cfg, &opts(true)).map(|r| json(&r))
}

#[test]
fn a_swap_capture_replayed_with_its_range_registered_is_invalidated_on_read() {
    let r = replay(true, true).unwrap();
    assert_eq!(r["host_write_requests"], 1);
    assert_eq!(r["host_read_requests"], 2);
    // The first read invalidates the four pages it read; the second finds no data — the swap-in-and-in
    // a kernel without the clean-data handler would have lost.
    assert_eq!(r["swap_invalidated_pages"], 4);
    assert_eq!(r["unmapped_read_pages"], 4);
    for (register, invalidate) in [(false, true), (true, false)] {
        let r = replay(register, invalidate).unwrap();
        assert_eq!(r["swap_invalidated_pages"], 0);
        assert_eq!(r["unmapped_read_pages"], 0);
    }
}

#[test]
fn a_swap_range_outside_the_device_is_a_named_error() {
    let cfg =
        "[workload]\nkind = \"trace\"\n[workload.trace]\npath = \"x.csv\"\nformat = \"kswap\"\n\
               swap_range = { offset_mib = 1000000, size_mib = 64 }\n";
    let e = run_toml(cfg, &opts(false)).unwrap_err().to_string();
    assert!(e.contains("workload.trace.swap_range"), "{e}");
}

/// SSDSim's stock aging (`aged_data = "invalid"`): the filled half is programmed and then invalid, but
/// for the apps' files, which stay valid (every file read finds data). GC therefore never copies aged
/// data: with GC running, fewer pages move than on the valid-aged device, and never more than the
/// device's valid pages (the files and what the run itself wrote) could give. Bad combinations are
/// named errors.
#[test]
fn invalid_aging_leaves_only_the_files_valid() {
    // 384 of each plane's 512 blocks filled; GC keeps 90 free, so it runs after 38 blocks a plane.
    let age = "[device.ftl.gc]\nstart_free_blocks = 90\nstop_free_blocks = 91\n\
               [precondition]\nfill_fraction = 1.0\nwarmup_capacity_multiples = 0.0\n";
    let valid = run_toml(&phone(age), &opts(true)).unwrap();
    let invalid = run_toml(
        &phone(&format!("{age}aged_data = \"invalid\"\n")),
        &opts(true),
    )
    .unwrap();
    assert!(valid.verified && invalid.verified);
    let file =
        |r: &nandstack_sim::Report, k: &str| r.host.as_ref().unwrap()["file"][k].as_u64().unwrap();
    assert_eq!(file(&invalid, "read_pages_no_data"), 0);
    assert!(file(&invalid, "read_pages") > 1000);
    let (v, i) = (json(&valid), json(&invalid));
    let moved = |r: &Value| r["gc_migrated_pages"].as_u64().unwrap();
    assert!(moved(&v) > 0, "GC runs on the valid-aged device");
    assert!(moved(&i) < moved(&v), "{} vs {}", moved(&i), moved(&v));
    for bad in [
        "fill_order = \"random\"\naged_data = \"invalid\"\n",
        "warmup_capacity_multiples = 1.0\naged_data = \"invalid\"\n",
    ] {
        let cfg = phone(&format!("[precondition]\nfill_fraction = 1.0\n{bad}"));
        let e = run_toml(&cfg, &opts(false)).unwrap_err().to_string();
        assert!(e.contains("precondition.aged_data"), "{e}");
    }
}
