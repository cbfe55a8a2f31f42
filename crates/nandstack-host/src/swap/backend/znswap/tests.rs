//! Scenario tests of ZNSwap (crate-internal: they drive the host and the GC directly).
