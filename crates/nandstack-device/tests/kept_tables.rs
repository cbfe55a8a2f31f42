//! A device built on the tables an earlier device handed back (`nandstack_core::alloc::keep`: its
//! mapping tables and cache indexes, dirty with that device's data) behaves exactly as one built on fresh
//! tables: the same completions, counters and details over a seeded stream of writes, reads and TRIMs
//! that reads back what the earlier device wrote. Its own binary: the kept tables are process-wide, and
//! no other test may build devices meanwhile.

use nandstack_core::alloc::{kept_bytes, kept_reuses, release_kept};
use nandstack_core::{Nanos, Rng, MAPPING_UNIT_BYTES as U};
use nandstack_device::spec::{build, DeviceSpec};
use nandstack_device::{Command, Device};
use serde_json::{json, Value};

fn device(spec: &Value) -> Box<dyn Device> {
    let mut s: DeviceSpec = serde_json::from_value(spec.clone()).expect("spec parses");
    s.normalize().expect("spec normalizes");
    build(&s, 7, false, None).expect("device builds")
}

/// Drive `dev` with `n` seeded requests over its first 256 MiB (writes, reads, TRIMs of 4–64 KiB) and
/// a few far ones; everything the run shows.
fn drive(dev: &mut dyn Device, seed: u64, n: u64) -> (Vec<u64>, Value, String) {
    let mut rng = Rng::new(seed);
    let space = (dev.capacity_bytes() / U).min(65_536);
    let far = dev.capacity_bytes() / U - 16;
    let mut done = Vec::with_capacity(n as usize);
    let mut now = 0u64;
    for i in 0..n {
        let units = 1 + rng.below(16);
        let first = if i % 64 == 0 {
            far
        } else {
            rng.below(space - units)
        };
        let (o, l) = (first * U, units * U);
        let cmd = match rng.below(10) {
            0..=5 => Command::write(o, l),
            6..=8 => Command::read(o, l),
            _ => Command::trim(o, l),
        };
        now = dev.submit(Nanos(now), cmd).expect("request").done.0;
        done.push(now);
    }
    dev.flush(Nanos(now)).expect("flush");
    (done, dev.details(), format!("{:?}", dev.stats()))
}

#[test]
fn a_device_on_kept_tables_matches_one_on_fresh_tables() {
    let block = json!({"kind": "block", "timing": {"enabled": false},
                       "controller": {"write_buffer": {"bytes": 1048576}},
                       "ftl": {"mapping_cache": {"entries": 100000}}});
    for (name, spec, tables) in [
        ("hybrid", json!({"kind": "hybrid"}), 3),
        (
            "hybrid ust",
            json!({"kind": "hybrid", "manager": {"kind": "ust"}}),
            3,
        ),
        ("block, buffer and mapping cache", block, 4),
    ] {
        release_kept();
        // An earlier device writes (its tables are dirty), then is dropped: they are kept.
        let mut first = device(&spec);
        drive(first.as_mut(), 1, 60_000);
        drop(first);
        assert!(kept_bytes() > 0, "{name}: nothing kept");
        let before = kept_reuses();
        let mut reused = device(&spec);
        assert_eq!(kept_reuses() - before, tables, "{name}: tables reused");
        assert_eq!(kept_bytes(), 0, "{name}: the build leaves nothing kept");
        let on_kept = drive(reused.as_mut(), 2, 60_000);
        drop(reused);
        release_kept();
        let mut fresh = device(&spec);
        let on_fresh = drive(fresh.as_mut(), 2, 60_000);
        assert!(on_fresh.0 == on_kept.0, "{name}: completion times differ");
        assert_eq!(on_fresh.1, on_kept.1, "{name}: details differ");
        assert_eq!(on_fresh.2, on_kept.2, "{name}: counters differ");
    }
}
