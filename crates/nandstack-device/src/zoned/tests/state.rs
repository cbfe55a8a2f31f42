//! Every zone state transition and every error of the state machine.

use super::*;
use ZoneState::*;

#[test]
fn writes_and_appends_open_zones_implicitly_and_fill_them() {
    let mut d = small(0, 0);
    write(&mut d, 0, 0, 0, 1).unwrap();
    assert_eq!(state_of(&d, 0), ImplicitlyOpen);
    append(&mut d, 1, 1).unwrap();
    assert_eq!(state_of(&d, 1), ImplicitlyOpen);
    // Writing on keeps the state.
    write(&mut d, 0, 0, 1, 2).unwrap();
    assert_eq!(state_of(&d, 0), ImplicitlyOpen);
    // Reaching the capacity: implicitly open → full.
    write(&mut d, 0, 0, 3, 13).unwrap();
    assert_eq!(state_of(&d, 0), Full);
    let info = d.zone_info(0).unwrap();
    assert_eq!(info.write_pointer, info.start + info.size);
    // Explicitly open stays explicitly open when written, and becomes full at the capacity.
    open(&mut d, 2).unwrap();
    write(&mut d, 0, 2, 0, 3).unwrap();
    assert_eq!(state_of(&d, 2), ExplicitlyOpen);
    append(&mut d, 2, 13).unwrap();
    assert_eq!(state_of(&d, 2), Full);
    // Closed → implicitly open by a write.
    close(&mut d, 1).unwrap();
    assert_eq!(state_of(&d, 1), Closed);
    write_wp(&mut d, 0, 1, 1).unwrap();
    assert_eq!(state_of(&d, 1), ImplicitlyOpen);
    assert_eq!(d.open_active(), (1, 1));
    d.check_invariants().unwrap();
}

#[test]
fn open_transitions() {
    let mut d = small(0, 0);
    open(&mut d, 0).unwrap(); // empty → explicitly open
    assert_eq!(state_of(&d, 0), ExplicitlyOpen);
    open(&mut d, 0).unwrap(); // explicitly open: no change, no error
    assert_eq!(state_of(&d, 0), ExplicitlyOpen);
    write(&mut d, 0, 1, 0, 1).unwrap();
    open(&mut d, 1).unwrap(); // implicitly open → explicitly open
    assert_eq!(state_of(&d, 1), ExplicitlyOpen);
    close(&mut d, 1).unwrap();
    open(&mut d, 1).unwrap(); // closed → explicitly open
    assert_eq!(state_of(&d, 1), ExplicitlyOpen);
    assert_eq!(d.open_active(), (2, 2));
    finish(&mut d, 1).unwrap();
    rejects(&mut d, "invalid zone state transition", |d| open(d, 1)); // full
    assert_eq!(d.state_counters().explicit_opens, 3);
}

#[test]
fn close_transitions() {
    let mut d = small(0, 0);
    write(&mut d, 0, 0, 0, 1).unwrap();
    close(&mut d, 0).unwrap(); // implicitly open → closed
    assert_eq!(state_of(&d, 0), Closed);
    close(&mut d, 0).unwrap(); // closed: no change, no error
    assert_eq!(state_of(&d, 0), Closed);
    open(&mut d, 1).unwrap();
    write(&mut d, 0, 1, 0, 1).unwrap();
    close(&mut d, 1).unwrap(); // explicitly open with data → closed
    assert_eq!(state_of(&d, 1), Closed);
    open(&mut d, 2).unwrap();
    close(&mut d, 2).unwrap(); // explicitly open, nothing written → empty
    assert_eq!(state_of(&d, 2), Empty);
    assert_eq!(d.open_active(), (0, 2));
    rejects(&mut d, "invalid zone state transition", |d| close(d, 3)); // empty
    finish(&mut d, 3).unwrap();
    rejects(&mut d, "invalid zone state transition", |d| close(d, 3)); // full
}

#[test]
fn finish_transitions() {
    let mut d = small(0, 0);
    finish(&mut d, 0).unwrap(); // empty → full
    assert_eq!(state_of(&d, 0), Full);
    finish(&mut d, 0).unwrap(); // full: no change, no error
    write(&mut d, 0, 1, 0, 1).unwrap();
    finish(&mut d, 1).unwrap(); // implicitly open → full
    open(&mut d, 2).unwrap();
    finish(&mut d, 2).unwrap(); // explicitly open → full
    write(&mut d, 0, 3, 0, 1).unwrap();
    close(&mut d, 3).unwrap();
    finish(&mut d, 3).unwrap(); // closed → full
    for z in 0..4 {
        assert_eq!(state_of(&d, z), Full);
    }
    assert_eq!(d.open_active(), (0, 0));
    assert_eq!(d.state_counters().finishes, 4);
    // A finished zone keeps its data readable; the rest reads as unwritten.
    let r = d.submit(Nanos(0), Command::read(3 * 65536, 2 * U)).unwrap();
    assert_eq!(r.meta, [0, 0]);
    assert_eq!(d.counters().flash_read_pages, 1);
    assert_eq!(d.counters().unwritten_read_units, 1);
}

#[test]
fn reset_transitions() {
    let mut d = small(0, 0);
    reset(&mut d, 0).unwrap(); // empty: no change, no error, no erase
    assert_eq!(d.counters().erases, 0);
    write(&mut d, 0, 0, 0, 1).unwrap();
    open(&mut d, 1).unwrap();
    write(&mut d, 0, 2, 0, 1).unwrap();
    close(&mut d, 2).unwrap();
    write(&mut d, 0, 3, 0, 16).unwrap();
    for z in 0..4 {
        assert_ne!(state_of(&d, z), Empty);
        reset(&mut d, z).unwrap(); // implicitly open, explicitly open, closed, full → empty
        assert_eq!(state_of(&d, z), Empty);
        assert_eq!(d.zone_info(z).unwrap().write_pointer, z as u64 * 65536);
    }
    assert_eq!(d.open_active(), (0, 0));
    assert_eq!(d.state_counters().resets, 4);
    // Only the full zone had programmed pages: its 2 blocks are erased.
    assert_eq!(d.counters().erases, 2);
    d.check_invariants().unwrap();
}

#[test]
fn read_only_and_offline_zones() {
    let mut d = small(0, 0);
    write(&mut d, 0, 0, 0, 4).unwrap();
    d.set_zone_condition(0, ReadOnly).unwrap(); // implicitly open → read-only: releases resources
    assert_eq!(d.open_active(), (0, 0));
    assert_eq!(d.zone_info(0).unwrap().write_pointer, u64::MAX);
    // Readable, not writable, no management command.
    assert_eq!(
        d.submit(Nanos(0), Command::read(0, 4 * U))
            .unwrap()
            .meta
            .len(),
        4
    );
    rejects(&mut d, "zone is read-only", |d| write(d, 0, 0, 4, 1));
    rejects(&mut d, "zone is read-only", |d| append(d, 0, 1));
    for f in [open, close, finish, reset] {
        rejects(&mut d, "invalid zone state transition", |d| f(d, 0));
    }
    d.set_zone_condition(0, Offline).unwrap(); // read-only → offline
    rejects(&mut d, "zone is offline", |d| {
        d.submit(Nanos(0), Command::read(0, U))
    });
    rejects(&mut d, "zone is offline", |d| write(d, 0, 0, 4, 1));
    for f in [open, close, finish, reset] {
        rejects(&mut d, "invalid zone state transition", |d| f(d, 0));
    }
    // Offline is final; only read-only and offline are controller targets.
    assert!(err(d.set_zone_condition(0, ReadOnly)).contains("invalid zone state transition"));
    assert!(err(d.set_zone_condition(1, Full)).contains("invalid zone state transition"));
    assert!(err(d.set_zone_condition(9, Offline)).contains("out of range"));
    d.set_zone_condition(1, Offline).unwrap(); // empty → offline
    d.check_invariants().unwrap();
}

#[test]
fn the_open_limit_closes_the_least_recently_written_implicitly_open_zone() {
    let mut d = small(2, 4);
    write(&mut d, 0, 0, 0, 1).unwrap();
    write(&mut d, 0, 1, 0, 1).unwrap();
    write(&mut d, 0, 0, 1, 1).unwrap(); // zone 1 is now the least recently written
    write(&mut d, 0, 2, 0, 1).unwrap();
    assert_eq!(
        [state_of(&d, 0), state_of(&d, 1), state_of(&d, 2)],
        [ImplicitlyOpen, Closed, ImplicitlyOpen]
    );
    assert_eq!(d.state_counters().implicit_closes, 1);
    // A closed zone written again needs only an open resource: zone 0 (least recent) is closed for it.
    write(&mut d, 0, 1, 1, 1).unwrap();
    assert_eq!(
        [state_of(&d, 0), state_of(&d, 1), state_of(&d, 2)],
        [Closed, ImplicitlyOpen, ImplicitlyOpen]
    );
    // An explicit open makes room the same way.
    open(&mut d, 3).unwrap();
    assert_eq!(state_of(&d, 2), Closed);
    assert_eq!(d.open_active(), (2, 4));
    assert_eq!(d.state_counters().open_high_water, 2);
    assert_eq!(d.state_counters().active_high_water, 4);
    d.check_invariants().unwrap();
}

#[test]
fn too_many_open_zones() {
    let mut d = small(2, 4);
    open(&mut d, 0).unwrap();
    open(&mut d, 1).unwrap();
    // Both open zones are explicitly open: nothing the device may close.
    rejects(&mut d, "too many open zones", |d| write(d, 0, 2, 0, 1));
    rejects(&mut d, "too many open zones", |d| append(d, 2, 1));
    rejects(&mut d, "too many open zones", |d| open(d, 2));
    // A closed zone needs an open resource too.
    write(&mut d, 0, 0, 0, 1).unwrap();
    close(&mut d, 0).unwrap();
    open(&mut d, 2).unwrap();
    rejects(&mut d, "too many open zones", |d| write(d, 0, 0, 1, 1));
    rejects(&mut d, "too many open zones", |d| open(d, 0));
}

#[test]
fn too_many_active_zones() {
    let mut d = small(2, 2);
    write(&mut d, 0, 0, 0, 1).unwrap();
    write(&mut d, 0, 1, 0, 1).unwrap();
    // Closing an implicitly open zone would not free an active resource.
    rejects(&mut d, "too many active zones", |d| write(d, 0, 2, 0, 1));
    rejects(&mut d, "too many active zones", |d| append(d, 2, 1));
    rejects(&mut d, "too many active zones", |d| open(d, 2));
    // A closed zone holds its active resource.
    close(&mut d, 0).unwrap();
    rejects(&mut d, "too many active zones", |d| open(d, 2));
    // Finishing it releases the resource.
    finish(&mut d, 0).unwrap();
    write(&mut d, 0, 2, 0, 1).unwrap();
    assert_eq!(d.open_active(), (2, 2));
}

#[test]
fn write_errors() {
    let mut d = small(0, 0);
    write(&mut d, 0, 0, 0, 2).unwrap();
    rejects(&mut d, "write not at write pointer", |d| {
        write(d, 0, 0, 3, 1)
    }); // ahead
    rejects(&mut d, "write not at write pointer", |d| {
        write(d, 0, 0, 1, 1)
    }); // behind
    rejects(&mut d, "write not at write pointer", |d| {
        write(d, 0, 1, 5, 1)
    }); // empty zone, not its start
    rejects(&mut d, "zone boundary crossed", |d| write(d, 0, 0, 2, 15)); // past the capacity
    rejects(&mut d, "zone boundary crossed", |d| append(d, 0, 15));
    rejects(&mut d, "zone boundary crossed", |d| append(d, 3, 1 << 20)); // even past the device's end
    write(&mut d, 0, 0, 2, 14).unwrap();
    rejects(&mut d, "zone is full", |d| write(d, 0, 0, 15, 1));
    rejects(&mut d, "zone is full", |d| append(d, 0, 1));
    rejects(&mut d, "not aligned", |d| {
        d.submit(Nanos(0), Command::write(65536 + 512, U))
    });
    rejects(&mut d, "not aligned", |d| {
        d.submit(Nanos(0), Command::write(65536, 100))
    });
    rejects(&mut d, "metadata has 3 words for 2 units", |d| {
        d.submit(
            Nanos(0),
            Command::Write {
                offset: 65536,
                len: 2 * U,
                meta: &[1, 2, 3],
            },
        )
    });
    rejects(&mut d, "zero-length", |d| {
        d.submit(Nanos(0), Command::write(65536, 0))
    });
    rejects(&mut d, "out of range", |d| {
        d.submit(Nanos(0), Command::write(4 * 65536, U))
    });
    rejects(&mut d, "out of range", |d| append(d, 4, 1));
    rejects(&mut d, "out of range", |d| open(d, 4));
    rejects(&mut d, "out of range", |d| {
        d.submit(Nanos(0), Command::read(4 * 65536 - U, 2 * U))
    });
    rejects(&mut d, "unsupported", |d| {
        d.submit(Nanos(0), Command::trim(0, U))
    });
    rejects(&mut d, "unsupported", |d| {
        d.submit(
            Nanos(0),
            Command::Ext(crate::device::ExtCommand::RegisterSwapRange { offset: 0, len: U }),
        )
    });
}

#[test]
fn reads_may_not_cross_zones_unless_configured() {
    let mut d = small(0, 0);
    rejects(&mut d, "zone boundary crossed", |d| {
        d.submit(Nanos(0), Command::read(65536 - U, 2 * U))
    });
    let mut d = dev(&ZonedConfig {
        cross_zone_reads: true,
        ..small_cfg(0, 0)
    });
    write(&mut d, 0, 0, 0, 16).unwrap();
    write(&mut d, 0, 1, 0, 1).unwrap();
    let r = d.submit(Nanos(0), Command::read(65536 - U, 3 * U)).unwrap();
    assert_eq!(r.meta, [0, 0, 0]);
    assert_eq!(d.counters().buffer_read_units, 1);
    assert_eq!(d.counters().unwritten_read_units, 1);
}

#[test]
fn the_gap_between_capacity_and_size_reads_as_unwritten_and_takes_no_writes() {
    let mut d = dev(&ZonedConfig {
        zone_size_bytes: Some(128 * 1024),
        ..small_cfg(0, 0)
    });
    let info = d.zone_info(1).unwrap();
    assert_eq!(
        (info.start, info.size, info.capacity),
        (131072, 131072, 65536)
    );
    assert_eq!(d.capacity_bytes(), 4 * 131072);
    rejects(&mut d, "write not at write pointer", |d| {
        write(d, 0, 0, 16, 1)
    });
    write(&mut d, 0, 0, 0, 16).unwrap();
    rejects(&mut d, "zone is full", |d| write(d, 0, 0, 16, 1));
    let r = d.submit(Nanos(7), Command::read(16 * U, 16 * U)).unwrap();
    assert_eq!((r.done, r.meta.len()), (Nanos(7), 16));
    assert_eq!(d.counters().unwritten_read_units, 16);
    assert_eq!(d.counters().flash_read_pages, 0);
}

#[test]
fn metadata_is_stored_returned_and_cleared_by_reset() {
    let mut d = small(0, 0);
    let meta = [11, 12, 13];
    d.submit(
        Nanos(0),
        Command::Write {
            offset: 0,
            len: 3 * U,
            meta: &meta,
        },
    )
    .unwrap();
    let c = zone(
        &mut d,
        0,
        ZoneCommand::Append {
            zone: 0,
            len: 2 * U,
            meta: &[14, 15],
        },
    )
    .unwrap();
    assert_eq!(c.written_at, Some(3 * U));
    let c = append(&mut d, 0, 1).unwrap(); // no metadata: stored as 0
    assert_eq!(c.written_at, Some(5 * U));
    assert_eq!(append(&mut d, 0, 1).unwrap().written_at, Some(6 * U));
    let r = d.submit(Nanos(0), Command::read(0, 8 * U)).unwrap();
    assert_eq!(r.meta, [11, 12, 13, 14, 15, 0, 0, 0]);
    // Units 0-5 are on flash (3 pages), 6 is buffered, 7 unwritten.
    assert_eq!(d.counters().flash_read_pages, 3);
    assert_eq!(d.counters().buffer_read_units, 1);
    assert_eq!(d.counters().unwritten_read_units, 1);
    assert_eq!(d.counters().appends, 3);
    reset(&mut d, 0).unwrap();
    let r = d.submit(Nanos(0), Command::read(0, 2 * U)).unwrap();
    assert_eq!(r.meta, [0, 0]);
    d.verify_all().unwrap();
}

#[test]
fn report_lists_every_zone() {
    let mut d = small(0, 0);
    write(&mut d, 0, 2, 0, 3).unwrap();
    let r = zone(&mut d, 5, ZoneCommand::Report).unwrap();
    assert_eq!(r.done, Nanos(5));
    assert_eq!(r.zones.len(), 4);
    assert_eq!(r.zones[2].write_pointer, 2 * 65536 + 3 * U);
    assert_eq!(r.zones[2].state, ImplicitlyOpen);
    assert_eq!(r.zones[3].state, Empty);
    let m = d.zone_model().unwrap();
    assert_eq!(
        (m.zones, m.zone_size_bytes, m.zone_capacity_bytes),
        (4, 65536, 65536)
    );
    assert_eq!((m.max_open_zones, m.max_active_zones), (4, 4)); // no limit: the zone count
}

#[test]
fn the_device_works_through_the_trait_object() {
    let mut d: Box<dyn Device> = Box::new(small(0, 0));
    assert_eq!(d.kind(), crate::device::DeviceKind::Zoned);
    let done = d.write(Nanos(0), 0, 2 * U).unwrap();
    assert!(done > Nanos(0));
    assert!(d.read(done, 0, 2 * U).unwrap() > done);
    assert_eq!(d.flush(Nanos(1)).unwrap(), Nanos(1)); // nothing buffered
    assert!(err(d.trim(Nanos(0), 0, U)).contains("unsupported"));
    assert_eq!(d.stats().host_write_bytes, 2 * U);
    d.verify_all().unwrap();
}
