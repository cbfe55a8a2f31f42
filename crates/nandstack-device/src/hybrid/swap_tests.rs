//! DISS on the hybrid device (the block SSD's tests, `ftl/tests.rs` and `ssd/tests.rs`, on this FTL):
//! CL-SDI invalidates exactly the swap-range units a read returns (buffered ones dropped, never
//! flushed) and never file data; SDS never mixes swap and file data in a block, in either region and
//! under UST; verification catches a swap-in served from invalidated data.

use nandstack_core::{Rng, MAPPING_UNIT_BYTES as U};

use super::*;
use crate::ftl::blocks::NONE;
use crate::ftl::config::SwapDataConfig;

/// A device like `small` of `tests.rs` (16/64 units per SLC/QLC block, 25% OP), with 80 blocks so that a
/// full logical space fits beside SDS's doubled open blocks; CL-SDI (`invalidate`) and SDS (`sds`).
fn params(buffer_units: u32, invalidate: bool, sds: bool) -> HybridParams {
    HybridDeviceConfig {
        total_blocks: Some(80),
        slc_pages_per_block: Some(4),
        qlc_pages_per_block: Some(16),
        over_provisioning: Some(0.25),
        write_buffer_bytes: Some(buffer_units as u64 * U),
        placement: sds.then_some(HybridPlacement::SwapFile),
        swap: SwapDataConfig {
            invalidate_on_read: invalidate,
        },
        ..Default::default()
    }
    .params()
    .unwrap()
}

#[test]
fn cl_sdi_invalidates_exactly_the_swap_units_read() {
    let p = params(0, true, false);
    let mut f = HybridFtl::new(p.clone(), SlcLayout::Shared, true, 1);
    f.set_slc_target(12).unwrap();
    let n = 400u64;
    let swap_first = n / 2;
    f.write(0, n / 4, Region::Slc).unwrap();
    f.write(n / 4, 3 * n / 4, Region::Qlc).unwrap();
    f.flush().unwrap();
    // Before registration every read is a plain read.
    f.read(swap_first, 4).unwrap();
    assert_eq!(f.counters().swap_invalidated_units, 0);
    f.register_swap_range(swap_first as u32, n as u32).unwrap();
    // File reads never invalidate.
    f.read(0, swap_first).unwrap();
    assert_eq!(f.counters().swap_invalidated_units, 0);
    // A read spanning the boundary invalidates exactly its swap units.
    let valid = f.valid_units();
    f.read(swap_first - 2, 5).unwrap();
    assert_eq!(f.counters().swap_invalidated_units, 3);
    assert_eq!(f.valid_units(), valid - 3);
    for l in swap_first..swap_first + 3 {
        assert_eq!(
            f.map.get(l as u32),
            NONE,
            "unit {l} mapped after its swap-in"
        );
    }
    assert!(f.map.is_mapped(swap_first as u32 - 1) && f.map.is_mapped(swap_first as u32 + 3));
    // Invalidated units read as no data (verified), without a flash read, and are not invalidated twice.
    let reads = f.counters().read_qlc_page_reads + f.counters().read_slc_page_reads;
    f.read(swap_first, 3).unwrap();
    assert_eq!(
        f.counters().read_qlc_page_reads + f.counters().read_slc_page_reads,
        reads
    );
    assert_eq!(f.counters().swap_invalidated_units, 3);
    assert_eq!(f.counters().trimmed_units, 0);
    f.check_invariants().unwrap();
    f.verify_versions().unwrap();
    // Without CL-SDI the range changes nothing.
    let mut g = HybridFtl::new(params(0, false, false), SlcLayout::Shared, true, 1);
    g.write(0, 8, Region::Qlc).unwrap();
    g.register_swap_range(0, 8).unwrap();
    g.read(0, 8).unwrap();
    assert_eq!(g.counters().swap_invalidated_units, 0);
    assert_eq!(g.valid_units(), 8);
}

#[test]
fn cl_sdi_drops_buffered_swap_units_and_they_are_never_flushed() {
    let p = params(16, true, false);
    let mut f = HybridFtl::new(p.clone(), SlcLayout::Shared, true, 1);
    // Units 0..4 on flash; the swap range is 2..8.
    f.write(0, 4, Region::Qlc).unwrap();
    f.flush().unwrap();
    f.register_swap_range(2, 8).unwrap();
    // New versions of 0..6 wait in the buffer (their flash copies of 0..4 are invalid already).
    f.write(0, 6, Region::Qlc).unwrap();
    assert_eq!(f.buffered_units(), 6);
    let programmed = f.counters().host_units_to_qlc;
    // Swap-in of 2..6 from the buffer: dropped; nothing on flash to invalidate.
    f.read(2, 4).unwrap();
    assert_eq!(f.counters().buffer_swap_dropped_units, 4);
    assert_eq!(f.counters().swap_invalidated_units, 0);
    assert_eq!(f.counters().buffer_read_units, 4);
    assert_eq!((f.buffered_units(), f.valid_units()), (2, 2));
    // The flush writes only the file units 0, 1.
    f.flush().unwrap();
    assert_eq!(f.counters().host_units_to_qlc - programmed, 2);
    f.read(0, 8).unwrap();
    f.check_invariants().unwrap();
    f.verify_versions().unwrap();
}

/// Whether any block's valid data mixes swap-range units (`lpn ≥ swap_first`) with others.
fn mixed_blocks(f: &HybridFtl, swap_first: u32) -> Vec<u32> {
    let upb = f.params().qlc_units_per_block;
    (0..f.params().total_blocks)
        .filter(|&b| {
            let mut kinds = [false; 2];
            for a in b * upb..(b + 1) * upb {
                if let Some(l) = f.mapping().owner(a) {
                    kinds[usize::from(l >= swap_first)] = true;
                }
            }
            kinds[0] && kinds[1]
        })
        .collect()
}

/// Random writes to both regions over file and swap data, swap-ins, TRIMs and resizes.
fn churn(f: &mut HybridFtl, swap_first: u64, ops: u32, seed: u64) {
    let n = f.params().logical_units as u64 * 3 / 4;
    let mut rng = Rng::new(seed);
    for i in 0..ops {
        let lpn = rng.below(n - 8);
        let region = if rng.below(2) == 0 {
            Region::Slc
        } else {
            Region::Qlc
        };
        match rng.below(10) {
            0..=5 => f.write(lpn, 1 + rng.below(8), region).unwrap(),
            6 | 7 if lpn >= swap_first => f.read(lpn, 1 + rng.below(8)).unwrap(),
            8 => f.trim(lpn, 2).unwrap(),
            _ => {
                f.set_slc_target(rng.below(30) as u32).unwrap();
            }
        }
        if f.slc_target() > f.max_slc_blocks() {
            f.set_slc_target(f.max_slc_blocks()).unwrap();
        }
        if i % 1000 == 0 {
            f.check_invariants()
                .unwrap_or_else(|e| panic!("seed {seed} op {i}: {e}"));
        }
    }
    f.flush().unwrap();
    f.check_invariants().unwrap();
    f.verify_versions().unwrap();
}

#[test]
fn sds_never_mixes_swap_and_file_data_in_a_block() {
    let layouts = [
        SlcLayout::Shared,
        SlcLayout::PerLogicalBlock { max_blocks: 3 },
    ];
    for layout in layouts {
        for sds in [true, false] {
            let p = params(8, true, sds);
            let swap_first = p.logical_units / 3 + 5; // not on a logical-block boundary
            let mut f = HybridFtl::new(p.clone(), layout, true, 2);
            f.register_swap_range(swap_first, p.logical_units).unwrap();
            churn(&mut f, swap_first as u64, 12_000, 5);
            let c = f.counters();
            assert!(
                c.qlc_gc_victims + c.slc_migration_victims + c.ust_gc_runs > 20,
                "{c:?}"
            );
            assert!(
                c.swap_invalidated_units > 0 && c.host_units_to_slc > 0,
                "{c:?}"
            );
            let mixed = mixed_blocks(&f, swap_first);
            if sds {
                assert!(
                    mixed.is_empty(),
                    "{layout:?}: blocks {mixed:?} mix swap and file data"
                );
                // Every block's placement stream is the kind it holds.
                let t = f.block_table();
                for b in 0..p.total_blocks {
                    let upb = p.qlc_units_per_block;
                    if let Some(l) = (b * upb..(b + 1) * upb).find_map(|a| f.mapping().owner(a)) {
                        assert_eq!(t.stream[b as usize], u8::from(l >= swap_first), "block {b}");
                    }
                }
            } else {
                assert!(
                    !mixed.is_empty(),
                    "{layout:?}: a single stream mixes the kinds (the check has teeth)"
                );
            }
        }
    }
}

/// Verification catches a swap-in that would be served from invalidated data (fault injection: the
/// mapping is pointed back at the copy CL-SDI invalidated, as a buggy invalidation would leave it).
#[test]
fn verification_catches_a_read_of_swapped_in_data() {
    let mut f = HybridFtl::new(params(0, true, false), SlcLayout::Shared, true, 1);
    f.write(0, 16, Region::Qlc).unwrap();
    f.flush().unwrap();
    f.register_swap_range(8, 16).unwrap();
    let old = f.map.get(9);
    f.read(8, 4).unwrap();
    assert_eq!(f.map.get(9), NONE);
    f.verify_versions().unwrap();
    f.map.bind(9, old);
    let e = f.read(9, 1).unwrap_err().to_string();
    assert!(
        e.contains("logical unit 9") && e.contains("expected version 0"),
        "{e}"
    );
    assert!(f.verify_versions().is_err());
}

#[test]
fn registration_is_checked_and_sds_reserves_blocks_per_kind() {
    let p = params(0, true, true);
    let mut f = HybridFtl::new(p.clone(), SlcLayout::Shared, false, 1);
    assert!(f.register_swap_range(0, p.logical_units + 1).is_err());
    assert_eq!(
        f.swap_range(),
        None,
        "a failed registration changes nothing"
    );
    f.register_swap_range(10, 20).unwrap();
    assert_eq!(f.swap_range(), Some((10, 20)));
    let single = params(0, true, false);
    assert_eq!(p.qlc_reserve_blocks(), single.qlc_reserve_blocks() + 3);
    assert_eq!(p.min_slc_blocks(), single.min_slc_blocks() + 1);
    let e = HybridDeviceConfig {
        placement: Some(HybridPlacement::SwapFile),
        qlc_free_threshold_blocks: Some(2),
        ..Default::default()
    }
    .params()
    .unwrap_err()
    .to_string();
    assert!(e.contains("device.hybrid.qlc_free_threshold_blocks"), "{e}");
}
