//! Hand-computed completion times. TLC: tR 66 µs, tPROG 730 µs, tBERS 4.8 ms; 4 KiB over the 800 MB/s
//! channel = 5,120 ns. In the small device a zone's page p is on plane p mod 2, both planes on one die.

use super::*;

const X: u64 = 5_120;
const TR: u64 = 66_000;
const TP: u64 = 730_000;
const TE: u64 = 4_800_000;

fn read(d: &mut ZonedSsd, at: u64, z: u32, unit: u64, n: u64) -> u64 {
    let off = z as u64 * d.params().zone_size_bytes + unit * U;
    d.submit(Nanos(at), Command::read(off, n * U))
        .unwrap()
        .done
        .0
}

fn w(d: &mut ZonedSsd, at: u64, z: u32, unit: u64, n: u64) -> u64 {
    write(d, at, z, unit, n).unwrap().done.0
}

fn with_geometry(channels: u32, chips: u32, planes_per_die: u32) -> ZonedSsd {
    dev(&ZonedConfig {
        geometry: GeometryOverrides {
            channels: Some(channels),
            chips_per_channel: Some(chips),
            planes_per_die: Some(planes_per_die),
            ..small_geometry()
        },
        ..small_cfg(0, 0)
    })
}

#[test]
fn uncontended_write_and_read_are_the_closed_form() {
    let mut d = small(0, 0);
    // One unit crosses the channel and waits in the register: the page is not full.
    assert_eq!(w(&mut d, 0, 0, 0, 1), X);
    // Still buffered: served at submission, no flash read.
    assert_eq!(read(&mut d, 1_000_000, 0, 0, 1), 1_000_000);
    assert_eq!(d.counters().flash_read_pages, 0);
    // The second unit fills page 0: programmed once its data is in.
    let t = 2_000_000;
    assert_eq!(w(&mut d, t, 0, 1, 1), t + X + TP);
    // From flash: sense, then the unit crosses the channel; two units of one page: one sensing.
    let t = 10_000_000;
    assert_eq!(read(&mut d, t, 0, 0, 1), t + TR + X);
    let t = 20_000_000;
    assert_eq!(read(&mut d, t, 0, 0, 2), t + TR + 2 * X);
    assert_eq!(d.counters().flash_read_pages, 2);
}

#[test]
fn pages_on_one_die_queue_on_it() {
    let mut d = small(0, 0);
    // Four units: transfers at X..4X on the one channel; page 0 (plane 0) programs from 2X, page 1
    // (plane 1, same die) waits for the die.
    assert_eq!(w(&mut d, 0, 1, 0, 4), 2 * X + 2 * TP);
    // A read of page 0 issued while page 1 programs waits for the die.
    let t = 2 * X + TP + 10;
    assert_eq!(read(&mut d, t, 1, 0, 1), 2 * X + 2 * TP + TR + X);
    // Two pages read together: the second sensing waits for the first page's data to be out.
    let t = 10_000_000;
    assert_eq!(read(&mut d, t, 1, 0, 4), t + 2 * (TR + 2 * X));
}

#[test]
fn pages_on_two_dies_program_in_parallel_and_share_a_channel_if_they_must() {
    // (channels, chips per channel): page 0 on die 0, page 1 on die 1 (one plane per die). On two
    // channels the dies are independent; on one, the second page's data waits for the bus, both when it
    // goes in (writes) and when it comes out (reads; both dies sense in parallel).
    for (channels, chips, xfers) in [(2, 1, 2), (1, 2, 4)] {
        let mut d = with_geometry(channels, chips, 1);
        assert_eq!(w(&mut d, 0, 0, 0, 4), xfers * X + TP);
        let t = 10_000_000;
        assert_eq!(read(&mut d, t, 0, 0, 4), t + TR + xfers * X);
    }
}

#[test]
fn reset_erases_the_blocks_that_hold_data() {
    let mut d = small(0, 0);
    w(&mut d, 0, 0, 0, 16); // full: 8 pages on both blocks (one die)
    w(&mut d, 0, 1, 0, 2); // one page: block 0 of zone 1
    w(&mut d, 0, 2, 0, 1); // a buffered unit only
    let t = 100_000_000;
    assert_eq!(reset(&mut d, 0).map(|_| ()).ok(), Some(())); // at 0: die busy
    let at = |d: &mut ZonedSsd, z: u32| zone(d, t, ZoneCommand::Reset { zone: z }).unwrap().done.0;
    // Zone 0's erases (issued at 0) ended long before t.
    assert_eq!(at(&mut d, 1), t + TE);
    assert_eq!(at(&mut d, 2), t); // nothing programmed: no erase
    assert_eq!(d.counters().erases, 3);
    assert_eq!(d.erase_counts()[0], 1); // plane 0, block 0
    assert_eq!(d.erase_counts()[4], 1); // plane 1, block 0
    assert_eq!(d.erase_counts()[1], 1); // plane 0, block 1 (zone 1's first block)
    assert_eq!(d.erase_counts()[5], 0);
    d.check_invariants().unwrap();
}

#[test]
fn erases_of_one_zone_serialize_on_its_die_and_block_reads() {
    let mut d = small(0, 0);
    w(&mut d, 0, 0, 0, 16);
    w(&mut d, 0, 1, 0, 2);
    let t = 100_000_000;
    let done = zone(&mut d, t, ZoneCommand::Reset { zone: 0 })
        .unwrap()
        .done
        .0;
    assert_eq!(done, t + 2 * TE);
    // Zone 1's page 0 is on the same die: the read waits for both erases.
    assert_eq!(read(&mut d, t + 1, 1, 0, 1), t + 2 * TE + TR + X);
}

#[test]
fn finish_pads_the_tail_page_or_the_whole_zone() {
    let t = 1_000_000;
    let mut d = dev(&ZonedConfig {
        finish_padding: FinishPadding::Page,
        ..small_cfg(0, 0)
    });
    w(&mut d, 0, 0, 0, 1);
    // The filler unit crosses the channel, then the page programs.
    assert_eq!(
        zone(&mut d, t, ZoneCommand::Finish { zone: 0 })
            .unwrap()
            .done
            .0,
        t + X + TP
    );
    assert_eq!(
        (d.counters().finish_padded_pages, d.counters().padding_units),
        (1, 1)
    );

    let mut d = small(0, 0); // finish_padding = zone
    w(&mut d, 0, 0, 0, 1);
    // Tail page: [t, t+X] filler in, program [t+X, t+X+TP]; then 7 filler pages whose transfers
    // (2 units each) go back to back on the channel and whose programs queue on the one die.
    assert_eq!(
        zone(&mut d, t, ZoneCommand::Finish { zone: 0 })
            .unwrap()
            .done
            .0,
        t + X + 8 * TP
    );
    let c = d.counters();
    assert_eq!((c.finish_padded_pages, c.padding_units), (8, 15));
    let s = d.stats();
    assert_eq!(s.flash_program_pages, 8);
    // WAF counts padding: 8 pages programmed for half a page of host data.
    assert_eq!(s.waf(), 16.0);
    d.verify_all().unwrap();
}

#[test]
fn flush_pads_tails_into_staging_pages_once() {
    let mut d = small(0, 0);
    w(&mut d, 0, 0, 0, 1);
    let t = 1_000_000;
    assert_eq!(
        d.submit(Nanos(t), Command::Flush).unwrap().done.0,
        t + X + TP
    );
    assert_eq!(
        (d.counters().flush_padded_pages, d.counters().padding_units),
        (1, 1)
    );
    // Nothing new buffered: no work.
    assert_eq!(
        d.submit(Nanos(2 * t), Command::Flush).unwrap().done.0,
        2 * t
    );
    // The page still fills in place: the write pointer did not move.
    assert_eq!(w(&mut d, 3 * t, 0, 1, 1), 3 * t + X + TP);
    assert_eq!(d.stats().flash_program_pages, 2);

    let mut d = dev(&ZonedConfig {
        flush: FlushMode::Retain,
        ..small_cfg(0, 0)
    });
    w(&mut d, 0, 0, 0, 1);
    assert_eq!(d.submit(Nanos(t), Command::Flush).unwrap().done.0, t);
    assert_eq!(d.stats().flash_program_pages, 0);
}

#[test]
fn zone_management_without_flash_work_completes_at_submission() {
    // (With `finish_padding = page`, finishing an empty zone programs nothing.)
    let mut d = dev(&ZonedConfig {
        finish_padding: FinishPadding::Page,
        ..small_cfg(0, 0)
    });
    let t = 123;
    for cmd in [
        ZoneCommand::Open { zone: 0 },
        ZoneCommand::Close { zone: 0 },
        ZoneCommand::Reset { zone: 0 },
        ZoneCommand::Finish { zone: 1 },
        ZoneCommand::Report,
    ] {
        assert_eq!(zone(&mut d, t, cmd).unwrap().done, Nanos(t));
    }
}

#[test]
fn without_timing_everything_completes_at_submission() {
    let mut d = dev(&ZonedConfig {
        timing: crate::nand::TimingConfig {
            enabled: false,
            ..Default::default()
        },
        ..small_cfg(0, 0)
    });
    assert_eq!(w(&mut d, 5, 0, 0, 16), 5);
    assert_eq!(read(&mut d, 6, 0, 0, 16), 6);
    assert_eq!(
        zone(&mut d, 7, ZoneCommand::Reset { zone: 0 })
            .unwrap()
            .done,
        Nanos(7)
    );
    assert_eq!(d.stats().flash_program_pages, 8);
    assert_eq!(d.stats().erase_count, 2);
}

#[test]
fn consecutive_pages_go_to_other_dies_before_a_dies_other_plane() {
    use crate::ftl::config::ParallelUnit::{Channel, Chip, Die, Plane};
    // Two channels of one die with two planes (planes 0, 1 on channel 0). Two pages written together,
    // then a read of the first one issued just after the first program started.
    let at = 2 * X + 10;
    // Default order (channel first): page 1 is on the other channel's die; both dies program at once
    // from 2X and the read waits for one program.
    let mut d = with_geometry(2, 1, 2);
    assert_eq!(d.params().striping_order, [Channel, Chip, Die, Plane]);
    assert_eq!(w(&mut d, 0, 0, 0, 4), 2 * X + TP);
    assert_eq!(read(&mut d, at, 0, 0, 1), 2 * X + TP + TR + X);
    // Plane first: page 1 is on the same die's other plane; its data is in at 4X on the shared channel
    // but it programs after page 0, and the read waits for both programs.
    let mut d = dev(&ZonedConfig {
        geometry: GeometryOverrides {
            channels: Some(2),
            ..small_geometry()
        },
        striping_order: vec![Plane, Die, Chip, Channel],
        ..small_cfg(0, 0)
    });
    assert_eq!(w(&mut d, 0, 0, 0, 4), 2 * X + 2 * TP);
    assert_eq!(read(&mut d, at, 0, 0, 1), 2 * X + 2 * TP + TR + X);
    d.check_invariants().unwrap();
}

#[test]
fn a_whole_zn540_small_zone_in_one_write() {
    // 16 planes on 8 dies (2 planes each) on 4 channels (2 dies each); zone page p is on stripe position
    // p mod 16, channel first: channel p mod 4, chip (p ÷ 4) mod 2, plane (p ÷ 8) mod 2. Die 7 (channel
    // 3, chip 1) gets its first page (page 7) second on its channel: in after 2 pages of 4 units (8 X).
    // Each die then programs its 1056 / 8 = 132 pages back to back (the channels move a page in 4 X, far
    // faster than tPROG).
    let mut d = dev(&ZonedConfig::zn540_small());
    let cap = d.params().zone_capacity_bytes;
    let done = d.submit(Nanos(0), Command::write(0, cap)).unwrap().done.0;
    assert_eq!(done, 8 * X + 132 * TP);
    assert_eq!(state_of(&d, 0), ZoneState::Full);
    assert_eq!(d.stats().flash_program_pages, 1056);
    // Plane first (page p on plane p mod 16): channel 3 carries planes 12-15 in page order, die 7's
    // first page (plane 14) is in after 3 pages (12 X).
    use crate::ftl::config::ParallelUnit::{Channel, Chip, Die, Plane};
    let mut d = dev(&ZonedConfig {
        striping_order: vec![Plane, Die, Chip, Channel],
        ..ZonedConfig::zn540_small()
    });
    let done = d.submit(Nanos(0), Command::write(0, cap)).unwrap().done.0;
    assert_eq!(done, 12 * X + 132 * TP);
}
