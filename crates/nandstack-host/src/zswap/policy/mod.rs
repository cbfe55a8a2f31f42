//! The compressed cache's policies, so that schemes other than the kernel's (ezswap's selective
//! admission and compressibility-aware replacement) plug into the same store, load and writeback path:
//!
//! * [`Admission`]: whether a page that passed the pool-limit check is compressed and stored at all
//!   (zswap: every page, [`AdmitAll`]; ezswap's SA: only pages whose expected benefit, estimated from
//!   their entropy, beats the average);
//! * [`Replacement`]: which entry the writeback worker looks at next when the pool must shrink (zswap:
//!   per-cgroup LRU with a second chance, [`LruSecondChance`]; ezswap's CA: a lottery over pool-page
//!   categories whose victim page's objects go one by one).
//!
//! Entries are named by [`EntryId`]s that the cache allocates; a policy only ever sees ids of live
//! entries between [`Replacement::stored`] and [`Replacement::removed`].
//!
//! # Contract of [`Admission`]
//! * `admit` is called once per store attempt that the pool limit let through, before compression, with
//!   the page's bytes and its cgroup; it returns whether to compress and store it. It must be
//!   deterministic and must not keep references to the bytes.
//!
//! # Contract of [`Replacement`]
//! * `stored(e, memcg)` is called for every entry that enters the pool, `removed(e)` for every entry that
//!   leaves it (load, invalidation, writeback), in the order they happen; an id is never stored twice
//!   without a removal in between.
//! * `pick(memcg)` is one step of the writeback walk over cgroup `memcg`'s entries
//!   (`list_lru_walk_one` with one item): [`Pick::Empty`] when the cgroup has no entry,
//!   [`Pick::Rotate`] when the step only aged an entry (a failure for the worker's retry budget),
//!   [`Pick::Writeback`] with the entry to write back. After a writeback the cache calls `removed`; a
//!   failed writeback leaves the entry where the policy put it.
//! * Deterministic: no hash-map iteration; any randomness comes from a seeded generator.

mod admit_all;
mod lru;

pub use admit_all::AdmitAll;
pub use lru::LruSecondChance;

/// Names a stored entry of the compressed cache.
pub type EntryId = u32;

/// One step of the writeback walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// The cgroup has no entry (`-ENOENT`): try the next cgroup.
    Empty,
    /// An entry was given a second chance (rotated); nothing written.
    Rotate,
    /// Write this entry back.
    Writeback(EntryId),
}

/// Which pages the cache stores. See the module documentation for the contract.
pub trait Admission: Send {
    fn name(&self) -> &'static str;
    fn admit(&mut self, page: &[u8; 4096], memcg: u16) -> bool;
}

/// Which entry the writeback worker takes next. See the module documentation for the contract.
pub trait Replacement: Send {
    fn name(&self) -> &'static str;
    fn stored(&mut self, e: EntryId, memcg: u16);
    fn removed(&mut self, e: EntryId);
    fn pick(&mut self, memcg: u16) -> Pick;
    /// Entries of cgroup `memcg` the policy holds (`list_lru_count_one`).
    fn count(&self, memcg: u16) -> u64;
}

#[cfg(test)]
mod conformance;
