//! Aged devices kept per process. Aging a drive (`precondition::prepare`: the fill, then the warm-up
//! of the synthetic writes) is a pure function of what it reads — the device config, `[precondition]`,
//! the seed, the synthetic generator the warm-up draws from, the fill fractions — and of what the
//! device was told before (a host's swapon registers the swap range with a DISS device: the host
//! run's key includes the swap backend's report, which names it). Experiments run many programs on
//! the same aged drive (DISS's schemes differ in the host only; SUP-GC's sweeps vary the workload),
//! so the last few aged devices are kept ([`KEPT_MAX`], the least recently used leaves first), copied
//! ([`Device::snapshot`]), with the generator the warm-up left, and a run with the same key starts
//! from a copy of one instead of aging again: the same device state and the same generator, so the
//! same report (`tests/aged.rs` compares the reports of runs that age and runs that take the copy).
//!
//! Not under verification (its periodic checks belong to a verified run) and only for kinds that can
//! be copied (the block SSD and the hybrid; the zoned device returns no snapshot). Off unless the caller
//! expects another run with the same aging ([`set_keeping`]: the sweep runner sends tasks with the
//! same aging to one worker as a group, `nandstack.sweep.runner._aging_key`, and keeps for every
//! member but the last, which takes the kept device itself instead of a copy, unless a later group
//! ages the same way): a single run never pays for a copy it leaves behind. A run not keeping leaves
//! the other kept devices alone; [`clear`] drops them (the runner does, before a group none of whose
//! agings came earlier). `limits` counts the copy a run will keep; the ones kept before are memory
//! the process already holds, given back when a run would not fit otherwise
//! (`limits::ensure_fits`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use nandstack_core::{Error, Result};
use nandstack_device::Device;
use nandstack_workload::BlockGenerator;
use serde_json::{json, Value};

use crate::config::{SimConfig, WorkloadKind};

/// An aged device and the generator its warm-up left (block runs continue it).
type Aged = (Box<dyn Device>, Option<BlockGenerator>);

/// Aged devices kept at most: DISS's schemes age three ways per scenario (iTRIM and STRIM alike,
/// CL-SDI, DISS), and a worker's next scenario finds all three.
pub const KEPT_MAX: usize = 4;

/// The aged devices of this process by key, the most recently kept or taken last.
static KEPT: Mutex<Vec<(String, Aged)>> = Mutex::new(Vec::new());

fn lock() -> std::sync::MutexGuard<'static, Vec<(String, Aged)>> {
    // A panic while holding the lock leaves a whole entry or none: the data is still good.
    KEPT.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether a run of `cfg` ages its device: host programs only when `[precondition]` asks, block
/// workloads by the device kind's defaults unless both fractions are 0.
pub fn ages(cfg: &SimConfig) -> bool {
    let p = &cfg.precondition;
    if cfg.workload.kind == WorkloadKind::Host {
        p.fill_fraction.unwrap_or(0.0) > 0.0 || p.warmup_capacity_multiples.unwrap_or(0.0) > 0.0
    } else {
        p.fill(cfg.device.kind) > 0.0 || p.warmup(cfg.device.kind) > 0.0
    }
}

/// Everything aging reads: the device, `[precondition]`, the seed, the synthetic generator, the fill
/// fractions in force (`None`: the device kind's defaults), and `told` — what the device was told
/// before aging (a host run's swap backend report; `null` for block runs). `None` under verification.
pub(crate) fn key(
    cfg: &SimConfig,
    fractions: Option<(f64, f64)>,
    told: Value,
    verify: bool,
) -> Result<Option<String>> {
    if verify || !ages(cfg) {
        return Ok(None);
    }
    let facts = json!({
        "device": cfg.device,
        "precondition": cfg.precondition,
        "seed": cfg.seed,
        "synthetic": cfg.workload.synthetic,
        "fractions": fractions.map(|(f, w)| [f, w]),
        "told": told,
    });
    serde_json::to_string(&facts)
        .map(Some)
        .map_err(|e| Error::Invariant(format!("config does not serialize: {e}")))
}

/// Runs that started from a kept device (tests).
static COPIES: AtomicU64 = AtomicU64::new(0);

/// Whether runs keep their aged device for a later run ([`set_keeping`]).
static KEEPING: AtomicBool = AtomicBool::new(false);

/// Keep the aged device of the runs that follow (`true`: another run with the same aging is expected),
/// or not (`false`, the default: a run takes a kept device with its key for itself and keeps none).
pub fn set_keeping(on: bool) {
    KEEPING.store(on, Ordering::Relaxed);
}

/// Whether runs keep their aged device now ([`set_keeping`]).
pub fn keeping() -> bool {
    KEEPING.load(Ordering::Relaxed)
}

/// The device kept under `key` and its generator, if one is kept: a copy while keeping (the kept one
/// becomes the most recently used), else the kept device itself (no longer kept).
pub(crate) fn copy(key: &str) -> Option<Aged> {
    let mut kept = lock();
    let i = kept.iter().position(|(k, _)| k == key)?;
    let taken = if KEEPING.load(Ordering::Relaxed) {
        let (dev, gen) = &kept[i].1;
        let copied = (dev.snapshot()?, gen.clone());
        let entry = kept.remove(i);
        kept.push(entry);
        copied
    } else {
        kept.remove(i).1
    };
    COPIES.fetch_add(1, Ordering::Relaxed);
    Some(taken)
}

/// How many runs of this process started from a kept device (tests).
pub fn copies() -> u64 {
    COPIES.load(Ordering::Relaxed)
}

/// While keeping, keep a copy of `dev` (just aged) and of `gen` under `key` as the most recently used,
/// the least recently used one leaving first when [`KEPT_MAX`] are kept; nothing when the kind cannot
/// be copied.
pub(crate) fn keep(key: String, dev: &dyn Device, gen: Option<&BlockGenerator>) {
    if !KEEPING.load(Ordering::Relaxed) {
        return;
    }
    let mut kept = lock();
    kept.retain(|(k, _)| *k != key);
    if kept.len() >= KEPT_MAX {
        kept.remove(0); // the old copy goes before the new one is made
    }
    if let Some(copy) = dev.snapshot() {
        kept.push((key, (copy, gen.cloned())));
    }
}

/// Forget every kept device (the next run ages its own).
pub fn clear() {
    let gone = std::mem::take(&mut *lock());
    drop(gone);
}

/// Whether a device is kept.
pub fn holds() -> bool {
    !lock().is_empty()
}

/// How many devices are kept (tests).
pub fn held() -> usize {
    lock().len()
}
