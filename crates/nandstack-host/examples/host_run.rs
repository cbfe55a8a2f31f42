//! Run a host config (JSON file) and print the report without the time series.
//! `cargo run --release -p nandstack-host --example host_run CONFIG.json [--full]`
fn main() {
    let path = std::env::args().nth(1).expect("config path");
    let full = std::env::args().any(|a| a == "--full");
    let text = std::fs::read_to_string(&path).expect("read config");
    let out = nandstack_host::run_host_json(&text, None, false, &mut |_, _, _| true).expect("run");
    let mut v: serde_json::Value = serde_json::from_str(&out).unwrap();
    if !full {
        v.as_object_mut().unwrap().remove("series");
    }
    println!("{}", serde_json::to_string_pretty(&v).unwrap());
}
