//! One capture's model run with an optional JSON patch: the cgroup's LRU list sizes over time.
//! `cargo run --release -p nandstack-host --example kswap_lru NAME [JSON-PATCH]`

use std::path::PathBuf;

use nandstack_host::{kswap, report};

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().expect("capture name");
    let patch: serde_json::Value = args.next().map_or(serde_json::json!({}), |p| {
        serde_json::from_str(&p).expect("patch is JSON")
    });
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/kernel-swap");
    let cfg = match kswap::load(&dir, &name).and_then(|c| kswap::config_patched(&c, &patch)) {
        Ok(cfg) => cfg,
        Err(e) => {
            eprintln!("{name}: {e} (names are the captures' file names without .json, e.g. kswap_hot_w30_r1)");
            std::process::exit(2);
        }
    };
    let mut sim = nandstack_host::Sim::build(&cfg, false).expect("build");
    if let Err(e) = sim.run(&mut |_, _, _| true) {
        println!("error: {e}");
    }
    let r = report::report(&sim);
    let s = &r["series"];
    let cg = &s["cgroups"]["capswap"];
    println!("t_ms inactive_anon active_anon pswpin pswpout");
    for (i, t) in s["t_ms"].as_array().unwrap().iter().enumerate() {
        println!(
            "{:.0} {} {} {} {}",
            t.as_f64().unwrap(),
            cg["inactive_anon_pages"][i],
            cg["active_anon_pages"][i],
            s["pswpin"][i],
            s["pswpout"][i]
        );
    }
    println!("{}", serde_json::to_string(&r["cgroups"]).unwrap());
}
