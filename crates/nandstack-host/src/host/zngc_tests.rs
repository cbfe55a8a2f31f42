//! Scenario tests of ZNSwap that drive the host and the GC step by step (crate-internal): the GC never
//! loses a live page and never copies a swap-cached one, page tables stay consistent when a page being
//! migrated is swapped in, written or freed between the GC's phases. Whole runs (zones holding only
//! garbage are reset without a copy, random workloads keep every invariant) are in `nandstack-sim`'s
//! tests (`tests/host/znswap.rs`).

use nandstack_core::{Nanos, Result};
use serde_json::{json, Value};

use crate::backend::znswap::{ZnSwap, ZoneUse};
use crate::config::{HostConfig, ProcessConfig};
use crate::host::{Ctx, Host};
use crate::swap::{map_count, MAP_CACHE};
use crate::vm::page::*;

/// A tiny zoned device: 2 planes × 48 blocks × 16 pages of 4 KiB, SLC; a zone is 2 blocks (32 slots),
/// 48 zones, 4 open → 3 swap-zones. One CPU, a 256-page cgroup, 3 MiB (768 slots) of swap.
fn config(workload: Value, policy: Value) -> Value {
    json!({
        "seed": 3,
        "host": {"ram_mib": 64, "cpus": 1, "readahead": {"policy": "off"},
                 "swap": {"size_mib": 3, "backend": {"kind": "znswap", "policy": policy}},
                 "cgroups": [{"name": "t", "limit_pages": 256}]},
        "processes": [{"name": "p", "cgroup": "t", "workload": workload}],
        "device": {"kind": "zoned", "zoned": {
            "geometry": {"channels": 1, "chips_per_channel": 1, "dies_per_chip": 1, "planes_per_die": 2,
                         "blocks_per_plane": 48, "pages_per_block": 16, "page_size_bytes": 4096,
                         "cell_mode": "slc"},
            "blocks_per_zone": 2, "max_open_zones": 4, "max_active_zones": 4}},
        "run": {"verify_every_refs": 2000},
    })
}

/// The host of `cfg` on its device, under verification (the threads do not run: the tests step it).
fn build(cfg: &Value) -> Host {
    let seed = cfg["seed"].as_u64().expect("a seed");
    let host: HostConfig = serde_json::from_value(cfg["host"].clone()).expect("host parses");
    let processes: Vec<ProcessConfig> =
        serde_json::from_value(cfg["processes"].clone()).expect("processes parse");
    let spec = serde_json::from_value(cfg["device"].clone()).expect("device parses");
    crate::host::test_host::build(seed, &host, &processes, &spec, true)
}

fn zn(h: &mut Host) -> &mut ZnSwap {
    h.zns().expect("ZNSwap backend")
}

/// A reference as the simulation loop makes it: a hit sets the PTE bits, a miss faults. The GC's
/// background steps do not run (the tests step it).
fn touch(h: &mut Host, ctx: &mut Ctx, vpn: u32, write: bool) -> Result<()> {
    ctx.now += Nanos(2_000);
    let pte = h.vm.ptes[vpn as usize];
    if is_present(pte) && (!write || pte & PTE_WRITE != 0) {
        h.vm.ptes[vpn as usize] = pte | PTE_YOUNG | if write { PTE_DIRTY } else { 0 };
        return Ok(());
    }
    h.fault(ctx, vpn, write)
}

fn ctx() -> Ctx {
    Ctx {
        now: Nanos(0),
        cpu: 0,
        comm: 3,
        kswapd: false,
    }
}

/// Slots of zone `z` by kind: in use by a PTE (live), swap-cache only with the page mapped (cached).
fn classify(h: &mut Host, z: u32) -> (Vec<u32>, Vec<u32>) {
    let (s0, cap) = {
        let zn = zn(h);
        (zn.slot_of(z, 0), zn.cap())
    };
    let (mut live, mut cached) = (Vec::new(), Vec::new());
    for s in s0..s0 + cap {
        let m = h.swap.map[s as usize];
        if map_count(m) > 0 {
            live.push(h.swap.owner[s as usize]);
        } else if m == MAP_CACHE {
            let c = h.swap.cache[s as usize];
            assert!(h.vm.frames[c as usize].has(F_MAPPED));
            cached.push(h.swap.owner[s as usize]);
        }
    }
    (live, cached)
}

/// Write `n` pages, then read every third of the first half back (swap-cached, mapped).
fn populate(h: &mut Host, n: u32) -> Result<(u32, Ctx)> {
    let base = h.vm.procs[0].base;
    let mut c = ctx();
    for p in 0..n {
        touch(h, &mut c, base + p, true)?;
        h.swap_backend_tick(c.now)?;
    }
    for p in (0..n / 2).step_by(3) {
        touch(h, &mut c, base + p, false)?;
        h.swap_backend_tick(c.now)?;
    }
    Ok((base, c))
}

/// The full zone with the most live and swap-cached slots of both kinds.
fn mixed_victim(h: &mut Host) -> u32 {
    let zones = zn(h).zones();
    let full: Vec<u32> = (0..zones)
        .filter(|&z| zn(h).tbl.zones[z as usize].state == ZoneUse::Full)
        .collect();
    full.into_iter()
        .max_by_key(|&z| {
            let (l, c) = classify(h, z);
            (l.len().min(c.len()), z)
        })
        .expect("a full zone")
}

/// 700 pages written once under per-core placement, and the full zone holding the most pages of
/// both kinds (live and swap-cached): the host, the first page, its context and the zone.
fn seven_hundred_pages_and_a_mixed_zone() -> (Host, u32, Ctx, u32) {
    let mut host = build(&config(
        json!({"type": "inline", "pages": 700, "refs": ""}),
        json!({"kind": "per_core"}),
    ));
    let (base, c) = populate(&mut host, 700).unwrap();
    let z = mixed_victim(&mut host);
    (host, base, c, z)
}

#[test]
fn the_gc_never_loses_a_live_page_and_never_copies_a_swap_cached_one() {
    let (mut host, base, mut c, z) = seven_hundred_pages_and_a_mixed_zone();
    let h = &mut host;
    let (live, cached) = classify(h, z);
    assert!(
        live.len() >= 5 && !cached.is_empty(),
        "zone {z}: {} live, {} cached",
        live.len(),
        cached.len()
    );
    let written_before = h.io.counters.pages[0][1];
    let gc_before = zn(h).gc.clone();
    h.zns_collect(z).unwrap();
    assert_eq!(
        h.io.counters.pages[0][1] - written_before,
        live.len() as u64
    );
    let g = &zn(h).gc;
    // Exactly the live pages were copied (the device saw those writes and no others).
    assert_eq!(g.pages_written - gc_before.pages_written, live.len() as u64);
    assert_eq!(
        g.cache_dropped - gc_before.cache_dropped,
        cached.len() as u64
    );
    // The victim is empty and reset.
    let (l, cc) = classify(h, z);
    assert!(l.is_empty() && cc.is_empty());
    assert!(matches!(
        zn(h).tbl.zones[z as usize].state,
        ZoneUse::Free | ZoneUse::Emergency
    ));
    // Live pages: still swapped, now in another zone, owned by them.
    for &v in &live {
        let pte = h.vm.ptes[v as usize];
        assert!(is_swap(pte), "page {v} is no longer swapped");
        let s = pte_slot(pte);
        assert_ne!(zn(h).zone_of(s).unwrap().0, z);
        assert_eq!(
            (h.swap.owner[s as usize], map_count(h.swap.map[s as usize])),
            (v, 1)
        );
    }
    // Cached pages: resident, their swap copy gone (dirty: the next eviction writes them).
    for &v in &cached {
        let f = pte_frame(h.vm.ptes[v as usize]);
        let fr = h.vm.frames[f as usize];
        assert!(is_present(h.vm.ptes[v as usize]) && !fr.has(F_SWAPCACHE) && fr.has(F_DIRTY));
    }
    h.check_invariants().unwrap();
    // Every page reads back what was last written (metadata reverse map and device versions checked).
    for p in 0..700 {
        touch(h, &mut c, base + p, false).unwrap();
    }
    h.check_invariants().unwrap();
}

#[test]
fn page_tables_stay_consistent_when_a_page_being_migrated_is_swapped_in_or_freed() {
    let (mut host, base, mut c, z) = seven_hundred_pages_and_a_mixed_zone();
    let h = &mut host;
    let (live, _) = classify(h, z);
    assert!(live.len() >= 4);
    let (p1, p2, p3, p4) = (live[0], live[1], live[2], live[3]);
    // Start collecting by hand: gather + read.
    {
        let zn = zn(h);
        zn.tbl.zones[z as usize].state = ZoneUse::Victim;
        zn.gc.victim = Some(z);
        zn.gc.pos = 0;
    }
    h.zns_step_now().unwrap();
    assert_eq!(zn(h).gc.batch.len(), live.len());
    // Between the read and the write: P1 is swapped in (read), P2 swapped in and written (slot freed).
    touch(h, &mut c, p1, false).unwrap();
    touch(h, &mut c, p2, true).unwrap();
    h.zns_step_now().unwrap(); // write: P1's copy is dropped, P2 skipped
    let skipped = zn(h).gc.batch.iter().filter(|it| it.dst == NONE).count();
    assert_eq!(skipped, 2);
    // Between the write and the activation: P3 swapped in (read), P4 swapped in and written.
    touch(h, &mut c, p3, false).unwrap();
    touch(h, &mut c, p4, true).unwrap();
    let freed_before = zn(h).gc.pages_freed_in_flight;
    h.zns_step_now().unwrap(); // activate
    assert_eq!(zn(h).gc.pages_freed_in_flight - freed_before, 1); // P4's copy is garbage
    h.check_invariants().unwrap();
    h.zns_step_now().unwrap(); // nothing left: the victim is reset
    assert!(zn(h).gc.victim.is_none());
    // P1, P2, P4 resident without a swap copy in the victim; P3 resident with its copy moved.
    for v in [p1, p2, p3, p4] {
        assert!(is_present(h.vm.ptes[v as usize]), "page {v}");
    }
    let f3 = pte_frame(h.vm.ptes[p3 as usize]);
    let fr = h.vm.frames[f3 as usize];
    assert!(fr.has(F_SWAPCACHE));
    assert_ne!(zn(h).zone_of(fr.key).unwrap().0, z);
    assert_eq!(h.swap.cache[fr.key as usize], f3);
    // The rest of the live pages moved; everything reads back.
    for &v in &live[4..] {
        let pte = h.vm.ptes[v as usize];
        assert!(is_swap(pte));
        assert_ne!(zn(h).zone_of(pte_slot(pte)).unwrap().0, z);
    }
    h.check_invariants().unwrap();
    for p in 0..700 {
        touch(h, &mut c, base + p, p % 2 == 0).unwrap();
    }
    h.check_invariants().unwrap();
}

/// `swapin_heat_sample` (ZNSwap's `end_swap_bio_read`): every swap-in read adds one set sample to its
/// page's history and nothing else changes. With the per-core policy placement ignores the history, so
/// both runs make the same references and reclaim scans; per page the sampled run has exactly one more
/// sample (and one more set bit) per swap-in read.
#[test]
fn a_swap_in_read_counts_as_one_accessed_sample() {
    let run = |sample: bool| -> Vec<(u32, u8)> {
        let mut cfg = config(
            json!({"type": "inline", "pages": 600, "refs": ""}),
            json!({"kind": "per_core"}),
        );
        cfg["host"]["swap"]["backend"]["swapin_heat_sample"] = json!(sample);
        let mut h = build(&cfg);
        let (base, _) = populate(&mut h, 600).expect("populate runs");
        (0..600).map(|p| zn(&mut h).history(base + p)).collect()
    };
    let (off, on) = (run(false), run(true));
    let mut sampled = 0;
    for (p, (&(h0, n0), &(h1, n1))) in off.iter().zip(&on).enumerate() {
        let read_back = p < 300 && p % 3 == 0;
        if read_back && n1 != n0 {
            // Read from swap once: one more sample, one more set bit (no 32-sample overflow here).
            assert_eq!(
                (n1, h1.count_ones()),
                (n0 + 1, h0.count_ones() + 1),
                "page {p}"
            );
            sampled += 1;
        } else {
            assert_eq!((h1, n1), (h0, n0), "page {p} was not read from swap");
        }
    }
    assert!(
        sampled >= 50,
        "only {sampled} of the read-back pages came from swap"
    );
}
