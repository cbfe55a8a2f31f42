use serde_json::json;
fn main() {
    let c = json!({
        "seed": 7,
        "host": {"ram_mib": 256, "cpus": 1, "swap": {"size_mib": 8, "full_ratio": 0.5}, "readahead": {"policy": "off"},
                 "cgroups": [{"name": "t", "limit_pages": 1024}]},
        "processes": [{"name": "p", "cgroup": "t", "workload": {"type": "memtouch", "pages": 2560, "ops": 20000, "pattern": "uniform", "write_pct": 0, "seed": 5}}],
        "device": {"geometry": {"channels": 1, "chips_per_channel": 1, "blocks_per_plane": 128}, "timing": {"enabled": false}},
        "run": {"verify_every_refs": 20000},
    });
    let cfg = nandstack_host::HostSimConfig::from_json(&c.to_string()).unwrap();
    match nandstack_host::run_config(&cfg, true, &mut |_, _, _| true) {
        Ok(sim) => {
            use nandstack_host::vm::page::*;
            let h = &sim.host;
            let mut st = std::collections::BTreeMap::new();
            for s in 1..h.swap.nslots as usize {
                *st.entry(h.swap.map[s]).or_insert(0) += 1;
            }
            println!("map states {:?}", st);
            let (mut res, mut sc, mut scu) = (0, 0, 0);
            for fr in &h.vm.frames {
                if fr.has(F_INUSE) && !fr.has(F_KERNEL) {
                    res += 1;
                    if fr.has(F_SWAPCACHE) {
                        sc += 1;
                        if !fr.has(F_MAPPED) {
                            scu += 1;
                        }
                    }
                }
            }
            println!(
                "resident {res} swapcache {sc} unmapped {scu} stats {:?}",
                h.stats.swapcache_dropped_full
            );
            println!(
                "{}",
                serde_json::to_string(&nandstack_host::report::report(&sim)["swap"]).unwrap()
            );
        }
        Err(e) => println!("{e}"),
    }
}
