//! `host.fault.swapin_write`, step by step on a tiny block-swap host: what a read swap-in maps, what
//! the first write to that page does to the page and its slot, and what its next eviction writes —
//! hand-computed per kernel (6.18 `map_writable`, 4.4 `reuse_swap_page`, 5.12 `cow_copy`).

use nandstack_core::Nanos;
use serde_json::json;

use crate::config::{HostConfig, ProcessConfig};
use crate::host::{Ctx, Host};
use crate::swap::{map_count, MAP_CACHE};
use crate::vm::page::*;
use crate::vm::workingset::is_shadow;

/// 64 pages written in order by one process in a 32-page cgroup, one CPU, no readahead, 4 MiB of swap
/// (1,024 slots: swap never fills) on a 64 MiB SSD; verification on.
fn host(mode: &str) -> Host {
    let seed = 5;
    let host: HostConfig = serde_json::from_value(json!({
        "ram_mib": 64, "cpus": 1, "readahead": {"policy": "off"}, "swap": {"size_mib": 4},
        "cgroups": [{"name": "t", "limit_pages": 32}], "fault": {"swapin_write": mode}}))
    .expect("host parses");
    let processes: Vec<ProcessConfig> = serde_json::from_value(json!([{"name": "p", "cgroup": "t",
        "workload": {"type": "inline", "pages": 64, "refs": ""}}]))
    .expect("processes parse");
    let spec: nandstack_device::spec::DeviceSpec = serde_json::from_value(json!({
        "geometry": {"channels": 1, "chips_per_channel": 1, "dies_per_chip": 1, "planes_per_die": 1,
                     "blocks_per_plane": 128, "pages_per_block": 128, "page_size_bytes": 4096},
        "timing": {"enabled": false}}))
    .expect("device parses");
    crate::host::test_host::build(seed, &host, &processes, &spec, false)
}

/// A reference as the simulation loop makes it: a hit sets the PTE bits, a miss faults. True if it
/// faulted.
fn touch(h: &mut Host, c: &mut Ctx, vpn: u32, write: bool) -> bool {
    c.now += Nanos(2_000);
    let pte = h.vm.ptes[vpn as usize];
    if is_present(pte) && (!write || pte & PTE_WRITE != 0) {
        h.vm.ptes[vpn as usize] = pte | PTE_YOUNG | if write { PTE_DIRTY } else { 0 };
        return false;
    }
    h.fault(c, vpn, write).expect("fault");
    true
}

/// Write all 64 pages, then the last 32 again (the first ones end up swapped out); returns the
/// context and a page that is swapped out and not in the swap cache, with its slot.
fn swapped_page(h: &mut Host) -> (Ctx, u32, u32) {
    let mut c = Ctx {
        now: Nanos(0),
        cpu: 0,
        comm: 3,
        kswapd: false,
    };
    let base = h.vm.procs[0].base;
    for p in (0..64).chain(32..64) {
        touch(h, &mut c, base + p, true);
    }
    let v = (base..base + 64)
        .find(|&v| {
            let pte = h.vm.ptes[v as usize];
            let c = if is_swap(pte) {
                h.swap.cache[pte_slot(pte) as usize]
            } else {
                0
            };
            is_swap(pte) && (c == NONE || is_shadow(c))
        })
        .expect("a page swapped out and dropped from the swap cache");
    (c, v, pte_slot(h.vm.ptes[v as usize]))
}

/// Read page `v` back, then write it. Returns (frame after the read, whether the write faulted).
fn read_then_write(h: &mut Host, c: &mut Ctx, v: u32, slot: u32) -> (u32, bool) {
    assert!(touch(h, c, v, false), "the read is a swap fault");
    let pte = h.vm.ptes[v as usize];
    let f = pte_frame(pte);
    // Every kernel keeps the slot at a read fault while swap is not full.
    assert_eq!(h.swap.map[slot as usize], MAP_CACHE);
    assert!(h.vm.frames[f as usize].has(F_SWAPCACHE));
    assert_eq!(pte & PTE_DIRTY, 0);
    let faulted = touch(h, c, v, true);
    h.check_invariants().expect("invariants after the write");
    (f, faulted)
}

#[test]
fn map_writable_keeps_the_slot_and_the_write_does_not_fault() {
    let mut h = host("map_writable");
    let (mut c, v, slot) = swapped_page(&mut h);
    let (f, faulted) = read_then_write(&mut h, &mut c, v, slot);
    assert!(!faulted, "6.18 maps a read swap-in writable");
    let pte = h.vm.ptes[v as usize];
    assert_eq!(pte_frame(pte), f);
    assert_ne!(pte & PTE_DIRTY, 0);
    // The slot stays the page's: its next eviction rewrites the same slot.
    assert_eq!(h.swap.map[slot as usize], MAP_CACHE);
    assert_eq!(h.swap.cache[slot as usize], f);
}

#[test]
fn reuse_swap_page_frees_the_slot_at_the_write_fault() {
    let mut h = host("reuse_swap_page");
    let (mut c, v, slot) = swapped_page(&mut h);
    let freed = h.stats.swap_slot_freed_on_fault;
    let (f, faulted) = read_then_write(&mut h, &mut c, v, slot);
    assert!(faulted, "4.4 maps a read swap-in read-only");
    let pte = h.vm.ptes[v as usize];
    assert_eq!(pte_frame(pte), f, "the page itself is reused");
    assert_ne!(pte & PTE_WRITE, 0);
    let fr = h.vm.frames[f as usize];
    assert!(!fr.has(F_SWAPCACHE) && fr.has(F_DIRTY));
    assert_eq!(h.swap.map[slot as usize], 0, "the slot is free");
    assert_eq!(h.stats.swap_slot_freed_on_fault, freed + 1);
    assert_eq!(h.stats.cow_faults, 0);
}

#[test]
fn cow_copy_copies_the_page_and_leaves_the_old_one_in_the_swap_cache() {
    let mut h = host("cow_copy");
    let (mut c, v, slot) = swapped_page(&mut h);
    let (f, faulted) = read_then_write(&mut h, &mut c, v, slot);
    assert!(faulted, "5.12 maps a read swap-in read-only");
    let pte = h.vm.ptes[v as usize];
    let nf = pte_frame(pte);
    assert_ne!(nf, f, "the write copies the page");
    assert_ne!(pte & PTE_WRITE, 0);
    let new = h.vm.frames[nf as usize];
    assert!(new.has(F_ANON | F_MAPPED) && !new.has(F_SWAPCACHE));
    // The old page: in the swap cache, unmapped, clean, holding the slot with no swap count.
    let old = h.vm.frames[f as usize];
    assert!(old.has(F_SWAPCACHE) && !old.has(F_MAPPED) && !old.has(F_DIRTY));
    assert_eq!(h.swap.map[slot as usize], MAP_CACHE);
    assert_eq!(h.stats.cow_faults, 1);
    // Pressure: reclaim frees the old page and, with it, the slot; the new page is written elsewhere.
    let base = h.vm.procs[0].base;
    for p in (0..64).filter(|&p| base + p != v) {
        touch(&mut h, &mut c, base + p, false);
    }
    h.check_invariants().unwrap();
    assert_ne!(
        h.swap.cache[slot as usize], f,
        "the old page left the swap cache"
    );
    let pte = h.vm.ptes[v as usize];
    assert!(
        is_swap(pte) && pte_slot(pte) != slot,
        "the copy went to a new slot"
    );
    assert_eq!(map_count(h.swap.map[pte_slot(pte) as usize]), 1);
    // Every page reads back what was last written (device versions checked under verification).
    for p in 0..64 {
        touch(&mut h, &mut c, base + p, false);
    }
    h.check_invariants().unwrap();
}

#[test]
fn a_write_fault_at_the_swap_in_frees_the_slot_in_every_mode() {
    for mode in ["map_writable", "reuse_swap_page", "cow_copy"] {
        let mut h = host(mode);
        let (mut c, v, slot) = swapped_page(&mut h);
        assert!(touch(&mut h, &mut c, v, true));
        let f = pte_frame(h.vm.ptes[v as usize]);
        assert!(!h.vm.frames[f as usize].has(F_SWAPCACHE), "{mode}");
        assert_eq!(h.swap.map[slot as usize], 0, "{mode}");
        assert_eq!(h.stats.cow_faults, 0, "{mode}");
        h.check_invariants().unwrap();
    }
}
