//! Integration tests of the device crate (one binary): property tests of the FTL, the brute-force
//! reference FTL and the differential tests against it (and of the hybrid's victim choice against a full
//! scan), and closed-form checks.

mod closed_form;
mod conformance;
mod differential;
mod hybrid_victims;
mod properties;
mod reference;

/// How many random devices the random-geometry differential tests draw: `NANDSTACK_DIFF_GEOMETRIES`,
/// else `default`.
fn diff_geometries(default: u64) -> u64 {
    std::env::var("NANDSTACK_DIFF_GEOMETRIES")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(default)
}
