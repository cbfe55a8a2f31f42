//! Outputs others can replay: the host's block trace (blkparse and MSR) read back by the trace
//! readers of nandstack-workload, and the reference file (nsref) replayed to the same result.

use std::path::Path;

use nandstack_workload::trace::{open, TraceFormat};
use serde_json::json;

use crate::{memtouch, one, run_report, set};

fn count(path: &Path, fmt: TraceFormat) -> usize {
    let mut n = 0;
    for r in open(path, fmt).unwrap() {
        r.unwrap();
        n += 1;
    }
    n
}

#[test]
fn block_trace_is_readable_by_the_trace_readers() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = one(1024, memtouch(2048, 10_000, "uniform", 50, 3));
    set(
        &mut c,
        &["host", "swap", "discard", "mode"],
        json!("cluster"),
    );
    set(&mut c, &["host", "swap", "cluster_slots"], json!(256));
    for (fmt, tf) in [
        ("blkparse", TraceFormat::Blkparse),
        ("msr", TraceFormat::Msr),
    ] {
        let path = dir.path().join(format!("trace.{fmt}"));
        set(
            &mut c,
            &["run", "block_trace"],
            json!({"path": path.display().to_string(), "format": fmt}),
        );
        let r = run_report(&c, false);
        let s = &r["swap"];
        let rw = s["read_requests"].as_u64().unwrap() + s["write_requests"].as_u64().unwrap();
        let expect = if fmt == "msr" {
            rw
        } else {
            rw + s["discard_requests"].as_u64().unwrap()
        };
        assert_eq!(count(&path, tf) as u64, expect, "{fmt}");
    }
}

#[test]
fn a_reference_file_replays_to_the_same_result() {
    let dir = tempfile::tempdir().unwrap();
    let refs = dir.path().join("run.nsref");
    let mut c = one(1024, memtouch(2048, 20_000, "hot", 70, 9));
    set(
        &mut c,
        &["run", "refs_out"],
        json!(refs.display().to_string()),
    );
    let a = run_report(&c, false);
    let mut c2 = one(
        1024,
        json!({"type": "trace", "path": refs.display().to_string(), "format": "nsref"}),
    );
    set(&mut c2, &["run", "refs_out"], serde_json::Value::Null);
    let b = run_report(&c2, false);
    for k in ["pswpin", "pswpout", "read_requests", "write_requests"] {
        assert_eq!(a["swap"][k], b["swap"][k], "{k}");
    }
    assert_eq!(a["references"], b["references"]);
}
