//! The memory estimate (`nandstack_sim::limits`) against what the engine really allocates: a counting
//! global allocator records the peak bytes live while a config is built and run, and the estimate must
//! cover it without overstating it much — on devices of every kind, with and without verification,
//! caches and buffers, for host programs and for a trace replay's reorder window. Also: a config over
//! `run.memory_limit_bytes` is refused before anything is allocated.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use nandstack_sim::limits::{estimate, BASE_BYTES};
use nandstack_sim::{run_toml, RunOptions, SimConfig};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// The run driver's address-space probe reserves exactly the estimate (and frees it untouched): an
/// allocation of this size is not counted.
static PROBE: AtomicUsize = AtomicUsize::new(usize::MAX);
/// One measurement at a time (the counters are process-wide).
static SERIAL: Mutex<()> = Mutex::new(());

#[allow(unsafe_code)]
// SAFETY: forwards to the system allocator unchanged; only counts the bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() && layout.size() != PROBE.load(Ordering::Relaxed) {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        if layout.size() != PROBE.load(Ordering::Relaxed) {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            if new_size >= layout.size() {
                let now = LIVE.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size
                    - layout.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Peak bytes allocated above the starting level while `f` runs. The tables an earlier run's device
/// handed back (`nandstack_core::alloc::keep`) are freed first: the run allocates its own.
fn peak_during(f: impl FnOnce()) -> u64 {
    nandstack_core::alloc::release_kept();
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    f();
    (PEAK.load(Ordering::Relaxed) - base) as u64
}

/// Run `toml` (with `verify`) and compare the peak with the estimate (its tables plus the fixed cost).
fn check(name: &str, toml: &str, verify: bool) {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cfg = SimConfig::from_toml(toml).unwrap();
    let est = estimate(&cfg, verify, true).unwrap().total_bytes();
    PROBE.store(est as usize, Ordering::Relaxed);
    let opts = RunOptions {
        verify,
        ..RunOptions::default()
    };
    let peak = peak_during(|| {
        run_toml(toml, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    });
    let ratio = est as f64 / peak as f64;
    println!("{name}: estimate {est} B, peak {peak} B, ratio {ratio:.3}");
    assert!(
        est >= peak && (est - BASE_BYTES) as f64 <= 1.35 * peak as f64,
        "{name}: the estimate ({est} B) must cover the peak allocation ({peak} B), its tables within 1.35×"
    );
}

/// The default 16 GiB block device, filled, briefly warmed up and run.
const BLOCK: &str =
    "[workload]\nrequests = 20000\n[precondition]\nwarmup_capacity_multiples = 0.01\n\
                     [device.timing]\nenabled = false\n";

#[test]
fn block_device_tables() {
    check("block", BLOCK, false);
    check("block --verify", BLOCK, true);
}

#[test]
fn block_device_with_write_buffer_and_mapping_cache() {
    let toml = format!(
        "{BLOCK}[device.controller.write_buffer]\nbytes = 268435456\n\
         [device.ftl.mapping_cache]\nentries = 1000000\n"
    );
    check("block + write buffer + mapping cache", &toml, false);
}

#[test]
fn hybrid_device_tables() {
    let toml = "[device]\nkind = \"hybrid\"\n[device.hybrid]\nwrite_buffer_bytes = 67108864\n\
                [workload]\nkind = \"standin\"\nstandin = { name = \"pc\", scale = 0.002 }\n";
    check("hybrid", toml, false);
    check("hybrid --verify", toml, true);
    let ust = toml.replace(
        "kind = \"hybrid\"",
        "kind = \"hybrid\"\nmanager = { kind = \"ust\" }",
    );
    check("hybrid ust", &ust, false);
}

/// A run after another device's run: the tables that device handed back are freed before the run
/// allocates tables of other lengths, never held beside them (so a run's peak is its own, or the kept
/// tables' when they are bigger).
#[test]
fn tables_kept_from_another_device_do_not_add_to_a_run() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let paper = "[device]\nkind = \"hybrid\"\n\
                 [workload]\nkind = \"standin\"\nstandin = { name = \"pc\", scale = 0.002 }\n";
    let quarter = paper.replace(
        "kind = \"hybrid\"\n",
        "kind = \"hybrid\"\nhybrid = { page_bytes = 4096 }\n",
    );
    let opts = RunOptions::default();
    let run = |toml: &str| {
        let cfg = SimConfig::from_toml(toml).unwrap();
        PROBE.store(
            estimate(&cfg, false, true).unwrap().total_bytes() as usize,
            Ordering::Relaxed,
        );
        drop(run_toml(toml, &opts).unwrap());
    };
    nandstack_core::alloc::release_kept();
    let base = LIVE.load(Ordering::Relaxed);
    run(paper);
    let kept = nandstack_core::alloc::kept_bytes() as u64;
    assert!(
        kept > 50 << 20,
        "the paper device's tables are kept: {kept} B"
    );
    PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
    run(&quarter);
    let beside = (PEAK.load(Ordering::Relaxed) - base) as u64;
    let alone = peak_during(|| run(&quarter));
    println!("kept {kept} B, quarter alone {alone} B, after the paper device {beside} B");
    assert!(
        beside <= kept.max(alone) + (1 << 20),
        "peak {beside} B after the paper device: its {kept} B of tables were held beside the \
         quarter device's {alone} B"
    );
}

#[test]
fn zoned_device_and_block_layer_tables() {
    let toml = "[device]\nkind = \"zoned\"\n[workload]\nrequests = 50000\n\
                [precondition]\nfill_fraction = 1.0\n";
    check("zoned", toml, false);
    check("zoned --verify", toml, true);
    let big = toml.replace(
        "kind = \"zoned\"\n",
        "kind = \"zoned\"\nzoned = { geometry = { blocks_per_plane = 1024 } }\n",
    );
    check("zoned, 8x the blocks", &big, false);
}

#[test]
fn host_frames_page_tables_and_swap_maps() {
    let toml = "[workload]\nkind = \"host\"\n[[workload.processes]]\nname = \"m\"\n\
                workload = { type = \"memtouch\", pages = 262144, ops = 20000, pattern = \"uniform\", \
                write_pct = 50, seed = 1 }\n\
                [host]\nram_mib = 512\n[host.swap]\nsize_mib = 2048\n\
                [device.geometry]\nblocks_per_plane = 2048\n[device.timing]\nenabled = false\n";
    check("host", toml, false);
}

#[test]
fn trace_reorder_window() {
    // Serialised from the start: building and freeing the trace text (megabytes) while another test
    // measures its peak would hide that much of its allocation.
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("nandstack-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.trace");
    // 300,000 MQSim rows, all within the default 10 s window: the window holds them all.
    let text: String = (0..300_000u64)
        .map(|i| format!("{} 0 {} 8 0\n", i * 1000, (i * 7919 % 100_000) * 8))
        .collect();
    std::fs::write(&path, text).unwrap();
    let toml = format!(
        "[workload]\nkind = \"trace\"\ntrace = {{ path = \"{}\", format = \"mqsim\", \
         reorder_window_rows = 300000 }}\n[precondition]\nfill_fraction = 0.0\n\
         warmup_capacity_multiples = 0.0\n[device.timing]\nenabled = false\n",
        path.display()
    );
    let cfg = SimConfig::from_toml(&toml).unwrap();
    let window = estimate(&cfg, false, true)
        .unwrap()
        .parts
        .iter()
        .find(|p| p.what == "trace reorder window")
        .map(|p| p.bytes)
        .unwrap();
    let without = toml.replace("reorder_window_rows = 300000", "reorder_window_rows = 0");
    let opts = RunOptions::default();
    let peak = |toml: &str| {
        let cfg = SimConfig::from_toml(toml).unwrap();
        PROBE.store(
            estimate(&cfg, false, true).unwrap().total_bytes() as usize,
            Ordering::Relaxed,
        );
        peak_during(|| drop(run_toml(toml, &opts).unwrap()))
    };
    let with_window = peak(&toml);
    let no_window = peak(&without);
    let held = with_window.saturating_sub(no_window);
    println!("reorder window: estimate {window} B, measured {held} B");
    assert!(
        window >= held && (window as f64) < 3.0 * held as f64,
        "window estimate {window} B vs {held} B held"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn over_the_limit_is_refused_before_allocating() {
    let toml = "[run]\nmemory_limit_bytes = 1000000\n";
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut err = None;
    PROBE.store(usize::MAX, Ordering::Relaxed);
    let peak = peak_during(|| err = run_toml(toml, &RunOptions::default()).err());
    let msg = err.expect("refused").to_string();
    assert!(msg.contains("config error at `device.geometry`"), "{msg}");
    assert!(msg.contains("run.memory_limit_bytes"), "{msg}");
    assert!(peak < 1 << 20, "{peak} bytes allocated before refusing");
    // Validation alone refuses it too (an explicit limit is part of the config).
    let json = serde_json::to_string(&toml::from_str::<toml::Value>(toml).unwrap()).unwrap();
    assert!(nandstack_sim::validate_config_json(&json).is_err());
}

/// The compressed-swap and zoned-swap presets: zswap's pool and tree, zram's table, ZNSwap's zone and
/// slot maps, and (host-ezswap) the Silesia files the launch cycle's pages are made of.
#[test]
fn host_presets_with_compressed_and_zoned_swap() {
    for name in ["host-zswap", "host-zram", "host-znswap", "host-ezswap"] {
        let toml = nandstack_sim::presets::preset(name)
            .unwrap()
            .toml
            .to_string();
        if name == "host-ezswap" {
            let cfg = SimConfig::from_toml(&toml).unwrap();
            let launch = cfg
                .workload
                .processes
                .iter()
                .find_map(|p| match &p.workload {
                    nandstack_host::config::WorkloadConfig::Launch(c) => Some(c.clone()),
                    _ => None,
                });
            if nandstack_host::workloads::launch::corpus_bytes(&launch.expect("a launch program"))
                == 0
            {
                eprintln!(
                    "SKIP host-ezswap: the Silesia zips (../shared/traces/compress or \
                     $NANDSTACK_CORPUS_DIR) are absent"
                );
                continue;
            }
        }
        check(name, &toml, false);
    }
}
