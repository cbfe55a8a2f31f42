//! `cargo run --release -p nandstack-sim --example run -- CONFIG.toml [--verify]`: run a config and print
//! the report JSON (a Python-free way to run the engine, e.g. under a profiler).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let verify = args.iter().any(|a| a == "--verify");
    let text = match args.iter().find(|a| !a.starts_with("--")) {
        Some(p) => std::fs::read_to_string(p).unwrap_or_else(|e| {
            eprintln!("error: {p}: {e}");
            std::process::exit(2)
        }),
        None => String::new(),
    };
    match nandstack_sim::run_toml(
        &text,
        &nandstack_sim::RunOptions {
            seed: None,
            verify,
            ..Default::default()
        },
    ) {
        Ok(r) => println!("{}", r.to_json()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
