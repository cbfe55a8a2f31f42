//! `cargo run --release -p nandstack-sim --example bench [ftl|timed|hybrid|all] [--quick]`: the same benchmarks as
//! `nandstack bench`, without Python (handy under perf/valgrind).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let name = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map_or("ftl", String::as_str);
    match nandstack_sim::bench_json(name, quick) {
        Ok(json) => println!("{json}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
