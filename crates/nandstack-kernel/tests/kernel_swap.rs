//! Ground truth: run the model on every real-kernel swap capture in `../shared/traces/kernel-swap/` (the
//! repetitions of a program grouped) with the capture's parameters on the captures' setup
//! (`kswap::config`), and compare with the kernel's range over the repetitions. Fails when a page
//! volume (swap-in, swap-out) lies more than 10% outside the range, a mean request size (pages per read,
//! per write) more than 25% outside, a discarding capture's discards are not whole clusters or off by
//! more than 25%, or a non-discarding one discards. The setup reads reclaim's statistics as of Linux
//! 6.18's 2 s periodic flush; a program runs at four phases of that flush, and per figure the median
//! over the phases whose runs finish is compared (a capture holds a finished run, started at some point
//! of the flusher's period). Two more tests check the flush model: against the one program whose
//! repetitions split in two (by the flush's phase), and against live statistics, which miss
//! `normal_r100_p49152`. `NANDSTACK_KERNEL_SWAP=DIR` runs the same checks on another folder of captures
//! (e.g. from `tools/capture/capture-programs.sh`; the two named-program tests skip what it lacks).
//! Skipped, with a message, when the folder is absent.

use std::path::PathBuf;

use nandstack_kernel::kswap::{self, outside, Program, SwapSummary};

fn dir() -> Option<PathBuf> {
    let d = kswap::captures_dir();
    d.is_dir().then_some(d)
}

/// (figure, tolerance outside the kernel's range)
const CHECKS: [(&str, f64); 4] = [
    ("pswpin", 0.10),
    ("pswpout", 0.10),
    ("read_pages_mean", 0.25),
    ("write_pages_mean", 0.25),
];

/// Figures held to a wider tolerance, each with the reason (docs/kernel-swap-comparison.md). None
/// now: `uniform_w100_discard` pages per write, the last one (−24.5% with the worker's wake-up tail
/// alone, on the 25% line over seeds), is −20.5% since the worker may be packed onto the reclaimer's
/// CPU (`kswap::VCPU_PACKING`). Unpinned on the traced VM the kernel writes 9.8–18.2 there (CPU
/// migration: write faults keep slots) — the captures are of a pinned-like run.
const KNOWN_DEVIATIONS: [(&str, &str, f64); 0] = [];

/// The captures' programs, or `None` (with the skip message) when the shared folder is absent.
fn programs_or_skip() -> Option<Vec<Program>> {
    let Some(dir) = dir() else {
        eprintln!(
            "SKIPPED: {} not found (../shared/traces/kernel-swap beside the repository, or ${})",
            kswap::captures_dir().display(),
            kswap::CAPTURES_ENV
        );
        return None;
    };
    let programs = kswap::programs(&dir).expect("captures load");
    assert!(!programs.is_empty(), "no capture in {}", dir.display());
    Some(programs)
}

/// The model's runs of `p` on the captures' setup with `patch` merged in (`{}`: the setup as is) that
/// finish, or the error (e.g. out of memory at every phase). Unless the patch sets the first statistics
/// flush itself, the program runs at each of `kswap::FLUSH_PHASES_MS`: a capture holds a finished run
/// started at some point of the flusher's period, and the comparison takes, per figure, the median over
/// the phases that finish (`kswap::median_figures`).
fn model(p: &Program, patch: &serde_json::Value) -> Result<Vec<SwapSummary>, String> {
    let (runs, oom) = kswap::summaries_patched(&p.captures[0], patch, false)
        .map_err(|e| format!("{}: {e}", p.name))?;
    if !oom.is_empty() {
        eprintln!(
            "{}: out of memory at first-flush phases {oom:?} ms, compared over the other {}",
            p.name,
            runs.len()
        );
    }
    Ok(runs.into_iter().map(|(_, m)| m).collect())
}

/// The one run of a patch that sets the first flush itself.
fn single(runs: Vec<SwapSummary>) -> SwapSummary {
    assert_eq!(runs.len(), 1, "a patch that sets the phase runs once");
    runs.into_iter().next().unwrap()
}

/// The captures of one program, or `None` (with the skip message) when the folder or the program is
/// absent (another folder, `NANDSTACK_KERNEL_SWAP`, may lack it).
fn named_program_or_skip(name: &str) -> Option<Program> {
    let programs = programs_or_skip()?;
    let found = programs.into_iter().find(|p| p.name == name);
    if found.is_none() {
        eprintln!("SKIPPED: {name} is not among the captures");
    }
    found
}

/// Every program through the model, two at a time (the programs are independent).
fn models(
    programs: &[Program],
    patch: &serde_json::Value,
) -> Vec<Result<Vec<SwapSummary>, String>> {
    let half = programs.len().div_ceil(2);
    std::thread::scope(|s| {
        let hs: Vec<_> = programs
            .chunks(half)
            .map(|chunk| s.spawn(move || chunk.iter().map(|p| model(p, patch)).collect::<Vec<_>>()))
            .collect();
        hs.into_iter()
            .flat_map(|h| h.join().expect("model thread"))
            .collect()
    })
}

/// What of the model's runs `runs` (their median, figure by figure) lies outside program `p`'s kernel
/// range beyond the tolerances (with `known` deviations held to theirs); prints the program's line.
fn failures(p: &Program, runs: &[SwapSummary], known: &[(&str, &str, f64)]) -> Vec<String> {
    let mut out = Vec::new();
    let mut line = format!("{:<28}", p.name);
    let figures = kswap::median_figures(runs);
    for (name, tol) in CHECKS {
        let tol = known
            .iter()
            .find(|k| k.0 == p.name && k.1 == name)
            .map_or(tol, |k| k.2);
        let v = figures.iter().find(|f| f.0 == name).expect("figure").1;
        let range = p.range(name);
        let d = outside(v, range);
        line.push_str(&format!(
            " {name} {v:.2} [{:.2}, {:.2}] {:+.1}%",
            range.0,
            range.1,
            100.0 * d
        ));
        if d.abs() > tol {
            out.push(format!(
                "{}: {name} {v:.2} is {:+.1}% outside the kernel's [{:.2}, {:.2}] (tolerance {:.0}%)",
                p.name,
                100.0 * d,
                range.0,
                range.1,
                100.0 * tol
            ));
        }
    }
    eprintln!("{line}");
    let discard = figures
        .iter()
        .find(|f| f.0 == "discard_pages")
        .expect("figure")
        .1;
    if p.captures[0].discard {
        // Whole-cluster discards (512 slots each) in every run, and as many pages as the kernel
        // discarded while the program ran.
        let range = p.range("discard_pages");
        let d = outside(discard, range);
        if runs
            .iter()
            .any(|m| m.discard_pages != m.discard_requests * 512)
            || d.abs() > 0.25
        {
            out.push(format!(
                "{}: {discard} pages discarded (median) vs the kernel's [{}, {}] pages in whole clusters",
                p.name, range.0, range.1
            ));
        }
    } else if runs.iter().any(|m| m.discard_requests != 0) {
        out.push(format!("{}: discards issued without discard", p.name));
    }
    out
}

/// The programs whose model run failed or missed a check, with `known` deviations.
fn all_failures(
    programs: &[Program],
    patch: &serde_json::Value,
    known: &[(&str, &str, f64)],
) -> Vec<String> {
    let mut out = Vec::new();
    for (p, m) in programs.iter().zip(models(programs, patch)) {
        match m {
            Ok(runs) => out.extend(failures(p, &runs, known)),
            Err(e) => out.push(e),
        }
    }
    out
}

/// The captures' setup as it is (the 6.18 statistics flush; per figure the median over the flush
/// phases that finish): every program within tolerance, `KNOWN_DEVIATIONS` held to theirs.
#[test]
fn every_capture_within_its_kernel_range() {
    let Some(programs) = programs_or_skip() else {
        return;
    };
    let failures = all_failures(&programs, &serde_json::json!({}), &KNOWN_DEVIATIONS);
    assert!(
        failures.is_empty(),
        "model differs from the kernel:\n{}",
        failures.join("\n")
    );
}

/// What delays the loop worker is what brings `uniform_w100_discard`'s write requests near the
/// kernel's: a delayed worker completes nothing, so reclaim finds nothing written back to free and
/// writes on. With neither the wake-up tail (`kswap::VCPU_WAKE_TAIL_US`) nor packing onto the
/// reclaimer's CPU (`kswap::VCPU_PACKING`) the model writes far fewer pages per request than the kernel
/// (−28.7%); each lengthens them, and the two together bring them inside the tolerance.
#[test]
fn the_workers_delays_lengthen_uniform_w100_discards_writes() {
    let Some(p) = named_program_or_skip("kswap_uniform_w100_discard") else {
        return;
    };
    let per_write = |tail: bool, packing: bool| {
        let mut backend = kswap::loop_backend_json();
        if !tail {
            backend["wake_tail"] = serde_json::json!([]);
        }
        if !packing {
            backend["packing"] = serde_json::Value::Null;
        }
        let patch = serde_json::json!({"host": {"swap": {"backend": backend}}});
        let runs = model(&p, &patch).expect("the setup runs");
        let f = kswap::median_figures(&runs);
        f.iter()
            .find(|f| f.0 == "write_pages_mean")
            .expect("figure")
            .1
    };
    let (neither, tail, both) = (
        per_write(false, false),
        per_write(true, false),
        per_write(true, true),
    );
    let range = p.range("write_pages_mean");
    let msg = format!(
        "pages per write: neither {neither:.2}, the tail {tail:.2}, tail and packing {both:.2}, \
         kernel {range:?}"
    );
    assert!(outside(neither, range) < -0.28, "{msg}");
    assert!(tail > neither * 1.04 && both > tail * 1.04, "{msg}");
    assert!(outside(both, range).abs() <= 0.25, "{msg}");
}

/// Live statistics (`host.reclaim.stats_flush_ms = 0`, kernels before 5.13) are what the flush replaced:
/// they swap in 13% more than the kernel in `normal_r100_p49152` (the stale statistics of 6.18 keep the
/// active list from being aged between flushes). Kept so that the captures keep telling the two apart.
#[test]
fn live_statistics_miss_normal_r100_p49152() {
    let Some(p) = named_program_or_skip("kswap_normal_r100_p49152") else {
        return;
    };
    let live = single(
        model(
            &p,
            &serde_json::json!({"host": {"reclaim": {"stats_flush_ms": 0, "stats_flush_first_ms": 0}}}),
        )
        .expect("live statistics run to the end"),
    );
    let flushed =
        kswap::median_figures(&model(&p, &serde_json::json!({})).expect("the setup runs"));
    let flushed_pswpin = flushed.iter().find(|f| f.0 == "pswpin").expect("figure").1;
    let range = p.range("pswpin");
    let (d_live, d_flushed) = (
        outside(live.pswpin as f64, range),
        outside(flushed_pswpin, range),
    );
    assert!(
        d_live > 0.10,
        "live statistics: {:+.1}% outside {range:?}",
        100.0 * d_live
    );
    assert!(
        d_flushed.abs() <= 0.10,
        "flushed statistics: {:+.1}% outside {range:?}",
        100.0 * d_flushed
    );
}

/// The 6.18 statistics flush (the captures' setup) against the one
/// program whose repetitions split: `hot_r100_p49152` swaps in 74 648 pages in r1 and 62 890 / 64 680 in
/// r2 / r3. r1's write burst after its fill dates its flush at ≈ 1.1 s; r2 and r3 show none, as an early
/// flush gives. The flush model must give both outcomes, each at a phase of its kind, while live
/// statistics give one number whatever the phase.
#[test]
fn the_flush_phase_gives_hot_r100_p49152s_two_kernel_outcomes() {
    let Some(p) = named_program_or_skip("kswap_hot_r100_p49152") else {
        return;
    };
    let run = |first_ms: u64| {
        let patch = serde_json::json!({"host": {"reclaim": {
            "stats_flush_ms": 2000, "stats_flush_first_ms": first_ms}}});
        single(model(&p, &patch).expect("model runs")).pswpin as f64
    };
    let kernel: Vec<f64> = p.captures.iter().map(|c| c.kernel.pswpin as f64).collect();
    let high = kernel.iter().cloned().fold(f64::MIN, f64::max);
    let low: Vec<f64> = kernel.iter().cloned().filter(|&k| k < 0.9 * high).collect();
    assert_eq!(
        low.len(),
        2,
        "two of the three runs swap in clearly less: {kernel:?}"
    );
    let (lo_min, lo_max) = (low[0].min(low[1]), low[0].max(low[1]));
    for first_ms in [0, 300, 600] {
        let m = run(first_ms);
        let d = outside(m, (lo_min, lo_max));
        assert!(
            d.abs() < 0.03,
            "first flush at {first_ms} ms: {m} swap-ins, {:+.1}% outside r2/r3's [{lo_min}, {lo_max}]",
            100.0 * d
        );
    }
    // Between the two (first flush at 0.9–1.05 s) the model runs out of memory, as the kernel's OOM
    // killer ends some runs of this program.
    for first_ms in [1100, 1200] {
        let m = run(first_ms);
        assert!(
            (m - high).abs() / high < 0.03,
            "first flush at {first_ms} ms: {m} swap-ins vs r1's {high}"
        );
    }
}
