//! The `Device` conformance suite: every device, built through the one factory (`spec::build`) and
//! driven only through `Box<dyn Device>`, obeys the contract of `nandstack_device::device`:
//! * completions are never before submission (a flush included);
//! * read-after-write versions hold through random writes, overwrites, TRIMs and reads (checked by the
//!   device in verification mode, at every read and by `verify_all` at the end);
//! * a read of a never-written or trimmed unit costs no flash read (checked against a shadow map kept
//!   here, independently of the device), and a device that reports such units
//!   (`Completion::unmapped_units`) reports exactly them;
//! * out-of-range commands are `OutOfRange`, unimplemented ones `Unsupported`, protocol violations
//!   `Protocol` — and a failed command changes no counter;
//! * commands contending for one resource complete in submission order.
//!
//! Block devices: untimed, timed, timed with a DRAM write buffer. A zoned device behind the host-side
//! block layer. Hybrid: every SLC-cache manager. Zoned: the zone protocol, with the metadata words
//! written returned by reads.
//!
//! DISS (every device that takes `register_swap_range`: block and hybrid, with CL-SDI and SDS on):
//! invalidation exactly on swap-range reads (counted against the shadow map), never on file reads; a
//! re-read of swapped-in units costs no flash read; no block mixes swap and file data; verification
//! holds (no invalidated data is served as valid).

use nandstack_core::{Error, Nanos, MAPPING_UNIT_BYTES};
use nandstack_device::device::ZoneState;
use nandstack_device::ftl::blocks::BlockTable;
use nandstack_device::ftl::MappingTable;
use nandstack_device::hybrid::HybridSsd;
use nandstack_device::spec::{build, build_for_block_requests, DeviceSpec};
use nandstack_device::ssd::BlockSsd;
use nandstack_device::{Command, Device, ExtCommand, ZoneCommand};
use serde_json::{json, Value};

const U: u64 = MAPPING_UNIT_BYTES;

fn device(spec: Value) -> Box<dyn Device> {
    let mut s: DeviceSpec = serde_json::from_value(spec).expect("spec parses");
    s.normalize().expect("spec normalizes");
    let mut d = build(&s, 7, false, None).expect("device builds");
    d.enable_verification();
    d
}

/// Small devices of every block/hybrid flavour, named.
fn block_like() -> Vec<(String, Box<dyn Device>)> {
    let geo = json!({"channels": 2, "chips_per_channel": 1, "dies_per_chip": 2, "planes_per_die": 1,
                     "blocks_per_plane": 128, "pages_per_block": 32, "page_size_bytes": 8192});
    let mut out: Vec<(String, Box<dyn Device>)> = vec![
        (
            "block untimed".into(),
            device(
                json!({"kind": "block", "geometry": geo, "timing": {"enabled": false}, "ftl": {"over_provisioning": 0.2}}),
            ),
        ),
        (
            "block timed".into(),
            device(json!({"kind": "block", "geometry": geo, "ftl": {"over_provisioning": 0.2}})),
        ),
        (
            "block timed, write buffer".into(),
            device(
                json!({"kind": "block", "geometry": geo, "ftl": {"over_provisioning": 0.2},
                          "controller": {"write_buffer": {"bytes": 262144}}}),
            ),
        ),
    ];
    // A zoned device behind the host-side block layer (block requests on zones).
    let mut z: DeviceSpec = serde_json::from_value(json!({"kind": "zoned",
        "zoned": {"block_layer": {"over_provisioning": 0.5}}}))
    .unwrap();
    z.normalize().unwrap();
    let mut layer = build_for_block_requests(&z, 7, false, None).unwrap();
    layer.enable_verification();
    out.push(("zoned block layer".into(), layer));
    for m in ["qlc_only", "static", "dwa", "ust", "rl"] {
        out.push((
            format!("hybrid {m}"),
            device(json!({"kind": "hybrid",
                "hybrid": {"total_blocks": 120, "page_bytes": 4096, "qlc_pages_per_block": 16,
                           "slc_pages_per_block": 4, "over_provisioning": 0.25},
                "manager": {"kind": m}})),
        ));
    }
    out
}

/// A tiny deterministic generator (the suite shares nothing with the devices' own randomness).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[test]
fn block_and_hybrid_devices_keep_the_contract_under_random_commands() {
    for (name, mut d) in block_like() {
        let units = d.capacity_bytes() / U;
        assert!(units > 64, "{name}");
        // Work within 60% of the space so GC has room on every device.
        let span = units * 6 / 10;
        let mut mapped = vec![false; span as usize];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut now = 0u64;
        let mut last_write_done = 0u64;
        for i in 0..6000u64 {
            now += rng.below(20_000);
            let first = rng.below(span);
            let count = 1 + rng.below(8.min(span - first));
            let (off, len) = (first * U, count * U);
            let op = rng.below(10);
            let reads_before = d.stats().flash_read_pages;
            let cmd = match op {
                0..=5 => Command::write(off, len),
                6..=8 => Command::read(off, len),
                _ => Command::trim(off, len),
            };
            let c = d
                .submit(Nanos(now), cmd)
                .unwrap_or_else(|e| panic!("{name}: command {i}: {e}"));
            let done = c.done.0;
            assert!(
                done >= now,
                "{name}: command {i} completed before submission"
            );
            if op <= 5 {
                last_write_done = last_write_done.max(done);
            }
            let range = first as usize..(first + count) as usize;
            match op {
                0..=5 => mapped[range].iter_mut().for_each(|m| *m = true),
                6..=8 => {
                    // Units that read as no data: exactly the shadow's unmapped ones on a device that
                    // reports them (the block SSD), 0 on one that does not.
                    let empty = mapped[range.clone()].iter().filter(|m| !**m).count() as u64;
                    assert!(
                        c.unmapped_units == empty
                            || (c.unmapped_units == 0 && !name.starts_with("block")),
                        "{name}: command {i} reported {} unmapped units, {empty} expected",
                        c.unmapped_units
                    );
                    if mapped[range].iter().all(|m| !m) {
                        assert_eq!(
                            d.stats().flash_read_pages,
                            reads_before,
                            "{name}: a read of unmapped units read flash"
                        );
                    }
                }
                _ => mapped[range].iter_mut().for_each(|m| *m = false),
            }
            if i % 1000 == 999 {
                d.check_invariants()
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
            }
        }
        // NVMe Flush covers the writes completed before it is submitted: the host waits for its writes
        // (as Linux does before a PREFLUSH), then flushes.
        let at = now.max(last_write_done);
        let flushed = d.flush(Nanos(at)).unwrap().0;
        assert!(
            flushed >= at,
            "{name}: flush done at {flushed}, submitted at {at}"
        );
        d.verify_all().unwrap_or_else(|e| panic!("{name}: {e}"));
        let s = d.stats();
        assert!(s.host_write_requests > 0 && s.host_read_requests > 0 && s.host_trim_requests > 0);
        assert!(s.flash_program_pages > 0, "{name}");
    }
}

#[test]
fn errors_are_named_and_change_nothing() {
    for (name, mut d) in block_like() {
        let cap = d.capacity_bytes();
        d.write(Nanos(0), 0, 4 * U).unwrap();
        let before = d.stats();
        for cmd in [
            Command::write(cap, U),
            Command::write(cap - U, 2 * U),
            Command::read(cap, U),
            Command::trim(cap, U),
        ] {
            let e = d.submit(Nanos(10), cmd.clone()).unwrap_err();
            assert!(
                matches!(e, Error::OutOfRange(_)),
                "{name}: {cmd:?} gave {e}"
            );
        }
        let mut unsupported = vec![
            Command::Zone(ZoneCommand::Reset { zone: 0 }),
            Command::Zone(ZoneCommand::Report),
        ];
        // DISS's swap-range registration: block and hybrid devices take it (an out-of-range one is an
        // error).
        let register = Command::Ext(ExtCommand::RegisterSwapRange {
            offset: cap - U,
            len: 2 * U,
        });
        if name.starts_with("block") || name.starts_with("hybrid") {
            let e = d.submit(Nanos(10), register).unwrap_err();
            assert!(matches!(e, Error::OutOfRange(_)), "{name}: {e}");
        } else {
            unsupported.push(register);
        }
        for cmd in unsupported {
            let e = d.submit(Nanos(10), cmd.clone()).unwrap_err();
            assert!(
                matches!(e, Error::Unsupported(_)),
                "{name}: {cmd:?} gave {e}"
            );
        }
        assert_eq!(
            d.stats(),
            before,
            "{name}: a failed command changed counters"
        );
        assert!(d.zone_model().is_none(), "{name}");
        d.verify_all().unwrap();
    }
}

#[test]
fn reads_contending_for_one_chip_complete_in_submission_order() {
    for (name, mut d) in block_like() {
        // Data on flash (written, then flushed out of any buffer), then many reads of one unit at once.
        d.write(Nanos(0), 0, 64 * U).unwrap();
        let t = d.flush(Nanos(0)).unwrap().0 + 1_000_000;
        let mut prev = 0u64;
        let mut later = 0;
        for i in 0..16 {
            let done = d.read(Nanos(t), 0, U).unwrap().0;
            assert!(
                done >= t && done >= prev,
                "{name}: read {i} done {done} < {prev}"
            );
            if done > prev {
                later += 1;
            }
            prev = done;
        }
        if !name.contains("untimed") {
            assert!(
                later > 1,
                "{name}: reads of one unit did not queue on its die"
            );
        }
    }
}

#[test]
fn the_hybrid_chip_is_one_resource() {
    let mut d = device(
        json!({"kind": "hybrid", "hybrid": {"page_bytes": 4096}, "manager": {"kind": "qlc_only"}}),
    );
    // Write past the 144 KiB buffer: every further write programs QLC pages, one chip, in order.
    let mut prev = 0;
    let mut costed = 0;
    for i in 0..200u64 {
        let done = d.write(Nanos(0), i * U, U).unwrap().0;
        assert!(done >= prev, "write {i}");
        if done > prev {
            costed += 1;
        }
        prev = done;
    }
    assert!(costed > 100, "{costed} writes caused flash work");
    // A read submitted now waits for the chip.
    let r = d.read(Nanos(0), 0, U).unwrap().0;
    assert!(r >= prev, "read at {r} overtook the chip busy until {prev}");
}

#[test]
fn zoned_device_keeps_the_zone_protocol_and_returns_metadata() {
    let mut d = device(
        json!({"kind": "zoned", "zoned": {"zones": 8, "max_open_zones": 2, "max_active_zones": 3}}),
    );
    let z = d.zone_model().expect("a zoned device has a zone model");
    assert_eq!(z.zones, 8);
    let (size, cap) = (z.zone_size_bytes, z.zone_capacity_bytes);
    let units = 24u64.min(cap / U);
    // Sequential writes at the write pointer carry one metadata word per unit.
    let meta: Vec<u64> = (1..=units).map(|i| i * 1000 + 7).collect();
    let mut now = 0u64;
    for (i, m) in meta.iter().enumerate() {
        let c = d
            .submit(
                Nanos(now),
                Command::Write {
                    offset: i as u64 * U,
                    len: U,
                    meta: std::slice::from_ref(m),
                },
            )
            .unwrap();
        assert!(c.done.0 >= now);
        now += 1000;
    }
    let r = d.submit(Nanos(now), Command::read(0, units * U)).unwrap();
    assert_eq!(r.meta, meta, "reads return the metadata written");
    // Append lands at the write pointer and says where.
    let a = d
        .submit(
            Nanos(now),
            Command::Zone(ZoneCommand::Append {
                zone: 0,
                len: U,
                meta: &[42],
            }),
        )
        .unwrap();
    assert_eq!(a.written_at, Some(units * U));
    // A write not at the write pointer is a protocol error and changes nothing.
    let before = d.stats();
    let e = d.submit(Nanos(now), Command::write(0, U)).unwrap_err();
    assert!(matches!(e, Error::Protocol(_)), "{e}");
    let e = d
        .submit(Nanos(now), Command::read(8 * size, U))
        .unwrap_err();
    assert!(matches!(e, Error::OutOfRange(_)), "{e}");
    let e = d.submit(Nanos(now), Command::trim(0, U)).unwrap_err();
    assert!(matches!(e, Error::Unsupported(_)), "{e}");
    assert_eq!(d.stats().host_write_requests, before.host_write_requests);
    // Open and active limits (NVMe ZNS): zone 0 is implicitly open; opening zones 1 and 2 explicitly
    // closes zone 0 implicitly (at most 2 open); a fourth active zone (0 closed, 1, 2 open) is refused.
    for zone in [1, 2] {
        d.submit(Nanos(now), Command::Zone(ZoneCommand::Open { zone }))
            .unwrap();
    }
    let rep = d
        .submit(Nanos(now), Command::Zone(ZoneCommand::Report))
        .unwrap();
    assert_eq!(rep.zones[0].state, ZoneState::Closed);
    assert_eq!(rep.zones[2].state, ZoneState::ExplicitlyOpen);
    let e = d
        .submit(Nanos(now), Command::Zone(ZoneCommand::Open { zone: 3 }))
        .unwrap_err();
    assert!(matches!(e, Error::Protocol(_)), "{e}");
    // Reset empties a zone: its units read as unwritten (metadata 0) without flash reads.
    d.submit(Nanos(now), Command::Zone(ZoneCommand::Reset { zone: 0 }))
        .unwrap();
    let reads = d.stats().flash_read_pages;
    let r = d.submit(Nanos(now), Command::read(0, 4 * U)).unwrap();
    assert_eq!(r.meta, vec![0; 4]);
    assert_eq!(d.stats().flash_read_pages, reads);
    let rep = d
        .submit(Nanos(now), Command::Zone(ZoneCommand::Report))
        .unwrap();
    assert_eq!(rep.zones.len(), 8);
    assert_eq!(rep.zones[0].write_pointer, 0);
    let f = d.flush(Nanos(now)).unwrap().0;
    assert!(f >= now);
    d.verify_all().unwrap();
}

/// Block and hybrid devices with DISS's CL-SDI and SDS on, named; `exact`: a swap read's invalidations
/// are counted once per logical unit (a block SSD with a write buffer also invalidates the older flash
/// copy of a unit it drops from the buffer, so it may count a unit twice).
fn diss_devices() -> Vec<(String, bool, Box<dyn Device>)> {
    let geo = json!({"channels": 2, "chips_per_channel": 1, "dies_per_chip": 2, "planes_per_die": 1,
                     "blocks_per_plane": 128, "pages_per_block": 32, "page_size_bytes": 8192});
    let ftl = json!({"over_provisioning": 0.2, "placement": {"policy": "swap_file"},
                     "swap": {"invalidate_on_read": true}});
    let mut out: Vec<(String, bool, Box<dyn Device>)> = vec![
        (
            "block untimed".into(),
            true,
            device(
                json!({"kind": "block", "geometry": geo, "timing": {"enabled": false}, "ftl": ftl}),
            ),
        ),
        (
            "block timed, write buffer".into(),
            false,
            device(json!({"kind": "block", "geometry": geo, "ftl": ftl,
                          "controller": {"write_buffer": {"bytes": 262144}}})),
        ),
    ];
    for m in ["qlc_only", "static", "dwa", "ust", "rl"] {
        out.push((
            format!("hybrid {m}"),
            true,
            device(json!({"kind": "hybrid",
                "hybrid": {"total_blocks": 120, "page_bytes": 4096, "qlc_pages_per_block": 16,
                           "slc_pages_per_block": 4, "over_provisioning": 0.25,
                           "placement": {"policy": "swap_file"}, "swap": {"invalidate_on_read": true}},
                "manager": {"kind": m}})),
        ));
    }
    out
}

/// Units invalidated by swap reads so far (on flash or dropped from a write buffer), from the keys every
/// device that takes the swap range reports.
fn swap_invalidations(d: &dyn Device) -> u64 {
    let v = d.details();
    ["swap_invalidated_pages", "write_buffer_swap_dropped_pages"]
        .iter()
        .map(|k| v[*k].as_u64().unwrap_or_else(|| panic!("details lack {k}")))
        .sum()
}

/// Blocks whose valid units hold both swap-range data (`[first, end)`) and other data.
fn mixed_blocks(map: &MappingTable, t: &BlockTable, first: u32, end: u32) -> Vec<u32> {
    let upb = t.units_per_block;
    (0..t.len())
        .filter(|&b| {
            let mut kinds = [false; 2];
            for a in b * upb..(b + 1) * upb {
                if let Some(l) = map.owner(a) {
                    kinds[usize::from((first..end).contains(&l))] = true;
                }
            }
            kinds[0] && kinds[1]
        })
        .collect()
}

#[test]
fn swap_range_reads_invalidate_exactly_the_swap_units_and_sds_never_mixes_kinds() {
    for (name, exact, mut d) in diss_devices() {
        let units = d.capacity_bytes() / U;
        let span = units * 6 / 10;
        let (first, end) = (span / 2 + 3, span);
        d.submit(
            Nanos(0),
            Command::Ext(ExtCommand::RegisterSwapRange {
                offset: first * U,
                len: (end - first) * U,
            }),
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut mapped = vec![false; span as usize];
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let (mut now, mut swap_reads, mut file_reads) = (0u64, 0u64, 0u64);
        for i in 0..20_000u64 {
            now += rng.below(20_000);
            let a = rng.below(span);
            let count = 1 + rng.below(8.min(span - a));
            let range = a as usize..(a + count) as usize;
            let op = rng.below(10);
            // (Only reads and TRIMs are checked for invalidations: the details are not free.)
            let before = if op < 5 {
                0
            } else {
                swap_invalidations(d.as_ref())
            };
            let reads_before = d.stats().flash_read_pages;
            let cmd = match op {
                0..=4 => Command::write(a * U, count * U),
                5..=8 => Command::read(a * U, count * U),
                _ => Command::trim(a * U, count * U),
            };
            d.submit(Nanos(now), cmd)
                .unwrap_or_else(|e| panic!("{name}: command {i}: {e}"));
            let delta = if op < 5 {
                0
            } else {
                swap_invalidations(d.as_ref()) - before
            };
            match op {
                0..=4 => mapped[range].iter_mut().for_each(|m| *m = true),
                5..=8 => {
                    if mapped[range.clone()].iter().all(|m| !m) {
                        assert_eq!(
                            d.stats().flash_read_pages,
                            reads_before,
                            "{name}: unmapped read"
                        );
                    }
                    let swap = range.start.max(first as usize)..range.end;
                    let expected = mapped
                        .get(swap.clone())
                        .map_or(0, |s| s.iter().filter(|&&m| m).count() as u64);
                    if swap.is_empty() {
                        file_reads += 1;
                        assert_eq!(
                            delta, 0,
                            "{name}: command {i}: a file read invalidated data"
                        );
                    } else {
                        swap_reads += u64::from(expected > 0);
                        if exact {
                            assert_eq!(
                                delta, expected,
                                "{name}: command {i}: swap read of {range:?}"
                            );
                        } else {
                            assert!(
                                delta >= expected && delta <= 2 * expected,
                                "{name}: command {i}"
                            );
                        }
                        mapped[swap].iter_mut().for_each(|m| *m = false);
                    }
                }
                _ => {
                    assert_eq!(delta, 0, "{name}: a TRIM counted as a swap invalidation");
                    mapped[range].iter_mut().for_each(|m| *m = false);
                }
            }
        }
        assert!(
            swap_reads > 200 && file_reads > 200,
            "{name}: {swap_reads} / {file_reads}"
        );
        d.flush(Nanos(now + 1)).unwrap();
        d.verify_all().unwrap_or_else(|e| panic!("{name}: {e}"));
        let (first, end) = (first as u32, end as u32);
        let mixed = if let Some(b) = d.as_any().downcast_ref::<BlockSsd>() {
            mixed_blocks(b.ftl.mapping(), b.ftl.blocks(), first, end)
        } else {
            let h = d
                .as_any()
                .downcast_ref::<HybridSsd>()
                .expect("block or hybrid");
            mixed_blocks(h.ftl().mapping(), h.ftl().block_table(), first, end)
        };
        assert!(
            mixed.is_empty(),
            "{name}: blocks {mixed:?} mix swap and file data"
        );
        assert!(
            d.stats().erase_count > 0,
            "{name}: GC or migration never ran"
        );
    }
}
