//! Run the model on one capture and write its swap requests in the capture's CSV format
//! (`time_s,op,sector,sectors,comm`, sectors relative to the swap partition).
//! `cargo run --release -p nandstack-kernel --example kswap_trace NAME OUT.csv [JSON-PATCH]` (the patch is
//! merged into the capture's config, objects key by key).

use nandstack_kernel::kswap;

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().expect("capture name");
    let out = args.next().expect("output CSV");
    let dir = kswap::captures_dir();
    let c = kswap::load(&dir, &name).expect("capture");
    let patch = args.next().map_or(serde_json::json!({}), |p| {
        serde_json::from_str(&p).expect("patch is JSON")
    });
    let mut cfg = kswap::config_patched(&c, &patch).expect("config");
    let tmp = format!("{out}.blk");
    cfg.run.block_trace = Some(nandstack_host::config::BlockTraceOut {
        path: tmp.clone(),
        format: nandstack_host::config::BlockTraceFormat::Blkparse,
    });
    let sim = nandstack_sim::hostrun::simulate(&cfg, false).expect("run");
    let m = &sim.host.vm.memcgs[1];
    let st = &m.stats;
    eprintln!(
        "{name}: pswpin {} pswpout {} pgscan {} pgsteal {} pgactivate {} pgdeactivate {} ws refault {} activate {} restore {} lists {:?} plug flushes {:?}",
        sim.host.stats.pswpin, sim.host.stats.pswpout, st.pgscan, st.pgsteal, st.pgactivate, st.pgdeactivate,
        st.workingset_refault_anon, st.workingset_activate_anon, st.workingset_restore_anon,
        (0..4).map(|l| m.lru_len(l)).collect::<Vec<_>>(), sim.host.plug.flushes
    );
    let base = sim.host.swap.base / 512;
    let nsect = sim.host.swap.nslots as u64 * 8;
    let text = std::fs::read_to_string(&tmp).expect("trace");
    let mut w = String::from("time_s,op,sector,sectors,comm\n");
    for l in text.lines() {
        // "259,0 0 SEQ S.NS 0 D OP SECTOR + N [COMM]"
        let f: Vec<&str> = l.split_whitespace().collect();
        let sector: u64 = f[7].parse().unwrap();
        if sector < base || sector >= base + nsect {
            continue;
        }
        let comm = f[10].trim_matches(|c| c == '[' || c == ']');
        w.push_str(&format!(
            "{},{},{},{},{}\n",
            f[3],
            f[6],
            sector - base,
            f[9],
            comm
        ));
    }
    std::fs::write(&out, w).expect("write");
    std::fs::remove_file(&tmp).ok();
}
