//! `cargo run --release -p nandstack-host --example host_bench [--quick]`: the host benchmark.
fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    println!("{}", nandstack_host::bench_host(quick).expect("bench"));
}
