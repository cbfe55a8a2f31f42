//! Run the model on one capture (optionally with OPS overridden) and print the report's main sections.
//! `cargo run --release -p nandstack-kernel --example kswap_one NAME [OPS]`

use nandstack_kernel::kswap;
use nandstack_sim::hostrun::report;

fn main() {
    let name = std::env::args().nth(1).expect("capture name");
    let dir = kswap::captures_dir();
    let mut c = kswap::load(&dir, &name).expect("capture");
    if let Some(ops) = std::env::args().nth(2) {
        c.ops = ops.parse().expect("ops");
    }
    let cfg = kswap::config(&c);
    let sim = nandstack_sim::hostrun::simulate(&cfg, true).expect("run");
    census(&sim);
    let mut r = report::report(&sim);
    let o = r.as_object_mut().unwrap();
    o.remove("series");
    o.remove("device");
    println!("{}", serde_json::to_string_pretty(&r).unwrap());
}

#[allow(dead_code)]
fn census(sim: &nandstack_sim::hostrun::Sim) {
    use nandstack_host::vm::page::*;
    let mut n = [0u64; 8];
    for fr in &sim.host.vm.frames {
        if !fr.has(F_INUSE) || fr.has(F_KERNEL) {
            continue;
        }
        n[0] += 1;
        if fr.has(F_SWAPCACHE) {
            n[1] += 1;
        }
        if fr.has(F_SWAPCACHE) && !fr.has(F_MAPPED) {
            n[2] += 1;
        }
        if fr.has(F_WRITEBACK) {
            n[3] += 1;
        }
        if fr.has(F_ACTIVE) {
            n[4] += 1;
        }
        if fr.has(F_REFERENCED) {
            n[5] += 1;
        }
        if fr.has(F_MAPPED) {
            n[6] += 1;
        }
        if fr.has(F_RECLAIM) {
            n[7] += 1;
        }
    }
    eprintln!("resident {} swapcache {} sc-unmapped {} writeback {} active {} referenced {} mapped {} reclaim {}",
        n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7]);
    // Position of unmapped swap-cache pages in the inactive list (from the tail).
    let m = &sim.host.vm.memcgs[1];
    let mut cur = m.lru[0].tail;
    let mut pos = 0;
    let mut first = Vec::new();
    while cur != NONE && first.len() < 10 {
        let fr = &sim.host.vm.frames[cur as usize];
        if fr.has(F_SWAPCACHE) && !fr.has(F_MAPPED) {
            first.push(pos);
        }
        pos += 1;
        cur = sim.host.vm.links[cur as usize].prev;
    }
    eprintln!(
        "inactive {} active {}; first unmapped swap-cache positions from tail: {:?}",
        m.lru[0].len, m.lru[1].len, first
    );
}
