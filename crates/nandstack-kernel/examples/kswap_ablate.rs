//! Which mechanisms the kernel comparison depends on: rerun every program with one mechanism changed
//! and print, per program, swap-in / swap-out / pages per write request outside the kernel's range.
//! `cargo run --release -p nandstack-kernel --example kswap_ablate`

use nandstack_host::config::{HostConfig, ReadaheadPolicyKind, SwapBackendConfig};
use nandstack_kernel::kswap::{self, outside};

/// A named change to the capture config.
type Variant = (&'static str, Box<dyn Fn(&mut HostConfig)>);

fn main() {
    let dir = kswap::captures_dir();
    let variants: Vec<Variant> = vec![
        ("as modelled", Box::new(|_| {})),
        (
            "VMA readahead",
            Box::new(|c| c.readahead.policy = ReadaheadPolicyKind::Vma),
        ),
        (
            "no readahead",
            Box::new(|c| c.readahead.policy = ReadaheadPolicyKind::Off),
        ),
        (
            "SSD below (block backend)",
            Box::new(|c| c.swap.backend = SwapBackendConfig::Block),
        ),
        (
            "default reclaim costs",
            Box::new(|c| {
                c.costs.reclaim_scan_ns = 300;
                c.costs.reclaim_write_ns = 0;
            }),
        ),
        (
            "no swap cache (cutoff 0)",
            Box::new(|c| c.swap.full_ratio = 1e-9),
        ),
        ("no workingset", Box::new(|c| c.reclaim.workingset = false)),
        (
            "cgroup v2 writeback",
            Box::new(|c| c.reclaim.cgroup_v1 = false),
        ),
    ];
    let programs = kswap::programs(&dir).expect("captures");
    for (label, f) in &variants {
        println!("{label}: swap-in / swap-out / pages per write, % outside the kernel's range");
        for p in &programs {
            let mut cfg = kswap::config(&p.captures[0]);
            f(cfg.host.as_mut().expect("a host config"));
            let sim = nandstack_sim::hostrun::simulate(&cfg, false).expect("run");
            let m = kswap::model_summary(&sim);
            let d = |name: &str, v: f64| 100.0 * outside(v, p.range(name));
            println!(
                "    {:<28} {:+7.1}% {:+7.1}% {:+7.1}%",
                p.name,
                d("pswpin", m.pswpin as f64),
                d("pswpout", m.pswpout as f64),
                d("write_pages_mean", m.writes.mean())
            );
        }
    }
}
