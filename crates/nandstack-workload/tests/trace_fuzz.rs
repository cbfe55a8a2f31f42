//! Time order and malformed lines, as properties: the reorder window keeps every record and releases
//! them in time order, its counts match a direct count over the file, a window too small makes late
//! records (never lost), and lenient mode turns every malformed text line into a count, never an error.
//! The `#[ignore]`d `fuzz_*` tests run the readers on many more random inputs (docs/testing.md):
//! `NANDSTACK_FUZZ_CASES=100000 cargo test --release -p nandstack-workload --test trace_fuzz -- --ignored`.

use std::io::Cursor;

use nandstack_core::Error;
use nandstack_workload::trace::{Malformed, TraceFormat, TraceOptions, TraceReader, TraceRecord};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

fn read(
    text: &[u8],
    format: TraceFormat,
    options: TraceOptions,
) -> (Vec<Result<TraceRecord, Error>>, TraceReader) {
    let mut reader = TraceReader::new(Box::new(Cursor::new(text.to_vec())), "f", format, options);
    let items = reader.by_ref().collect();
    (items, reader)
}

fn window(rows: u64, ns: u64, max_late: u64) -> TraceOptions {
    TraceOptions {
        reorder_window_rows: rows,
        reorder_window_ns: ns,
        max_late_rows: max_late,
        ..TraceOptions::default()
    }
}

/// MQSim lines `time 0 lba 8 op`, one per time, the lba naming the row.
fn mqsim(times: &[u64]) -> Vec<u8> {
    times
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{t} 0 {} 8 {}\n", i * 8, i % 2))
        .collect::<String>()
        .into_bytes()
}

/// Times: mostly increasing, with some rows moved back by up to `jitter`.
fn times() -> impl Strategy<Value = Vec<u64>> {
    (1usize..300, 0u64..5_000, any::<u64>()).prop_map(|(n, jitter, seed)| {
        let mut x = seed | 1;
        (0..n as u64)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let back = if x % 4 == 0 { x % (jitter + 1) } else { 0 };
                (1_000_000 + i * 1000).saturating_sub(back)
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// A window larger than the trace sorts it whole: every record once, arrivals in time order,
    /// relative to the earliest, the out-of-order count equal to a direct count of the places where time goes
    /// backwards, nothing late.
    #[test]
    fn a_large_window_sorts_every_record(times in times()) {
        let (items, reader) = read(&mqsim(&times), TraceFormat::Mqsim, window(1 << 20, u64::MAX, 0));
        let records: Vec<TraceRecord> = items.into_iter().collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(records.len(), times.len());
        let mut sorted: Vec<(u64, u64)> = times.iter().enumerate().map(|(i, &t)| (t, i as u64 * 8 * 512)).collect();
        sorted.sort();
        let first = sorted[0].0;
        let got: Vec<(u64, u64)> = records.iter().map(|r| (r.arrival_ns.unwrap(), r.offset)).collect();
        let want: Vec<(u64, u64)> = sorted.iter().map(|&(t, o)| (t - first, o)).collect();
        prop_assert_eq!(got, want);
        let direct = times.windows(2).filter(|w| w[1] < w[0]).count() as u64;
        prop_assert_eq!((reader.out_of_order(), reader.late()), (direct, 0));
    }

    /// Any window: nothing is lost or duplicated, arrivals never decrease, late records are counted
    /// (an error only past `max_late_rows`).
    #[test]
    fn any_window_keeps_every_record(times in times(), rows in 0u64..50, ns in 0u64..20_000, max_late in 0u64..10) {
        let (items, reader) = read(&mqsim(&times), TraceFormat::Mqsim, window(rows, ns, max_late));
        let failed = items.iter().any(|r| r.is_err());
        let records: Vec<TraceRecord> = items.into_iter().filter_map(Result::ok).collect();
        prop_assert!(records.windows(2).all(|w| w[0].arrival_ns <= w[1].arrival_ns));
        if failed {
            prop_assert_eq!(reader.late(), max_late + 1);
        } else {
            prop_assert!(reader.late() <= max_late);
            let mut offsets: Vec<u64> = records.iter().map(|r| r.offset).collect();
            offsets.sort_unstable();
            let want: Vec<u64> = (0..times.len() as u64).map(|i| i * 8 * 512).collect();
            prop_assert_eq!(offsets, want);
        }
    }

    /// Lenient mode: garbage lines between good ones are skipped and counted; the good ones all arrive.
    #[test]
    fn lenient_mode_skips_and_counts_malformed_lines(
        good in 1usize..50,
        garbage in prop::collection::vec("[ -~]{0,30}", 0..20),
    ) {
        let mut text = String::new();
        let mut bad = 0u64;
        for (i, g) in garbage.iter().enumerate() {
            text.push_str(&format!("{} 0 {} 8 1\n", i * 10, i * 8));
            let g = g.trim();
            if !g.is_empty() && !g.starts_with('#') {
                text.push_str(&format!("x{g}\n"));
                bad += 1;
            }
        }
        for i in garbage.len()..garbage.len() + good {
            text.push_str(&format!("{} 0 {} 8 1\n", i * 10, i * 8));
        }
        let lenient = TraceOptions { malformed: Malformed::Lenient, ..TraceOptions::default() };
        let (items, reader) = read(text.as_bytes(), TraceFormat::Mqsim, lenient);
        prop_assert!(items.iter().all(|r| r.is_ok()));
        prop_assert_eq!(items.len(), garbage.len() + good);
        prop_assert_eq!(reader.malformed(), bad);
        let (strict, _) = read(text.as_bytes(), TraceFormat::Mqsim, TraceOptions::default());
        prop_assert_eq!(strict.iter().any(|r| r.is_err()), bad > 0);
    }
}

/// Cases for the `#[ignore]`d fuzz tests: `NANDSTACK_FUZZ_CASES`, default 100,000.
fn fuzz_cases() -> u32 {
    std::env::var("NANDSTACK_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000)
}

/// The reader contract on any input: records are sane and in time order, the only errors are trace
/// and I/O errors, nothing follows an error; lenient text readers give no trace error but fio's
/// missing header at the end.
fn contract(
    format: TraceFormat,
    bytes: Vec<u8>,
    options: TraceOptions,
) -> Result<(), TestCaseError> {
    let mut reader = TraceReader::from_reader(Cursor::new(bytes), "fuzz", format, options)
        .map_err(|e| TestCaseError::fail(format!("{e}")));
    let Ok(reader) = reader.as_mut() else {
        return Ok(());
    };
    let mut errored = false;
    let mut last = None;
    for item in reader.by_ref() {
        prop_assert!(!errored, "an item after an error");
        match item {
            Ok(r) => {
                prop_assert!(r.len > 0 && r.offset.checked_add(r.len).is_some());
                prop_assert!(r.arrival_ns >= last || r.arrival_ns.is_none());
                last = r.arrival_ns.or(last);
            }
            Err(Error::Io { .. }) => errored = true,
            Err(Error::Trace { msg, .. }) => {
                let lenient = options.malformed == Malformed::Lenient && !format.is_binary();
                prop_assert!(
                    // Lenient mode skips malformed lines; what is left may still be too many late
                    // rows, or no request at all (an empty or all-malformed file).
                    !lenient
                        || format == TraceFormat::FioIolog
                        || msg.contains("reorder window")
                        || msg.contains("no request"),
                    "lenient {format}: {msg}"
                );
                errored = true;
            }
            Err(other) => prop_assert!(false, "unexpected error kind: {other}"),
        }
    }
    Ok(())
}

fn options() -> impl Strategy<Value = TraceOptions> {
    (0u64..64, 0u64..1_000_000, 0u64..4, any::<bool>()).prop_map(|(rows, ns, late, lenient)| {
        TraceOptions {
            reorder_window_rows: rows,
            reorder_window_ns: ns,
            max_late_rows: late,
            malformed: if lenient {
                Malformed::Lenient
            } else {
                Malformed::Strict
            },
            ..TraceOptions::default()
        }
    })
}

#[test]
#[ignore = "fuzzing: many cases (NANDSTACK_FUZZ_CASES); run in release, see docs/testing.md"]
fn fuzz_trace_readers_on_arbitrary_bytes() {
    let mut runner = TestRunner::new(Config {
        cases: fuzz_cases(),
        failure_persistence: None,
        ..Config::default()
    });
    let format = prop::sample::select(TraceFormat::ALL.to_vec());
    let bytes = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..4096),
        "[0-9a-zA-Z ,.+\\-\\n\\[\\]()#:]{0,2000}".prop_map(String::into_bytes),
        times().prop_map(|t| mqsim(&t)),
    ];
    runner
        .run(&(format, bytes, options()), |(f, b, o)| contract(f, b, o))
        .unwrap();
}
