//! Hand-computed scenarios: textbook reference strings with known faults and evictions.

use serde_json::json;

use crate::report;
use crate::{one, run, set};
use nandstack_host::vm::page::{is_present, is_swap, pte_frame, F_ACTIVE};

/// 3 or 4 data frames (+2 page-table pages), one page per reclaim, no readahead, no workingset.
fn textbook(policy: &str, frames: u64, refs: &str) -> nandstack_sim::hostrun::Sim {
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

fn faults(s: &nandstack_sim::hostrun::Sim) -> u64 {
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
    // 3 frames, SWAP_CLUSTER_MAX 1, writes issued when the pass's block plug is finished.
    // W1 W2 W3 fill the inactive list (tail → head: 1 2 3), all young.
    // W4: pass 1 finds 1, 2, 3 young: PG_referenced set, kept. Pass 2: each is referenced but not
    //     young → gets a slot, is unmapped and queued for writing (3 pages, one request). Writeback
    //     completion rotates 1, 2, 3 to the tail (3 last, so at the very tail); pass 3 frees 3.
    // W1: page 1 is still in the swap cache: a minor fault, its slot freed (write).
    // R3: major fault (one page read); the charge frees 2 (clean swap-cache copy: no write).
    // W5: 1 (W1), 4 (W4) and 3 (R3) are young: kept. The retry writes 1 and 4 and frees 3, whose
    //     clean copy is still on swap.
    let s = textbook("linux", 3, "W1 W2 W3 W4 W1 R3 W5");
    let ptes = &s.host.vm.ptes;
    let resident: Vec<u32> = (1..6).filter(|&p| is_present(ptes[p as usize])).collect();
    let swapped: Vec<u32> = (1..6).filter(|&p| is_swap(ptes[p as usize])).collect();
    assert_eq!(resident, vec![5]);
    assert_eq!(swapped, vec![1, 2, 3, 4]);
    assert_eq!(s.host.stats.pswpout, 5);
    assert_eq!(s.host.stats.pswpin, 1);
    assert_eq!(s.host.stats.faults[1], 1, "one swap-cache hit (W1)");
    assert_eq!(
        s.host.swap.used, 4,
        "slots of 1, 2, 3, 4 (1 and 4 rewritten to new slots)"
    );
}

#[test]
fn linux_activates_a_page_referenced_across_reclaim_passes() {
    // 256 frames; page 1 is written between every new page of a stream of 3000 pages used once:
    // reclaim finds it young twice (PG_referenced from the first time) and activates it, after which
    // it is never swapped out while the stream is. (The very first reclaim finds every page young —
    // all kept — and its retry writes every page it then scans, page 1 included: at most one fault.)
    let mut refs = String::from("W1");
    for k in 2..3000 {
        refs.push_str(&format!(" W{k} W1"));
    }
    let mut c = one(
        256 + 2,
        json!({"type": "inline", "pages": 3000, "refs": refs}),
    );
    set(&mut c, &["host", "reclaim"], json!({"workingset": false}));
    let s = run(&c, true);
    let p1 = s.host.vm.ptes[1];
    assert!(is_present(p1));
    assert!(s.host.vm.frames[pte_frame(p1) as usize].has(F_ACTIVE));
    assert!(s.host.stats.pgactivate >= 1);
    assert!(s.host.stats.pswpout >= 2500);
    assert!(
        s.host.stats.faults[0] + s.host.stats.faults[1] <= 1,
        "page 1 left more than once"
    );
}

#[test]
fn a_read_of_an_untouched_page_maps_the_zero_page() {
    let s = textbook("linux", 3, "R1 R2 R3 R4 R5 W1");
    assert_eq!(s.host.stats.zero_page_maps, 5);
    assert_eq!(s.host.stats.pswpout, 0);
    let r = report(&s);
    // One page allocated (W1) + two page-table pages.
    assert_eq!(r["cgroups"][1]["max_usage_pages"], 3);
}
