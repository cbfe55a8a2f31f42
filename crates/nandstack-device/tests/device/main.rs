//! Integration tests of the device crate (one binary): property tests of the FTL, the brute-force
//! reference FTL and the differential tests against it (and of the hybrid's victim choice against a full
//! scan), and closed-form checks.

mod closed_form;
mod conformance;
mod differential;
mod hybrid_victims;
mod properties;
mod reference;
