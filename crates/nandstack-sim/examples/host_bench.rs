//! `cargo run --release -p nandstack-sim --example host_bench [--quick]`: the host benchmark.
fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    println!(
        "{}",
        nandstack_sim::hostrun::bench_host(quick).expect("bench")
    );
}
