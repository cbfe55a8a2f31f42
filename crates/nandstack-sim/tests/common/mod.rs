//! What several integration-test files share (each uses a part of it).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `../shared/traces/block` beside the repository, or `None` after saying that `what` is skipped
/// (the real traces are not in the repository; CI has them).
pub fn shared_block_traces(what: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/block");
    if dir.is_dir() {
        Some(dir.canonicalize().expect("canonical path"))
    } else {
        println!("skipping {what}: {} not found", dir.display());
        None
    }
}

/// A report without its `wall_*` figures (machine-dependent), at every depth.
pub fn strip_wall(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.retain(|k, _| !k.starts_with("wall_"));
            m.values_mut().for_each(strip_wall);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(strip_wall),
        _ => {}
    }
}
