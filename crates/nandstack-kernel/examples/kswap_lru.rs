//! One capture's model run with an optional JSON patch: the cgroup's LRU list sizes over time.
//! `cargo run --release -p nandstack-kernel --example kswap_lru NAME [JSON-PATCH]`

use nandstack_kernel::kswap;
use nandstack_sim::hostrun::report;

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().expect("capture name");
    let patch: serde_json::Value = args.next().map_or(serde_json::json!({}), |p| {
        serde_json::from_str(&p).expect("patch is JSON")
    });
    let dir = kswap::captures_dir();
    let cfg = match kswap::load(&dir, &name).and_then(|c| kswap::config_patched(&c, &patch)) {
        Ok(cfg) => cfg,
        Err(e) => {
            eprintln!("{name}: {e} (names are the captures' file names without .json, e.g. kswap_hot_w30_r1)");
            std::process::exit(2);
        }
    };
    let mut sim = nandstack_sim::hostrun::build(&cfg, false, &mut |_, _, _| true).expect("build");
    if let Err(e) = sim.run(&mut |_, _, _| true) {
        println!("error: {e}");
    }
    let s = &sim.series;
    let m = sim
        .host
        .vm
        .memcgs
        .iter()
        .position(|m| m.name == "capswap")
        .expect("the capture's cgroup");
    let cg = &s.cgroups[m];
    println!("t_ms inactive_anon active_anon pswpin pswpout refault_anon activate_anon pgactivate pgdeactivate");
    for (i, t) in s.t_ms.iter().enumerate() {
        let d = |v: &Vec<u64>| v[i] - if i > 0 { v[i - 1] } else { 0 };
        println!(
            "{t:.0} {} {} {} {} {} {} {} {}",
            cg.lru_pages[0][i],
            cg.lru_pages[1][i],
            s.pswpin[i],
            s.pswpout[i],
            d(&cg.events[0]),
            d(&cg.events[1]),
            d(&cg.events[2]),
            d(&cg.events[3]),
        );
    }
    println!(
        "{}",
        serde_json::to_string(&report::report(&sim)["cgroups"]).unwrap()
    );
}
