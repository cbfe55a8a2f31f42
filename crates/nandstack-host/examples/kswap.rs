//! Run the model on every real-kernel swap capture and print model vs kernel.
//! `cargo run --release -p nandstack-host --example kswap [DIR]`

use std::path::PathBuf;

use nandstack_host::kswap;

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/kernel-swap")
        });
    println!(
        "{:<28} {:>9} {:>9} {:>6} | {:>9} {:>9} {:>6} | rd req k/m  wr req k/m  wr pg/req k/m  disc k/m",
        "capture", "in kern", "in model", "diff", "out kern", "out model", "diff"
    );
    for name in kswap::CAPTURES {
        let c = kswap::load(&dir, name).expect("capture");
        let cfg = kswap::config(&c);
        let t = std::time::Instant::now();
        let sim = nandstack_host::run_config(&cfg, false, &mut |_, _, _| true).expect("run");
        let m = kswap::model_summary(&sim);
        let k = &c.kernel;
        let d = |a: u64, b: u64| 100.0 * (a as f64 - b as f64) / b as f64;
        println!(
            "{:<28} {:>9} {:>9} {:>5.1}% | {:>9} {:>9} {:>5.1}% | {}/{} {}/{} {:.2}/{:.2} {}/{}  ({:.2}s)",
            name,
            k.pswpin,
            m.pswpin,
            d(m.pswpin, k.pswpin),
            k.pswpout,
            m.pswpout,
            d(m.pswpout, k.pswpout),
            k.read_requests,
            m.read_requests,
            k.write_requests,
            m.write_requests,
            k.write_request_pages_mean(),
            m.write_request_pages_mean(),
            k.discard_requests,
            m.discard_requests,
            t.elapsed().as_secs_f64()
        );
        let st = &sim.host.stats;
        println!(
            "    1-page writes {:.1}%/{:.1}%  1-page reads {:.1}%/{:.1}%  model: swap-cache hits {} \
             readahead pages {} hits {}  slots freed at fault {}  swap used max {} highest slot {}",
            100.0 * k.single_page_writes as f64 / k.write_requests.max(1) as f64,
            100.0 * m.single_page_writes as f64 / m.write_requests.max(1) as f64,
            100.0 * k.single_page_reads as f64 / k.read_requests.max(1) as f64,
            100.0 * m.single_page_reads as f64 / m.read_requests.max(1) as f64,
            st.faults[1],
            st.readahead_pages,
            st.readahead_hits,
            st.swap_slot_freed_on_fault,
            sim.host.swap.stats.used_max,
            sim.host.swap.stats.max_slot
        );
    }
}
