//! Preconditioning: age a device with untimed commands (a fill in sequential or random order, then a
//! steady-state warm-up of the synthetic workload's writes), flush it and zero its counters. Block
//! workloads always do (the device kind's defaults); host programs when `[precondition]` asks.

use nandstack_core::{Result, MAPPING_UNIT_BYTES};
use nandstack_device::{Command, Device};
use nandstack_workload::perm::Permutation;
use nandstack_workload::{BlockGenerator, BlockRequest, Op};

use crate::config::{DeviceKindName, FillOrder, SimConfig};
use crate::drive::Checks;
use crate::progress::Ticker;

/// Apply one block request to the device's state without timing.
#[inline]
fn precondition(dev: &mut dyn Device, r: &BlockRequest) -> Result<()> {
    dev.precondition(match r.op {
        Op::Write => Command::write(r.offset, r.len),
        Op::Read => Command::read(r.offset, r.len),
        Op::Trim => Command::trim(r.offset, r.len),
    })
}

/// Fill and warm up, then leave the device idle with zeroed counters. Returns the warm-up's synthetic
/// generator: a synthetic measured phase continues its stream (the requests it generated ahead for the
/// prefetch pipeline are dropped), so the measured requests never repeat the warm-up's. `fractions`:
/// the fill fraction and warm-up multiple to use instead of the device kind's defaults (host programs).
pub(crate) fn prepare(
    cfg: &SimConfig,
    dev: &mut dyn Device,
    seed: u64,
    verify: bool,
    ticker: &mut Ticker,
    fractions: Option<(f64, f64)>,
) -> Result<BlockGenerator> {
    let kind = cfg.device.kind;
    let (fill_fraction, warmup) =
        fractions.unwrap_or((cfg.precondition.fill(kind), cfg.precondition.warmup(kind)));
    let units = dev.capacity_bytes() / MAPPING_UNIT_BYTES;
    let fill = (units as f64 * fill_fraction) as u64;
    if fill > 0 {
        ticker.phase("precondition", fill)?;
        let mut checks = periodic(cfg, fill, verify);
        let perm = (cfg.precondition.fill_order == FillOrder::Random)
            .then(|| Permutation::new(units, seed ^ 0x6669_6c6c));
        // A hybrid device is aged at the end of its logical space (as the RL paper's half-filled runs).
        let base = if kind == DeviceKindName::Hybrid {
            units - fill
        } else {
            0
        };
        for i in 0..fill {
            let u = perm.as_ref().map_or(base + i, |p| p.apply(i));
            dev.precondition(Command::write(u * MAPPING_UNIT_BYTES, MAPPING_UNIT_BYTES))?;
            ticker.tick(i + 1)?;
            checks.maybe(dev, i)?;
        }
    }
    let target = (dev.capacity_bytes() as f64 * warmup) as u64;
    let mut gen = BlockGenerator::new(&cfg.workload.synthetic, dev.capacity_bytes(), seed)?;
    if target > 0 {
        ticker.phase("warmup", target)?;
        let mut warm = periodic(cfg, target / MAPPING_UNIT_BYTES, verify);
        let mut pending = std::collections::VecDeque::with_capacity(4);
        let mut written = 0u64;
        let mut i = 0u64;
        while written < target {
            while pending.len() < 4 {
                pending.push_back(gen.next_request());
            }
            let r = pending.pop_front().expect("filled");
            let at = |i: usize| pending.get(i).map(|q: &BlockRequest| q.offset);
            dev.prefetch([at(0), at(1), at(2)]);
            precondition(dev, &r)?;
            if r.op == Op::Write {
                written += r.len;
            }
            ticker.tick(written)?;
            warm.maybe(dev, i)?;
            i += 1;
        }
    }
    // A drive left to itself after preconditioning has programmed its open pages and flushed its map.
    dev.precondition(Command::Flush)?;
    dev.reset_counters();
    Ok(gen)
}

/// Full invariant checks during a phase of `len` operations (16 per phase unless configured).
pub(crate) fn periodic(cfg: &SimConfig, len: u64, enabled: bool) -> Checks {
    Checks {
        enabled,
        every: match cfg.run.verify_every {
            0 => (len / 16).max(1),
            n => n,
        },
        done: 0,
    }
}
