//! Memtouch programs of every shape (pattern × read-only/write-only × discard) on the kernel-swap
//! captures' setup (`kswap::config_json`) at a footprint/limit ratio no published capture has (4:3),
//! run to the end with read-after-write verification: the model must finish every shape, and the
//! rules that hold whatever the shape must hold.

use nandstack_host::kswap::{self, Capture, SwapSummary};
use nandstack_host::HostSimConfig;

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
                let cfg = HostSimConfig::from_json(&kswap::config_json(&c).to_string()).unwrap();
                let sim = nandstack_host::run_config(&cfg, true, &mut |_, _, _| true)
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
            }
        }
    }
}
