//! `[host.fault]`: kernel-version differences of the fault path (docs/model-host.md, "Faults"). On the vm
//! floor: the fault parameters (`vm::counters`) carry the choice.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[host.fault]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FaultConfig {
    /// What a read swap-in maps and what a later write to that page does (`mm/memory.c`
    /// `do_swap_page` / `do_wp_page`): `map_writable` (Linux 6.18: the page is mapped writable and
    /// keeps its slot; a later write dirties it silently and its next eviction rewrites the same slot),
    /// `reuse_swap_page` (Linux 4.4: mapped read-only; the write fault frees the slot when its swap
    /// count is one and the page is not under writeback, so the page gets a fresh slot at its next
    /// eviction) or `cow_copy` (Linux 5.9–5.x, e.g. 5.12: mapped read-only; the write fault copies the
    /// page, because the swap cache holds a second reference, and the old page stays clean in the swap
    /// cache, unmapped, until reclaim frees it and its slot). A write fault at the swap-in itself frees
    /// the slot in all three (`should_try_to_free_swap` / `reuse_swap_page`). Default `map_writable`.
    #[serde(default)]
    pub swapin_write: SwapinWrite,
}

/// See [`FaultConfig::swapin_write`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SwapinWrite {
    /// Linux 6.18: mapped writable at a read swap-in, the slot kept.
    #[default]
    MapWritable,
    /// Linux 4.4: mapped read-only; the write fault frees the slot (`reuse_swap_page`).
    ReuseSwapPage,
    /// Linux 5.12: mapped read-only; the write fault copies the page (`do_wp_page`, page count 2).
    CowCopy,
}
