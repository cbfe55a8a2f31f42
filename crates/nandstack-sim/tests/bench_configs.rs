//! The committed benchmark configs (`configs/bench/`, docs/benchmarks.md) stay valid, and the in-cache
//! one is the `bench ftl` workload in steady state (uniform random writes at OP 12 %: WAF near 5).

use std::path::Path;

use nandstack_sim::{run_toml, RunOptions, SimConfig};

fn read(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../configs/bench")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn bench_configs_parse_and_validate() {
    for name in ["ftl_in_cache.toml", "timed_in_cache.toml", "ftl_64g.toml"] {
        let c = SimConfig::from_toml(&read(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        c.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(c.device.kind.name(), "block", "{name}");
    }
}

#[test]
fn in_cache_config_reaches_steady_state() {
    let text = read("ftl_in_cache.toml").replace("requests = 2000000", "requests = 100000");
    assert!(
        text.contains("requests = 100000"),
        "the config's request count moved"
    );
    let r = run_toml(&text, &RunOptions::default()).unwrap();
    let waf = r.waf.expect("WAF");
    assert!((4.0..6.5).contains(&waf), "WAF {waf}");
    assert_eq!(r.host_write_requests, 100_000);
}
