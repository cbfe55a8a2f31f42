//! Which mechanisms the kernel comparison depends on: rerun every capture with one mechanism changed
//! and print the swap-in / swap-out differences from the kernel.
//! `cargo run --release -p nandstack-host --example kswap_ablate`

use std::path::PathBuf;

use nandstack_host::config::{HostSimConfig, ReadaheadPolicyKind};
use nandstack_host::kswap;

/// A named change to the capture config.
type Variant = (&'static str, Box<dyn Fn(&mut HostSimConfig)>);

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/kernel-swap");
    let variants: Vec<Variant> = vec![
        ("as modelled", Box::new(|_| {})),
        (
            "no readahead",
            Box::new(|c| c.host.readahead.policy = ReadaheadPolicyKind::Off),
        ),
        (
            "no swap cache (cutoff 0)",
            Box::new(|c| c.host.swap.full_ratio = 1e-9),
        ),
        (
            "no workingset",
            Box::new(|c| c.host.reclaim.workingset = false),
        ),
        (
            "cgroup v2 writeback",
            Box::new(|c| c.host.reclaim.cgroup_v1 = false),
        ),
        (
            "device timing off",
            Box::new(|c| c.device.timing.enabled = false),
        ),
        (
            "TLC device",
            Box::new(|c| c.device.geometry.cell_mode = None),
        ),
        ("swappiness 100", Box::new(|c| c.host.swappiness = 100)),
    ];
    for (label, f) in &variants {
        let mut line = format!("{label:<26}");
        for name in kswap::CAPTURES {
            let c = kswap::load(&dir, name).expect("capture");
            let mut cfg = kswap::config(&c);
            cfg.host.cgroups[0].swappiness = None;
            f(&mut cfg);
            let sim = nandstack_host::run_config(&cfg, false, &mut |_, _, _| true).expect("run");
            let m = kswap::model_summary(&sim);
            let d = |a: u64, b: u64| 100.0 * (a as f64 - b as f64) / b as f64;
            line.push_str(&format!(
                " | {:+6.1}% {:+6.1}%",
                d(m.pswpin, c.kernel.pswpin),
                d(m.pswpout, c.kernel.pswpout)
            ));
        }
        println!("{line}");
    }
}
