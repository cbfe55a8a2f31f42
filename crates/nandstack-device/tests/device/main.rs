//! Integration tests of the device crate (one binary): property tests of the FTL, the brute-force
//! reference FTL and the differential tests against it, and closed-form checks.

mod closed_form;
mod conformance;
mod differential;
mod properties;
mod reference;
