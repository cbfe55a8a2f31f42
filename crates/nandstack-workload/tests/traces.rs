//! Trace readers against the real shared traces (counts checked against `shared/traces/MANIFEST.md`),
//! compressed input, and property tests: no input, however broken, makes a reader panic.

use std::collections::BTreeSet;
use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};

use nandstack_core::Error;
use nandstack_workload::block::Op;
use nandstack_workload::trace::{
    decompress, detect_compression, open, scan, Compression, TraceFormat, TraceOptions,
    TraceReader, TraceRecord, TraceStats,
};
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------------
// The shared traces
// ---------------------------------------------------------------------------------------------------

/// `shared/traces/block`, found from this crate's directory; `None` (and a message) when absent.
fn shared_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/block");
    if dir.is_dir() {
        Some(dir)
    } else {
        println!(
            "skipping: ../shared/traces not found (looked for {})",
            dir.display()
        );
        None
    }
}

/// What a shared trace must contain. Counts come from the MANIFEST; `max_end_bytes` and `last_ns` were
/// computed independently with a Python script (exact decimal arithmetic) over the same files.
struct Expect {
    file: &'static str,
    format: TraceFormat,
    records: u64,
    reads: u64,
    writes: u64,
    trims: u64,
    max_end_bytes: u64,
    last_ns: Option<u64>,
    /// Rows earlier than the row just before them in the file (the reorder window sorts them: arrivals
    /// come out non-decreasing).
    out_of_order: u64,
    /// Data lines the reader skips on purpose (WiscSee `C` lines).
    skipped: u64,
    /// Distinct `device` values.
    devices: usize,
}

const fn expect(
    file: &'static str,
    format: TraceFormat,
    records: u64,
    reads: u64,
    writes: u64,
) -> Expect {
    Expect {
        file,
        format,
        records,
        reads,
        writes,
        trims: 0,
        max_end_bytes: 0,
        last_ns: None,
        out_of_order: 0,
        skipped: 0,
        devices: 1,
    }
}

/// Every file of `shared/traces/block` and what it must contain.
fn expectations() -> Vec<Expect> {
    use TraceFormat::*;
    let with = |e: Expect, max_end_bytes: u64, last_ns: Option<u64>| Expect {
        max_end_bytes,
        last_ns,
        ..e
    };
    vec![
        with(
            expect("msr_cambridge_hm0_sample.csv", Msr, 1_000, 508, 492),
            13_575_029_248,
            Some(127_233_494_100),
        ),
        with(
            expect(
                "cloudphysics_vscsi_sample.csv",
                CloudPhysics,
                113_872,
                46_974,
                66_898,
            ),
            33_584_938_496,
            Some(7_200_089_885_000),
        ),
        with(
            expect(
                "cloudphysics_w106_blocks.u32le.xz",
                U32Blocks,
                5_292_456,
                5_292_456,
                0,
            ),
            (1_197_769 + 1) * 4096,
            None,
        ),
        // 1,297 rows carry the second before the first row's (the file goes back in time at 144 places):
        // the window sorts them first, at 0, and the rest arrive at 1 s.
        Expect {
            devices: 2_038,
            out_of_order: 144,
            ..with(
                expect(
                    "tencent_cbs_sample.csv.bz2",
                    TencentCbs,
                    50_000,
                    24_521,
                    25_479,
                ),
                1_669_048_770_560,
                Some(1_000_000_000),
            )
        },
        Expect {
            out_of_order: 243,
            ..with(
                expect("systor17_traces_sample.csv.gz", Systor17, 999, 826, 173),
                5_029_321_633_280,
                // The earliest row is 6.791 ms before the first.
                Some(2_447_767_000),
            )
        },
        Expect {
            out_of_order: 299,
            ..with(
                expect("systor17_additional_sample.csv.gz", Systor17, 999, 700, 299),
                4_982_565_600_256,
                Some(1_330_616_000),
            )
        },
        with(
            expect("arc_OLTP.lis.zst", Arc, 914_145, 914_145, 0),
            95_683_072,
            None,
        ),
        with(
            expect("arc_P2.lis.zst", Arc, 666_176, 666_176, 0),
            3_959_478_784,
            None,
        ),
        with(
            expect("arc_P3.lis.zst", Arc, 238_578, 238_578, 0),
            5_375_362_560,
            None,
        ),
        with(
            expect("arc_P6.lis.zst", Arc, 519_711, 519_711, 0),
            5_253_569_536,
            None,
        ),
        with(
            expect("arc_P12.lis.zst", Arc, 547_147, 547_147, 0),
            5_259_407_360,
            None,
        ),
        with(
            expect(
                "disksim_ssd_iozone_100K.trace",
                Disksim,
                100_000,
                0,
                100_000,
            ),
            17_255_907_328,
            Some(936_449_109_000),
        ),
        with(
            expect(
                "disksim_ssd_postmark.trace",
                Disksim,
                62_257,
                51_780,
                10_477,
            ),
            22_892_470_272,
            Some(490_436_763_000),
        ),
        // Disks 0 and 1 of hplajw; one week (7 days minus ~11 minutes).
        Expect {
            devices: 2,
            ..with(
                expect("hpl_ajw_1week.srt", HpSrt, 44_519, 13_040, 31_479),
                334_876_672,
                Some(603_064_588_892_000),
            )
        },
        Expect {
            devices: 16,
            ..with(
                expect("mqsim_tpcc_small.trace", Mqsim, 6_999, 4_381, 2_618),
                232_713_410_560,
                Some(136_489_000),
            )
        },
        Expect {
            devices: 6,
            ..with(
                expect("mqsim_wsrch_small.trace", Mqsim, 24_783, 24_779, 4),
                17_902_723_072,
                Some(60_055_212_000),
            )
        },
        Expect {
            devices: 22,
            ..with(
                expect(
                    "ssdsim_example_financial1_10k.ascii",
                    Ssdsim,
                    10_000,
                    4_078,
                    5_922,
                ),
                513_235_456,
                Some(259_601_203_125),
            )
        },
        // The MANIFEST's "9,990 write, 8 read, 2 discard" counts all 10,000 event lines (D and C); each
        // request has a D and (unless the excerpt cut it off) a C line. D lines alone: 5,008 requests.
        Expect {
            trims: 1,
            skipped: 4_992,
            ..with(
                expect(
                    "wiscsee_sqlitewal_update_events.txt",
                    Wiscsee,
                    5_008,
                    4,
                    5_003,
                ),
                542_076_928,
                Some(1_412_912_035),
            )
        },
        with(
            expect(
                "heimdall_msr_cut_10k_rw_20_80.105.trace",
                Heimdall,
                10_000,
                2_020,
                7_980,
            ),
            14_958_249_472,
            Some(242_904_693_000),
        ),
        with(
            expect(
                "heimdall_msr_cut_10k_rw_40_60.1370.trace",
                Heimdall,
                10_000,
                4_054,
                5_946,
            ),
            14_857_613_312,
            Some(85_915_075_000),
        ),
        with(
            expect(
                "heimdall_msr_cut_10k_most_thpt_rand_iops.1006.trace",
                Heimdall,
                10_000,
                8_316,
                1_684,
            ),
            12_665_090_048,
            Some(1_017_077_000),
        ),
    ]
}

fn check_shared(name: &str) {
    let Some(dir) = shared_dir() else { return };
    let all = expectations();
    let e = all
        .iter()
        .find(|e| e.file == name)
        .unwrap_or_else(|| panic!("no expectation for {name}"));
    let path = dir.join(e.file);
    let mut reader = open(&path, e.format).unwrap_or_else(|err| panic!("{}: {err}", e.file));
    let mut stats = TraceStats::default();
    let mut devices = BTreeSet::new();
    let mut previous: Option<u64> = None;
    let mut decreasing = 0u64;
    for record in reader.by_ref() {
        let record = record.unwrap_or_else(|err| panic!("{}: {err}", e.file));
        if stats.records == 0 {
            let first = if e.format.has_time() { Some(0) } else { None };
            assert_eq!(record.arrival_ns, first, "{}: first arrival", e.file);
        }
        assert_eq!(
            record.arrival_ns.is_some(),
            e.format.has_time(),
            "{}: time presence",
            e.file
        );
        if let (Some(p), Some(t)) = (previous, record.arrival_ns) {
            decreasing += u64::from(t < p);
        }
        previous = record.arrival_ns;
        assert!(record.len > 0);
        devices.insert(record.device);
        stats.add(&record);
    }
    let split = (stats.records, stats.reads, stats.writes, stats.trims);
    assert_eq!(
        split,
        (e.records, e.reads, e.writes, e.trims),
        "{}: records, reads, writes, trims",
        e.file
    );
    assert_eq!(
        stats.max_end_bytes, e.max_end_bytes,
        "{}: max_end_bytes",
        e.file
    );
    assert_eq!(stats.last_ns, e.last_ns, "{}: last_ns", e.file);
    assert_eq!(reader.skipped(), e.skipped, "{}: skipped lines", e.file);
    assert_eq!(devices.len(), e.devices, "{}: distinct devices", e.file);
    assert_eq!(decreasing, 0, "{}: arrivals come out in time order", e.file);
    assert_eq!(
        (reader.out_of_order(), reader.late()),
        (e.out_of_order, 0),
        "{}: rows earlier than a row before them, and rows too late for the window",
        e.file
    );
    assert_eq!(
        scan(&path, e.format).unwrap(),
        stats,
        "{}: scan() agrees with iteration",
        e.file
    );
}

#[test]
fn every_shared_trace_has_an_expectation() {
    let Some(dir) = shared_dir() else { return };
    let known: BTreeSet<&str> = expectations().iter().map(|e| e.file).collect();
    let mut found = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            known.contains(name.as_str()),
            "{name}: new shared trace without an expectation in tests/traces.rs"
        );
        found.insert(name);
    }
    assert_eq!(
        found.len(),
        known.len(),
        "expected files missing from {}",
        dir.display()
    );
}

macro_rules! shared_trace_tests {
    ($($test:ident => $file:literal,)*) => {$(
        #[test]
        fn $test() {
            check_shared($file);
        }
    )*};
}

shared_trace_tests! {
    shared_msr_hm0 => "msr_cambridge_hm0_sample.csv",
    shared_cloudphysics_vscsi => "cloudphysics_vscsi_sample.csv",
    shared_cloudphysics_w106 => "cloudphysics_w106_blocks.u32le.xz",
    shared_tencent => "tencent_cbs_sample.csv.bz2",
    shared_systor17_traces => "systor17_traces_sample.csv.gz",
    shared_systor17_additional => "systor17_additional_sample.csv.gz",
    shared_arc_oltp => "arc_OLTP.lis.zst",
    shared_arc_p2 => "arc_P2.lis.zst",
    shared_arc_p3 => "arc_P3.lis.zst",
    shared_arc_p6 => "arc_P6.lis.zst",
    shared_arc_p12 => "arc_P12.lis.zst",
    shared_disksim_iozone => "disksim_ssd_iozone_100K.trace",
    shared_disksim_postmark => "disksim_ssd_postmark.trace",
    shared_hp_srt_ajw => "hpl_ajw_1week.srt",
    shared_mqsim_tpcc => "mqsim_tpcc_small.trace",
    shared_mqsim_wsrch => "mqsim_wsrch_small.trace",
    shared_ssdsim_financial1 => "ssdsim_example_financial1_10k.ascii",
    shared_wiscsee => "wiscsee_sqlitewal_update_events.txt",
    shared_heimdall_20_80 => "heimdall_msr_cut_10k_rw_20_80.105.trace",
    shared_heimdall_40_60 => "heimdall_msr_cut_10k_rw_40_60.1370.trace",
    shared_heimdall_rand => "heimdall_msr_cut_10k_most_thpt_rand_iops.1006.trace",
}

#[test]
fn shared_compression_is_detected_by_magic() {
    let Some(dir) = shared_dir() else { return };
    for (file, kind) in [
        ("tencent_cbs_sample.csv.bz2", Compression::Bzip2),
        ("systor17_traces_sample.csv.gz", Compression::Gzip),
        ("arc_P3.lis.zst", Compression::Zstd),
        ("cloudphysics_w106_blocks.u32le.xz", Compression::Xz),
        ("hpl_ajw_1week.srt", Compression::None),
        ("msr_cambridge_hm0_sample.csv", Compression::None),
    ] {
        assert_eq!(detect_compression(&dir.join(file)).unwrap(), kind, "{file}");
    }
}

#[test]
fn shared_hp_srt_first_records() {
    let Some(dir) = shared_dir() else { return };
    let first: Vec<TraceRecord> = open(&dir.join("hpl_ajw_1week.srt"), TraceFormat::HpSrt)
        .unwrap()
        .take(3)
        .collect::<Result<_, _>>()
        .unwrap();
    // Words: sec 0 / usec 0, 4096 B at sector 1056 of dev 0x08000107 (disk 1, swap section 7), flags 27
    // (bit 0: read); then usec 22479, sector 1040; then 2048 B at sector 12256 of dev 0x0800000f.
    let rec = |arrival_ns, op, offset, len, device| TraceRecord {
        arrival_ns: Some(arrival_ns),
        op,
        offset,
        len,
        device,
    };
    assert_eq!(
        first,
        vec![
            rec(0, Op::Read, 1056 * 256, 4096, 1),
            rec(22_479_000, Op::Read, 1040 * 256, 4096, 1),
            rec(35_279_000, Op::Read, 12_256 * 256, 2048, 0),
        ]
    );
}

#[test]
fn missing_file_is_an_io_error() {
    match open(Path::new("/nonexistent/trace.csv"), TraceFormat::Msr) {
        Err(Error::Io { path, .. }) => assert_eq!(path, "/nonexistent/trace.csv"),
        Err(e) => panic!("expected an I/O error, got {e}"),
        Ok(_) => panic!("expected an I/O error"),
    }
}

// ---------------------------------------------------------------------------------------------------
// Compressed input
// ---------------------------------------------------------------------------------------------------

/// A deterministic MQSim-format trace of `lines` requests.
fn synthetic_mqsim(lines: u64) -> String {
    let mut s = String::new();
    for i in 0..lines {
        let lba = (i * 7_919) % 1_000_003;
        s.push_str(&format!(
            "{} {} {} {} {}\n",
            i * 1_000 + i % 7,
            i % 4,
            lba,
            8 + (i % 3) * 8,
            i % 2
        ));
    }
    s
}

fn compress_all(plain: &[u8]) -> Vec<(Compression, Vec<u8>)> {
    let gz = {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(plain).unwrap();
        e.finish().unwrap()
    };
    let bz = {
        let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
        e.write_all(plain).unwrap();
        e.finish().unwrap()
    };
    let xz = {
        let mut e =
            lzma_rust2::XzWriter::new(Vec::new(), lzma_rust2::XzOptions::default()).unwrap();
        e.write_all(plain).unwrap();
        e.finish().unwrap()
    };
    let zst = ruzstd::encoding::compress_to_vec(plain, ruzstd::encoding::CompressionLevel::Fastest);
    vec![
        (Compression::Gzip, gz),
        (Compression::Bzip2, bz),
        (Compression::Xz, xz),
        (Compression::Zstd, zst),
    ]
}

#[test]
fn compressed_files_parse_like_the_plain_file() {
    let dir = tempfile::tempdir().unwrap();
    let plain = synthetic_mqsim(20_000);
    let plain_path = dir.path().join("trace.txt");
    std::fs::write(&plain_path, &plain).unwrap();
    let expected: Vec<TraceRecord> = open(&plain_path, TraceFormat::Mqsim)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(expected.len(), 20_000);
    for (kind, bytes) in compress_all(plain.as_bytes()) {
        // A misleading extension on purpose: detection is by magic bytes only.
        let path = dir.path().join(format!("trace_{}.txt", kind.name()));
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(detect_compression(&path).unwrap(), kind);
        let got: Vec<TraceRecord> = open(&path, TraceFormat::Mqsim)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(got == expected, "{} input parses differently", kind.name());
        assert_eq!(
            scan(&path, TraceFormat::Mqsim).unwrap(),
            scan(&plain_path, TraceFormat::Mqsim).unwrap()
        );
    }
}

#[test]
fn corrupt_compressed_input_is_an_io_error() {
    let plain = synthetic_mqsim(2_000);
    for (kind, mut bytes) in compress_all(plain.as_bytes()) {
        let cut = bytes.len() / 2;
        bytes.truncate(cut);
        let reader = TraceReader::from_reader(
            Cursor::new(bytes),
            "cut",
            TraceFormat::Mqsim,
            TraceOptions::default(),
        );
        let result: Result<Vec<TraceRecord>, Error> = reader.and_then(|r| r.collect());
        assert!(
            matches!(result, Err(Error::Io { .. })),
            "{}: {result:?}",
            kind.name()
        );
    }
}

// ---------------------------------------------------------------------------------------------------
// Property tests: never panic
// ---------------------------------------------------------------------------------------------------

/// Valid sample lines per format, the seeds of the mutation tests.
fn samples(format: TraceFormat) -> &'static [u8] {
    match format {
        TraceFormat::Msr => b"128166385295514663,hm,0,Write,9056014336,2048,2833\n128166385295514878,hm,1,Read,11855351808,512,2617\n",
        TraceFormat::Blkparse => b"  8,0    3        1     0.000000000  4162  Q  WS 3417048 + 8 [kworker/u8:0]\n  8,0    3        6     0.000007026  4162  D  WS 3417048 + 8 [kworker/u8:0]\n  8,16   2        2     0.001500000  5000  D  DS 2048 + 2048 [fstrim]\nTotal (8,0):\n",
        TraceFormat::Disksim => b"5265.313 0 6357144 8 0\n5265.703 0 6307768 8 1\n",
        TraceFormat::Mqsim => b"938513000 4 264719034 16 0\n938828000 3 197570570 16 1\n",
        TraceFormat::Ssdsim => b"0 0 303567 7 0\n78643005 1 55596 6 1\n",
        TraceFormat::FioIolog => b"fio version 2 iolog\n/dev/sda add\n/dev/sda open\n/dev/sda write 0 4096\n/dev/sda trim 8192 4096\n/dev/sda close\n",
        TraceFormat::TencentCbs => b"1538323200,4247200,128,1,1058\n1538323199,13896880,128,0,1063\n",
        TraceFormat::CloudPhysics => b"version,time,op,size,lbn\n1,5633898368802,2a,512,42932745\n1,5633898611441,28,512,42932746\n",
        TraceFormat::Systor17 => b"Timestamp,Response,IOType,LUN,Offset,Size\n1455591804.310701000,0.006475000,R,0,203468398592,32768\n1455591804.318699000,0.005276000,W,0,4590576115200,4096\n",
        TraceFormat::Heimdall => b"0.000 0 200626176 4096 0\n223.412 0 3159347200 36864 1\n",
        TraceFormat::Wiscsee => b"39949 D read 299008 4096 0.000000000 0 False\n0 C read 299008 4096 0.000122793 0.000122793 False\n1386 D discard 136314880 4096 0.439239477 4.43e-06 False\n",
        TraceFormat::Arc => b"1936993 8 0 0\n793041 16 0 1\n",
        // Header with a sector size, then two 56-byte records (big-endian words).
        TraceFormat::HpSrt => HP_SAMPLE,
        TraceFormat::U32Blocks => &[1, 0, 0, 0, 0x49, 0x46, 0x12, 0x00],
        TraceFormat::Kswap => b"time_s,op,sector,sectors,comm\n8911.668896,W,8,1024,memtouch\n8911.669213,R,1032,8,memtouch\n8911.7,D,2048,4096,kworker\n",
    }
}

const HP_SAMPLE: &[u8] = b"$$TR_IOREC-1.3\nsectorsize = 256;\n\x0c\
\x00\x00\x00\x38\x00\x04\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xae\x00\x00\x4c\xe7\x00\x00\x10\x00\
\x00\x00\x04\x20\x08\x00\x01\x07\x00\x00\x00\x04\x00\x00\x00\x01\x00\x00\x00\x1b\x00\x07\x00\x00\x00\x00\x00\x01\
\x00\x00\x00\x38\x00\x04\x00\x01\x00\x00\x00\x1e\x00\x02\xcf\xa0\x00\x00\x00\x92\x00\x00\x90\x23\x00\x00\x20\x00\
\x00\x0a\x48\xf0\x08\x00\x00\x08\x00\x00\x00\x04\x00\x00\x02\xe9\x00\x08\x81\x0a\x00\x22\x00\x0f\x00\x00\x00\x01";

/// Parse plain `bytes` as `format` and check the contract: records are sane, the only error kind is
/// `Error::Trace`, and nothing comes after an error.
fn check_never_panics(format: TraceFormat, bytes: Vec<u8>) -> Result<(), TestCaseError> {
    let mut reader = TraceReader::new(
        Box::new(Cursor::new(bytes)),
        "fuzz",
        format,
        TraceOptions::default(),
    );
    let mut errored = false;
    for item in reader.by_ref() {
        prop_assert!(!errored, "an item after an error");
        match item {
            Ok(r) => {
                prop_assert!(r.len > 0);
                prop_assert!(r.offset.checked_add(r.len).is_some());
                if !format.has_time() {
                    prop_assert!(r.arrival_ns.is_none());
                } else if format != TraceFormat::FioIolog {
                    prop_assert!(r.arrival_ns.is_some());
                }
            }
            Err(Error::Trace { file, text, .. }) => {
                prop_assert_eq!(file, "fuzz");
                prop_assert!(text.chars().count() <= 201);
                errored = true;
            }
            Err(other) => prop_assert!(false, "unexpected error kind: {other}"),
        }
    }
    prop_assert!(reader.next().is_none(), "the reader is fused after the end");
    Ok(())
}

/// One edit of a byte string.
#[derive(Clone, Debug)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, u8),
    Delete(usize),
    Duplicate(usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let interesting = prop::sample::select(vec![
        b'0', b'9', b'-', b'.', b',', b' ', b'\n', b'e', b'+', b'x', 0xff, 0x0c, 0,
    ]);
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<usize>(), interesting).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Delete),
        (any::<usize>(), 1usize..40).prop_map(|(i, n)| Mutation::Duplicate(i, n)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn apply(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let n = bytes.len().max(1);
        match *m {
            Mutation::Flip(i, b) => {
                if let Some(x) = bytes.get_mut(i % n) {
                    *x = b;
                }
            }
            Mutation::Insert(i, b) => bytes.insert(i % (bytes.len() + 1), b),
            Mutation::Delete(i) => {
                if !bytes.is_empty() {
                    bytes.remove(i % n);
                }
            }
            Mutation::Duplicate(i, len) => {
                let start = i % n;
                let end = (start + len).min(bytes.len());
                let copy: Vec<u8> = bytes.get(start..end).unwrap_or_default().to_vec();
                bytes.splice(start.min(bytes.len())..start.min(bytes.len()), copy);
            }
            Mutation::Truncate(i) => bytes.truncate(i % n),
        }
    }
    bytes
}

fn format_strategy() -> impl Strategy<Value = TraceFormat> {
    prop::sample::select(TraceFormat::ALL.to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(format in format_strategy(), bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        check_never_panics(format, bytes)?;
    }

    #[test]
    fn arbitrary_text_never_panics(format in format_strategy(), text in "[0-9a-zA-Z ,.+\\-\\n\\[\\]()#]{0,400}") {
        check_never_panics(format, text.into_bytes())?;
    }

    #[test]
    fn mutated_valid_lines_never_panic(format in format_strategy(), mutations in prop::collection::vec(mutation(), 1..6)) {
        check_never_panics(format, apply(samples(format).to_vec(), &mutations))?;
    }

    #[test]
    fn arbitrary_compressed_looking_input_never_panics(
        format in format_strategy(),
        magic in prop::sample::select(vec![&[0x1fu8, 0x8b][..], &b"BZh9"[..], &[0xfd, b'7', b'z', b'X', b'Z', 0][..], &[0x28, 0xb5, 0x2f, 0xfd][..]]),
        tail in prop::collection::vec(any::<u8>(), 0..512),
    ) {
        let mut bytes = magic.to_vec();
        bytes.extend(tail);
        // Decoder failures are I/O errors (corrupt stream), never panics.
        match decompress(Cursor::new(bytes)) {
            Err(_) => {}
            Ok((_, reader)) => {
                for item in TraceReader::new(reader, "fuzz", format, TraceOptions::default()) {
                    match item {
                        Ok(_) | Err(Error::Trace { .. }) | Err(Error::Io { .. }) => {}
                        Err(other) => prop_assert!(false, "unexpected error kind: {other}"),
                    }
                }
            }
        }
    }
}

#[test]
fn samples_are_valid() {
    for format in TraceFormat::ALL {
        let records: Vec<TraceRecord> = TraceReader::new(
            Box::new(Cursor::new(samples(format).to_vec())),
            "s",
            format,
            TraceOptions::default(),
        )
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{format}: {e}"));
        assert!(records.len() >= 2, "{format}: {records:?}");
    }
}

// ---------------------------------------------------------------------------------------------------
// Throughput (release only): cargo test --release -p nandstack-workload --test traces -- --ignored
// ---------------------------------------------------------------------------------------------------

#[test]
#[ignore = "throughput measurement; run in release"]
fn text_throughput() {
    let lines = 4_000_000u64;
    let plain = synthetic_mqsim(lines);
    let msr: String = (0..lines)
        .map(|i| {
            format!(
                "{},hm,0,{},{},4096,2833\n",
                128_166_385_295_514_663 + i * 37,
                if i % 3 == 0 { "Read" } else { "Write" },
                i * 4096
            )
        })
        .collect();
    for (format, text) in [(TraceFormat::Mqsim, plain), (TraceFormat::Msr, msr)] {
        let bytes = text.into_bytes();
        let start = std::time::Instant::now();
        let mut stats = TraceStats::default();
        for r in TraceReader::new(
            Box::new(Cursor::new(bytes)),
            "bench",
            format,
            TraceOptions::default(),
        ) {
            stats.add(&r.unwrap());
        }
        let secs = start.elapsed().as_secs_f64();
        assert_eq!(stats.records, lines);
        println!(
            "{format}: {lines} lines in {secs:.3} s = {:.2} M lines/s",
            lines as f64 / secs / 1e6
        );
    }
}
