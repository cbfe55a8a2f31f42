//! Memtouch programs of every shape (pattern × read-only/write-only × discard) on the kernel-swap
//! captures' setup (`kswap::config_json`) at a footprint/limit ratio no published capture has (4:3),
//! run to the end with read-after-write verification: the model must finish every shape, and the
//! rules that hold whatever the shape must hold.

use nandstack_kernel::kswap::{self, Capture, SwapSummary};
use nandstack_sim::SimConfig;

const PAGES: u64 = 16384;
const LIMIT_MIB: u64 = 48;

fn shape(pattern: &str, write_pct: u32, discard: bool) -> Capture {
    Capture {
        name: format!(
            "{pattern}_w{write_pct}{}",
            if discard { "_discard" } else { "" }
        ),
        pages: PAGES,
        ops: 60_000,
        pattern: pattern.into(),
        write_pct,
        seed: 11 + write_pct as u64,
        limit_mib: LIMIT_MIB,
        swap_mib: 512,
        discard,
        kernel: SwapSummary::default(),
    }
}

#[test]
fn every_memtouch_shape_runs_to_the_end_verified() {
    let limit_pages = LIMIT_MIB * 256;
    for pattern in ["uniform", "normal", "seq", "hot"] {
        for write_pct in [0, 100] {
            for discard in [false, true] {
                let c = shape(pattern, write_pct, discard);
                let cfg = SimConfig::from_value(kswap::config_json(&c)).unwrap();
                let sim = nandstack_sim::hostrun::simulate(&cfg, true)
                    .unwrap_or_else(|e| panic!("{}: {e}", c.name));
                let m = kswap::model_summary(&sim);
                let name = &c.name;
                // The fill writes every page once into a cgroup that holds three quarters of them:
                // at least the rest went to swap.
                assert!(m.pswpout >= PAGES - limit_pages, "{name}: {m:?}");
                // Read-only pages keep their swap slot while swap is less than half full (12.5%
                // here): each is written at most once.
                if write_pct == 0 {
                    assert!(m.pswpout <= PAGES, "{name}: {} pages written", m.pswpout);
                }
                // Discards only with discard on; never more than was written.
                if !discard {
                    assert_eq!(m.discard_pages, 0, "{name}");
                }
                assert!(m.discard_pages <= m.pswpout, "{name}: {m:?}");
                // The device saw exactly the pages the VM counted: pages per request summed over
                // the request-size histograms are the swap-in and swap-out counts.
                let pages =
                    |h: &[u64]| -> u64 { h.iter().enumerate().map(|(s, &n)| s as u64 * n).sum() };
                assert_eq!(pages(&m.reads.hist), m.pswpin, "{name}");
                assert_eq!(pages(&m.writes.hist), m.pswpout, "{name}");
                // Every limit or direct reclaim invocation is counted once by its depth and by the
                // pages it wrote; none writes more than was swapped out in all.
                let st = &sim.host.stats;
                let invocations = st.memcg_reclaims + st.direct_reclaims;
                assert_eq!(
                    st.reclaim_lowest_priority.iter().sum::<u64>(),
                    invocations,
                    "{name}"
                );
                assert_eq!(st.reclaim_written.count(), invocations, "{name}");
                assert!(
                    st.reclaim_writing_nothing < invocations,
                    "{name}: some write"
                );
                assert!(st.reclaim_written.max() <= m.pswpout, "{name}");
                // The per-priority sums of shrink_inactive_list are the run's scan and steal counts.
                let by = &st.shrink_inactive_by_priority;
                assert_eq!(
                    by.iter().map(|b| b.scanned).sum::<u64>(),
                    st.pgscan,
                    "{name}"
                );
                assert_eq!(
                    by.iter().map(|b| b.reclaimed).sum::<u64>(),
                    st.pgsteal,
                    "{name}"
                );
                assert!(
                    by.iter().map(|b| b.pageout).sum::<u64>() <= m.pswpout,
                    "{name}"
                );
                assert!(
                    by.iter()
                        .all(|b| b.reclaimed + b.activated + b.ref_keep <= b.scanned),
                    "{name}: {by:?}"
                );
            }
        }
    }
}

/// `kswap::run_first_finishing`, as the capture comparisons use it: a program that runs out of memory at
/// the default statistics-flush phase (uniform reads over 320 MiB in a 128 MiB cgroup: the first flush,
/// 2 s in, comes after the inactive list has emptied) is run again at the next phase, and that run is
/// the one returned, with the phase that ran out of memory named; any other error is not retried.
#[test]
fn a_program_out_of_memory_at_one_flush_phase_is_compared_at_the_next() {
    let c = Capture {
        name: "uniform_w0_p81920_l128".into(),
        pages: 81920,
        ops: 300_000,
        pattern: "uniform".into(),
        write_pct: 0,
        seed: 7 + 81920,
        limit_mib: 128,
        swap_mib: 512,
        discard: false,
        kernel: SwapSummary::default(),
    };
    // Without the worker's wake-up tail (random delays move where a run ends): the retry logic is
    // what is tested here.
    let no_tail = serde_json::json!({"host": {"swap": {"backend": {
        "kind": "loop", "wake_us": 10.0, "wake_tail": []}}}});
    let at = |phase: u64| kswap::config_patched(&c, &kswap::phase_patch(phase, &no_tail));
    let first = nandstack_sim::hostrun::simulate(&at(kswap::FLUSH_PHASES_MS[0]).unwrap(), false)
        .err()
        .expect("the default phase runs out of memory");
    assert!(kswap::is_out_of_memory(&first), "{first}");
    let (sim, phase, oom) = kswap::run_first_finishing(at, false).expect("a later phase finishes");
    assert_eq!(oom, vec![kswap::FLUSH_PHASES_MS[0]]);
    assert_eq!(phase, kswap::FLUSH_PHASES_MS[1]);
    assert!(sim.host.stats.pswpin > 100_000, "the run went to the end");
    // Not out of memory: returned at once, not retried at other phases.
    let calls = std::cell::Cell::new(0);
    let bad = kswap::run_first_finishing(
        |phase| {
            calls.set(calls.get() + 1);
            kswap::config_patched(
                &c,
                &kswap::phase_patch(phase, &serde_json::json!({"host": {"ram_mib": 0}})),
            )
        },
        false,
    );
    assert!(
        bad.is_err() && calls.get() == 1,
        "{:?} after {} configs",
        bad.err(),
        calls.get()
    );
}

/// The loop worker packed onto the task's CPU at every chance (`host.swap.backend.packing` with no
/// utilisation limit, leaving only when a wake-up says so), for every pattern, read-only and write-only,
/// with and without discard: writes it holds complete when the task next sleeps or at the tick, later
/// than first given, and the host moves their writeback. Every page is still read back as last written
/// (verification), the runs are deterministic, and the worker held, released and re-timed requests.
#[test]
fn a_packed_loop_worker_moves_writebacks_and_keeps_every_page() {
    let patch = serde_json::json!({"host": {"swap": {"backend": {
        "packing": {"max_util": 100.0, "enter": 0.5}}}}});
    let shapes = ["uniform", "normal", "seq", "hot"]
        .into_iter()
        .flat_map(|pattern| {
            [(0, false), (100, false), (30, true), (100, true)]
                .map(|(write_pct, discard)| shape(pattern, write_pct, discard))
        });
    let (mut released_early, mut total_moved) = (0, 0);
    for c in shapes {
        let run = || {
            let cfg = kswap::config_patched(&c, &patch).unwrap();
            nandstack_sim::hostrun::simulate(&cfg, true)
                .unwrap_or_else(|e| panic!("{}: {e}", c.name))
        };
        let sim = run();
        let m = kswap::model_summary(&sim);
        let name = &c.name;
        let pages = |h: &[u64]| -> u64 { h.iter().enumerate().map(|(s, &n)| s as u64 * n).sum() };
        assert_eq!(pages(&m.reads.hist), m.pswpin, "{name}");
        assert_eq!(pages(&m.writes.hist), m.pswpout, "{name}");
        assert!(m.pswpout >= PAGES - LIMIT_MIB * 256, "{name}: {m:?}");
        let r = nandstack_sim::hostrun::report::report(&sim);
        let pk = &r["swap"]["backend"]["packing"];
        let count = |v: &serde_json::Value| v.as_u64().unwrap();
        assert!(count(&pk["requests_held"]) > 0, "{name}: {pk}");
        assert!(
            count(&pk["wakes_when_packed"]["stayed"]) > 0,
            "{name}: {pk}"
        );
        released_early += count(&pk["released"]["by_read"]) + count(&pk["released"]["by_sleep"]);
        // Pages under writeback whose end moved earlier: at most every page written.
        let moved = sim.host.stats.writebacks_moved;
        assert!(moved <= m.pswpout, "{name}: {moved} of {}", m.pswpout);
        assert_eq!(
            r["swap"]["writebacks_moved"].as_u64(),
            Some(moved),
            "{name}"
        );
        total_moved += moved;
        assert_eq!(kswap::model_summary(&run()), m, "{name}: deterministic");
    }
    // Somewhere the task slept before the tick and the held writes ran early, moving writebacks.
    assert!(
        released_early > 0 && total_moved > 0,
        "{released_early} {total_moved}"
    );
}
