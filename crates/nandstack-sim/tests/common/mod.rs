//! What several integration-test files share.

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
