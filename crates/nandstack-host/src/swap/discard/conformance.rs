//! The shared conformance test of the discard policies: random swap-layer event sequences (allocate,
//! write, swap in, free) against a shadow of which slots hold data the host will read again (written and
//! neither read back nor freed — the clean-data handler rewrites a swapped-in page if it is evicted).
//! Every range a policy asks for, re-checked with `discardable` when it is issued a few events later as
//! the swap layer does, must hold no such slot, lie inside the area and never touch the header; deferred
//! TRIMs must be submitted inside the idle window they were asked for.

use super::IdleTrimConfig;
use super::*;
use crate::swap::{MAP_BAD, MAP_CACHE};
use nandstack_core::{Nanos, Rng};

const SLOTS: u32 = 256;

fn policies() -> Vec<Box<dyn DiscardPolicy>> {
    let idle = IdleTrimConfig {
        idle_ms: 1.0,
        requests_per_round: 3,
        round_interval_ms: 2.0,
        max_slots: 16,
    };
    vec![
        Box::new(NoDiscard),
        Box::new(ClusterDiscard),
        Box::new(FineDiscard::new(8)),
        Box::new(IdleTrim::new(&idle)),
        Box::new(SwapInTrim::new(SLOTS, 32, &idle)),
    ]
}

#[derive(Clone, Copy, PartialEq)]
enum St {
    Free,
    Allocated,
    Live,
    SwappedIn,
}

#[test]
fn discard_policies_never_trim_data_the_host_needs() {
    for seed in 1..=4u64 {
        for mut p in policies() {
            let name = p.name();
            let mut rng = Rng::new(seed);
            let mut map = vec![0u8; SLOTS as usize];
            map[0] = MAP_BAD;
            let mut st = vec![St::Free; SLOTS as usize];
            let mut queued: Vec<(u32, u32)> = Vec::new();
            let (mut now, mut idle_from) = (0u64, 0u64);
            let mut trimmed = 0u64;
            let mut issue = |p: &dyn DiscardPolicy, map: &[u8], st: &[St], r: (u32, u32)| {
                assert!(
                    r.1 > 0 && r.0 + r.1 <= SLOTS,
                    "{name}: range {r:?} outside the area"
                );
                for s in r.0..r.0 + r.1 {
                    if p.discardable(s, map) {
                        assert!(s != 0, "{name}: the header is discardable");
                        assert!(
                            st[s as usize] != St::Live,
                            "{name}: slot {s} holds live data"
                        );
                        trimmed += 1;
                    }
                }
            };
            for step in 0..20_000u32 {
                now += rng.below(300_000);
                let s = 1 + rng.below(SLOTS as u64 - 1) as u32;
                let mut out = Vec::new();
                match (st[s as usize], rng.below(4)) {
                    (St::Free, _) => {
                        map[s as usize] = MAP_CACHE;
                        st[s as usize] = St::Allocated;
                    }
                    (St::Allocated, 0..=2) | (St::SwappedIn, 0) => {
                        p.slot_written(s);
                        st[s as usize] = St::Live;
                        idle_from = idle_from.max(now + 50_000);
                    }
                    (St::Live, 0..=1) => {
                        p.slot_read(s, &map, &mut out);
                        st[s as usize] = St::SwappedIn;
                        idle_from = idle_from.max(now + 20_000);
                    }
                    _ => {
                        map[s as usize] = 0;
                        st[s as usize] = St::Free;
                        p.slot_freed(s, &map, &mut out);
                    }
                }
                for &r in &out {
                    assert!(
                        (r.0..r.0 + r.1).all(|x| st[x as usize] != St::Live),
                        "{name}: asked to trim live data at step {step}"
                    );
                }
                queued.extend(out);
                // The swap layer issues queued ranges at the end of the fault or reclaim pass.
                if step % 7 == 0 {
                    for r in std::mem::take(&mut queued) {
                        issue(p.as_ref(), &map, &st, r);
                    }
                }
                if step % 5 == 0 {
                    while let Some((at, first, n)) =
                        p.next_deferred(Nanos(idle_from), Nanos(now), &map)
                    {
                        let at = at.0;
                        assert!(
                            at >= idle_from && at < now,
                            "{name}: TRIM at {at} outside the idle window"
                        );
                        issue(p.as_ref(), &map, &st, (first, n));
                    }
                }
            }
            if matches!(name, "fine" | "itrim" | "strim") {
                assert!(
                    trimmed > 0,
                    "{name}: nothing was ever trimmed (seed {seed})"
                );
            }
        }
    }
}
