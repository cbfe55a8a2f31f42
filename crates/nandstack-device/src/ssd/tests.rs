//! Hand-computed timing cases. Default TLC timing: tR 66 µs, tPROG 730 µs, tBERS 4.8 ms; 800 MB/s
//! channel: 4 KiB = 5,120 ns.

use super::test_util::{geometry, idle_gc, late_gc_ftl, roomy_ftl, verified_ssd, TE, TP, TR, U, X};
use super::*;
use crate::cache::{MappingCacheConfig, WriteBufferConfig};
use crate::ftl::{FtlConfig, GcTrigger, VictimConfig};
use crate::nand::Geometry;

/// One channel, one die of `planes_per_die` planes of `blocks` blocks of 4 pages of 4 KiB.
fn geo(planes_per_die: u32, blocks: u32) -> Geometry {
    geometry(1, 1, planes_per_die, blocks, 4, 4096)
}

fn ssd_with(g: Geometry, ftl_cfg: FtlConfig, ctl: ControllerConfig) -> BlockSsd {
    verified_ssd(g, ftl_cfg, ctl, &TimingConfig::default(), 0)
}

/// 16 blocks of one plane, half of the flash spare.
fn roomy_ssd(ctl: ControllerConfig) -> BlockSsd {
    ssd_with(geo(1, 16), roomy_ftl(), ctl)
}

fn ssd(buffer_bytes: u64) -> BlockSsd {
    let ctl = ControllerConfig {
        write_buffer: WriteBufferConfig {
            bytes: buffer_bytes,
            dram_access_ns: 1000,
            ..Default::default()
        },
        ..Default::default()
    };
    roomy_ssd(ctl)
}

#[test]
fn uncontended_write_and_read_latency_is_the_closed_form() {
    let mut s = ssd(0);
    assert_eq!(s.write(0, U, 0).unwrap(), X + TP);
    // A second write at t=0: its transfer queues behind the first on the channel, its program behind the
    // first program on the die.
    assert_eq!(s.write(U, U, 0).unwrap(), X + TP + TP);
    // Read issued long after: tR + transfer out.
    let t = 10_000_000;
    assert_eq!(s.read(0, U, t).unwrap(), t + TR + X);
    // Reading two units of different pages of the same die: two sensing operations in a row.
    assert_eq!(s.read(0, 2 * U, 2 * t).unwrap(), 2 * t + TR + X + TR + X);
    // Unmapped data needs no flash access.
    assert_eq!(s.read(20 * U, U, 3 * t).unwrap(), 3 * t);
}

#[test]
fn reads_wait_behind_programs_on_their_die() {
    let mut s = ssd(0);
    s.write(0, U, 0).unwrap();
    let w = s.write(U, U, 1_000_000).unwrap(); // program on the die until 1_000_000 + X + TP
    assert_eq!(w, 1_000_000 + X + TP);
    assert_eq!(s.read(0, U, 1_000_000 + X + 10).unwrap(), w + TR + X);
}

#[test]
fn write_buffer_absorbs_and_serves_from_dram() {
    let mut s = ssd(2 * U);
    assert_eq!(s.write(0, U, 0).unwrap(), 1000);
    assert_eq!(s.write(0, U, 5000).unwrap(), 6000); // absorbed
    assert_eq!(s.read(0, U, 7000).unwrap(), 8000); // DRAM hit
    assert_eq!(s.write(U, U, 9000).unwrap(), 10_000);
    // Third distinct unit evicts unit 0 (LRU): its data crosses the channel before the command completes.
    assert_eq!(s.write(2 * U, U, 20_000).unwrap(), 20_000 + X);
    let c = s.counters().clone();
    assert_eq!(
        (
            c.buffer_absorbed_units,
            c.buffer_read_hit_units,
            c.buffer_evicted_units
        ),
        (1, 1, 1)
    );
    assert_eq!(s.ftl.counters().flash_program_pages, 1);
    // 4 host pages written, 1 programmed so far.
    assert!((s.waf() - 0.25).abs() < 1e-12);
    s.flush(100_000_000).unwrap();
    assert_eq!(s.counters().buffer_flushed_units, 2);
    assert_eq!(s.ftl.counters().flash_program_pages, 3);
    s.ftl.check_invariants().unwrap();
    s.ftl.verify_all_versions().unwrap();
}

#[test]
fn foreground_gc_blocks_the_write_that_needs_space() {
    // One plane of 6 blocks × 4 pages, logical 8 units; GC at < 2 free blocks.
    let mut cfg = late_gc_ftl();
    cfg.gc.victim = VictimConfig::greedy();
    for (trigger, writes_before_gc) in [(GcTrigger::BlockOpen, 20u64), (GcTrigger::EveryWrite, 17)]
    {
        cfg.gc.trigger = trigger;
        let mut s = ssd_with(geo(1, 6), cfg.clone(), ControllerConfig::default());
        let mut t = 0;
        // Overwrite units 0..4 repeatedly: blocks fill with fully invalid data. The 17th write opens the
        // 5th block (1 free left): with `block_open` GC runs when the 6th block is needed (21st write),
        // with `every_write` before the next write (18th).
        for i in 0..writes_before_gc {
            t = s.write((i % 4) * U, U, t).unwrap();
        }
        assert_eq!(s.ftl.counters().gc_victim_blocks, 0, "{trigger:?}");
        let start = t + 1_000_000_000;
        let done = s.write(0, U, start).unwrap();
        assert_eq!(s.ftl.counters().gc_victim_blocks, 1, "{trigger:?}");
        assert_eq!(s.ftl.counters().gc_migrated_units, 0);
        // Victim holds no valid data: the erase (4.8 ms) precedes the host transfer and program.
        assert_eq!(done, start + TE + X + TP, "{trigger:?}");
    }
}

#[test]
fn mapping_cache_misses_read_translation_pages_first() {
    let cfg = FtlConfig {
        mapping_cache: MappingCacheConfig { entries: 1 },
        ..roomy_ftl()
    };
    let mut s = ssd_with(geo(1, 16), cfg, ControllerConfig::default());
    // Miss on a clean cache: translation read (tR + 4 KiB out), then the host transfer and program.
    assert_eq!(s.write(0, U, 0).unwrap(), TR + X + X + TP);
    assert_eq!(s.ftl.counters().translation_read_pages, 1);
    // Unit 1 evicts unit 0's dirty entry: translation read, plus a write-back nobody waits for.
    let t = 10_000_000;
    let d = s.write(U, U, t).unwrap();
    assert_eq!(s.ftl.counters().translation_program_pages, 1);
    assert!(d >= t + TR + X + X + TP, "{d}");
    // flash_program_pages counts the translation write too.
    assert_eq!(s.ftl.counters().flash_program_pages, 3);
}

#[test]
fn trim_costs_overhead_and_lookups() {
    let ctl = ControllerConfig {
        trim_command_overhead_us: 10.0,
        trim_entry_lookup_ns: 100,
        ..Default::default()
    };
    let mut s = roomy_ssd(ctl);
    s.write(0, 4 * U, 0).unwrap();
    assert_eq!(
        s.trim(0, 4 * U, 50_000_000).unwrap(),
        50_000_000 + 10_000 + 400
    );
    assert_eq!(s.ftl.counters().trimmed_units, 4);
}

#[test]
fn background_gc_uses_idle_time() {
    let ctl = ControllerConfig {
        background_gc: idle_gc(),
        ..Default::default()
    };
    let mut s = ssd_with(geo(1, 6), late_gc_ftl(), ctl);
    let mut t = 0;
    for i in 0..16u64 {
        t = s.write((i % 4) * U, U, t).unwrap();
    }
    let free_before = s.ftl.free_blocks();
    // Long idle gap: background GC collects the invalid blocks before the next request.
    let start = t + 1_000_000_000;
    let done = s.write(0, U, start).unwrap();
    assert!(s.ftl.counters().background_gc_victims > 0);
    assert!(s.ftl.free_blocks() + 1 > free_before);
    assert_eq!(
        done,
        start + X + TP,
        "background GC finished before the request arrived"
    );
    s.ftl.check_invariants().unwrap();
}

#[test]
fn a_larger_mapping_unit_widens_small_writes() {
    let ctl = ControllerConfig {
        mapping_unit_bytes: 16384,
        ..Default::default()
    };
    let mut s = roomy_ssd(ctl);
    s.write(0, U, 0).unwrap();
    // The whole 16 KiB slice is written: 4 units programmed for one 4 KiB host write.
    assert_eq!(s.ftl.counters().host_write_units, 4);
    assert_eq!(
        s.ftl.counters().rmw_read_pages,
        0,
        "nothing to merge on an empty device"
    );
    s.write(U, U, 10_000_000).unwrap();
    // Now units 0, 2, 3 hold data: they are read and rewritten with the new unit 1.
    assert_eq!(s.ftl.counters().rmw_read_pages, 3);
    assert_eq!(s.ftl.counters().host_write_units, 8);
    assert!((s.waf() - 4.0).abs() < 1e-12);
    s.ftl.check_invariants().unwrap();
    s.ftl.verify_all_versions().unwrap();
    let bad = ControllerConfig {
        mapping_unit_bytes: 5000,
        ..Default::default()
    };
    let ftl = Ftl::new(geo(1, 16), roomy_ftl(), 0).unwrap();
    let e = BlockSsd::new(ftl, &TimingConfig::default(), bad)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("device.controller.mapping_unit_bytes"), "{e}");
}

/// DISS CL-SDI with a DRAM write buffer: a swap read of a buffered unit drops it (marked clean, never
/// flushed) and invalidates its older flash copy; file data in the buffer is flushed as usual.
#[test]
fn cl_sdi_drops_buffered_swap_units_and_they_are_never_flushed() {
    let ctl = ControllerConfig {
        write_buffer: WriteBufferConfig {
            bytes: 16 * U,
            dram_access_ns: 1000,
            ..Default::default()
        },
        ..Default::default()
    };
    let mut cfg = roomy_ftl();
    cfg.swap.invalidate_on_read = true;
    let mut s = ssd_with(geo(1, 16), cfg, ctl);
    // Units 0..4 on flash (written, then flushed out of the buffer); the swap range is 2..8.
    s.write(0, 4 * U, 0).unwrap();
    s.flush(0).unwrap();
    s.register_swap_range(2 * U, 6 * U, 0).unwrap();
    // New versions of 2..6 (swap) and of 0, 1 (file) wait in the buffer.
    s.write(0, 6 * U, 0).unwrap();
    let programs = s.ftl.counters().program_units_host;
    // Swap-in of 2..6 from the buffer: dropped, and the flash copies of 2, 3 invalidated.
    s.read(2 * U, 4 * U, 0).unwrap();
    assert_eq!(s.counters().buffer_swap_dropped_units, 4);
    assert_eq!(s.ftl.counters().swap_invalidated_units, 2);
    // The flush writes only the file units 0, 1.
    s.flush(0).unwrap();
    assert_eq!(s.ftl.counters().program_units_host - programs, 2);
    assert_eq!(s.counters().buffer_flushed_units, 4 + 2);
    s.ftl.check_invariants().unwrap();
    s.ftl.verify_all_versions().unwrap();
}
