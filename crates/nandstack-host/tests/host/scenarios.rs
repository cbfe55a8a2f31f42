//! Hand-computed scenarios: textbook reference strings with known faults and evictions.

use serde_json::json;

use crate::{one, run, set};
use nandstack_host::vm::page::{is_present, is_swap, pte_frame, F_ACTIVE};

/// 3 or 4 data frames (+2 page-table pages), one page per reclaim, no readahead, no workingset.
fn textbook(policy: &str, frames: u64, refs: &str) -> nandstack_host::Sim {
    let mut c = one(
        frames + 2,
        json!({"type": "inline", "pages": 8, "refs": refs}),
    );
    set(
        &mut c,
        &["host", "reclaim"],
        json!({"policy": policy, "swap_cluster_max": 1, "workingset": false}),
    );
    run(&c, true)
}

fn faults(s: &nandstack_host::Sim) -> u64 {
    let f = &s.host.stats.faults;
    f[0] + f[1] + f[2]
}

const BELADY: &str = "W1 W2 W3 W4 W1 W2 W5 W1 W2 W3 W4 W5";

#[test]
fn fifo_belady_anomaly() {
    // FIFO on 1 2 3 4 1 2 5 1 2 3 4 5: 9 faults with 3 frames, 10 with 4 (Belady's anomaly).
    assert_eq!(faults(&textbook("fifo", 3, BELADY)), 9);
    assert_eq!(faults(&textbook("fifo", 4, BELADY)), 10);
    // Every eviction of a dirty page writes it: with 3 frames, 9 faults − 3 resident = 6 evictions.
    let s = textbook("fifo", 3, BELADY);
    assert_eq!(s.host.stats.pswpout, 6);
    assert_eq!(s.host.stats.pswpin, 4);
}

#[test]
fn clock_second_chance_by_hand() {
    // Hand-traced: evictions 1 2 4 1 2 3 … give faults on 1 2 3 4 1 2 5 3 4 — 9 faults.
    let s = textbook("clock", 3, BELADY);
    assert_eq!(faults(&s), 9);
    // The three resident pages at the end are 5, 3, 4.
    let present: Vec<u32> = (1..6)
        .filter(|&p| is_present(s.host.vm.ptes[p as usize]))
        .collect();
    assert_eq!(present, vec![3, 4, 5]);
}

#[test]
fn linux_split_lru_by_hand() {
    // 3 frames, SWAP_CLUSTER_MAX 1. W1 W2 W3 fill the inactive list. W4: the first reclaim pass
    // finds 1, 2, 3 young (PG_referenced set, kept); the retry writes 1 (referenced, not young),
    // which rotates to the tail when written and is freed. W1 refaults: 2 is written and freed.
    // R3 makes 3 young again. W5: 3 is young and PG_referenced → activated; 4 and 1 are young →
    // kept; the retry writes 4 and frees it.
    let s = textbook("linux", 3, "W1 W2 W3 W4 W1 R3 W5");
    let ptes = &s.host.vm.ptes;
    let resident: Vec<u32> = (1..6).filter(|&p| is_present(ptes[p as usize])).collect();
    let swapped: Vec<u32> = (1..6).filter(|&p| is_swap(ptes[p as usize])).collect();
    assert_eq!(resident, vec![1, 3, 5]);
    assert_eq!(swapped, vec![2, 4]);
    assert_eq!(s.host.stats.pswpout, 3);
    assert_eq!(s.host.stats.pswpin, 1);
    let f3 = pte_frame(ptes[3]);
    assert!(
        s.host.vm.frames[f3 as usize].has(F_ACTIVE),
        "page 3 was activated"
    );
    assert_eq!(s.host.stats.pgactivate, 1);
}

#[test]
fn a_read_of_an_untouched_page_maps_the_zero_page() {
    let s = textbook("linux", 3, "R1 R2 R3 R4 R5 W1");
    assert_eq!(s.host.stats.zero_page_maps, 5);
    assert_eq!(s.host.stats.pswpout, 0);
    let r = nandstack_host::report::report(&s);
    // One page allocated (W1) + two page-table pages.
    assert_eq!(r["cgroups"][1]["max_usage_pages"], 3);
}
