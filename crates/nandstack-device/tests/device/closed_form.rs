//! Closed forms: FIFO cleaning of one write frontier under traffic made of k temperature classes.
//!
//! Class i receives a fraction `ops_i` of the writes, uniformly over a fraction `space_i` of the logical
//! units. A FIFO log turns over once every α·N / WAF host writes (α = 1 + effective over-provisioning,
//! N logical units; the log also carries the GC copies). A class-i unit survives that long without
//! being overwritten with probability p_i = exp(−α · ops_i / (space_i · WAF)), and a host write of class
//! i is then programmed 1 / (1 − p_i) times in all, so
//!
//!     WAF = Σ_i ops_i / (1 − exp(−α · ops_i / (space_i · WAF))),
//!
//! which for one class is the classic X = e^{−α(1−X)}, WAF = 1 / (1 − X). With the default GC schedule
//! (`every_write`) GC survivors and host writes share the frontier, as the model assumes.

use nandstack_core::Rng;
use nandstack_device::ftl::{FtlConfig, GcConfig, VictimConfig};
use nandstack_device::nand::{CellMode, Geometry};
use nandstack_device::Ftl;

/// Solve the fixed point by bisection on W in [1, 10^4].
fn fifo_waf(classes: &[(f64, f64)], alpha: f64) -> f64 {
    let rhs = |w: f64| -> f64 {
        classes
            .iter()
            .map(|&(ops, space)| ops / (1.0 - (-alpha * ops / (space * w)).exp()))
            .sum()
    };
    let (mut lo, mut hi) = (1.0f64, 1e4f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid < rhs(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Engine FIFO WAF at steady state for the classes on one plane of 1024 blocks × 64 units.
fn engine_waf(classes: &[(f64, f64)], op: f64, seed: u64) -> (f64, f64) {
    let geo = Geometry {
        channels: 1,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 1,
        blocks_per_plane: 1024,
        pages_per_block: 64,
        page_size_bytes: 4096,
        cell_mode: CellMode::Tlc,
    };
    let cfg = FtlConfig {
        over_provisioning: op,
        gc: GcConfig {
            victim: VictimConfig::Fifo,
            ..GcConfig::default()
        },
        ..FtlConfig::default()
    };
    let mut ftl = Ftl::new(geo, cfg, seed).unwrap();
    let n = ftl.logical_units() as u64;
    // Class boundaries over the logical units, and cumulative op shares.
    let mut bounds = Vec::new();
    let (mut start, mut acc) = (0u64, 0.0);
    for (i, &(ops, space)) in classes.iter().enumerate() {
        let end = if i + 1 == classes.len() {
            n
        } else {
            start + (space * n as f64).round() as u64
        };
        acc += ops;
        bounds.push((acc, start, end));
        start = end;
    }
    let mut rng = Rng::new(seed);
    let mut next = || {
        let x = rng.unit_f64();
        let &(_, s, e) = bounds
            .iter()
            .find(|b| x < b.0)
            .unwrap_or(bounds.last().unwrap());
        s + rng.below(e - s)
    };
    for u in 0..n {
        ftl.write(u * 4096, 4096).unwrap();
    }
    for _ in 0..10 * n {
        ftl.write(next() * 4096, 4096).unwrap();
    }
    ftl.reset_counters();
    for _ in 0..10 * n {
        ftl.write(next() * 4096, 4096).unwrap();
    }
    ftl.check_invariants().unwrap();
    (ftl.waf(), 1.0 + ftl.effective_over_provisioning())
}

#[test]
fn fifo_with_k_temperature_classes_matches_the_closed_form() {
    type Classes<'a> = &'a [(f64, f64)];
    let cases: [(&str, Classes, f64); 5] = [
        ("uniform, OP 7%", &[(1.0, 1.0)], 0.07),
        ("95/5, OP 7%", &[(0.95, 0.05), (0.05, 0.95)], 0.07),
        ("80/20, OP 12%", &[(0.8, 0.2), (0.2, 0.8)], 0.12),
        (
            "three classes 60/10, 30/30, 10/60, OP 7%",
            &[(0.6, 0.1), (0.3, 0.3), (0.1, 0.6)],
            0.07,
        ),
        (
            "three classes 60/10, 30/30, 10/60, OP 28%",
            &[(0.6, 0.1), (0.3, 0.3), (0.1, 0.6)],
            0.28,
        ),
    ];
    for (k, (name, classes, op)) in cases.iter().enumerate() {
        let (waf, alpha) = engine_waf(classes, *op, 11 + k as u64);
        let model = fifo_waf(classes, alpha);
        let rel = (waf - model) / model;
        eprintln!(
            "{name}: engine {waf:.3}, closed form {model:.3} (α {alpha:.4}), {:+.2}%",
            100.0 * rel
        );
        assert!(
            rel.abs() < 0.02,
            "{name}: engine {waf} vs closed form {model}"
        );
    }
}
