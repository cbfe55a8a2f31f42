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
//! * The cache calls [`Admission::decide`] (which defaults to `admit`) with an [`AdmitQuery`]: the
//!   page's kind and the pool's live totals at that moment; the [`Verdict`] says how many bytes the
//!   policy sampled (the cache charges their CPU time) besides whether to store.
//! * [`Admission::lookup`] is told of every page-in request that reaches the cache (the faulting page
//!   of a swap-in, if not in the zero map; the faulting block of a file read with all-page
//!   accommodation — not the readahead pages) and whether the cache held the page, in order.
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
//! * [`Replacement::placed`] is called after `stored` with where the entry sits in the pool
//!   ([`Placement`]) and again whenever the pool moves it to another container (z3fold's
//!   `compact_single_buddy`); policies that rank pool pages (ezswap's CA) keep their pages from it.
//! * Deterministic: no hash-map iteration; any randomness comes from a seeded generator.

mod admit_all;
pub mod config;
pub mod entropy_admission;
pub mod lottery;
pub mod lottery_code;
mod lru;
pub mod page_lru;
pub mod pool_pages;
pub mod ratio_fit;

pub use admit_all::AdmitAll;

use crate::contents::PageIn;
pub use entropy_admission::EntropyAdmission;
pub use lottery::Lottery;
pub use lottery_code::LotteryCode;
pub use lru::LruSecondChance;
pub use page_lru::PageLru;

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

/// What a stored page is: anonymous (its eviction costs a write and a read) or a clean file page
/// (all-page accommodation; its eviction costs a read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PageKind {
    Anon,
    File,
}

/// What the cache knows when it asks for admission: the page's kind and the pool's live totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdmitQuery {
    pub memcg: u16,
    pub kind: PageKind,
    /// Live entries by kind.
    pub live_anon: u64,
    pub live_file: u64,
    /// Σ stored lengths of the live entries, bytes (4096 for a page stored as it is).
    pub stored_bytes: u64,
    /// Σ of the live entries' lengths rounded up to 64-byte chunks (z3fold's unit), bytes.
    pub used_chunk_bytes: u64,
    /// The pool limit (`max_pool_percent` of RAM), bytes.
    pub limit_bytes: u64,
}

/// An admission decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub admit: bool,
    /// Bytes of the page the policy read to decide (entropy sample), for the CPU time.
    pub sampled_bytes: u32,
}

/// Which pages the cache stores. See the module documentation for the contract.
pub trait Admission: Send {
    fn name(&self) -> &'static str;
    fn admit(&mut self, page: &[u8; 4096], memcg: u16) -> bool;
    /// [`Admission::admit`] with the pool's state; the default ignores it and samples nothing. The
    /// page is built only if the policy reads it.
    fn decide(&mut self, page: &mut PageIn, q: &AdmitQuery) -> Verdict {
        Verdict {
            admit: self.admit(page.bytes(), q.memcg),
            sampled_bytes: 0,
        }
    }
    /// A page-in request reached the cache; `hit` when the cache held the page.
    fn lookup(&mut self, _hit: bool) {}
    /// Forget whatever is remembered by page key ([`PageIn::key`]): the host's contents were replaced.
    fn forget_keys(&mut self) {}
}

/// Where an entry sits in the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// The pool page (z3fold, zbud) holding it.
    pub container: u64,
    /// Stored length, bytes.
    pub len_bytes: u32,
    pub kind: PageKind,
}

/// Which entry the writeback worker takes next. See the module documentation for the contract.
pub trait Replacement: Send {
    fn name(&self) -> &'static str;
    fn stored(&mut self, e: EntryId, memcg: u16);
    fn removed(&mut self, e: EntryId);
    fn pick(&mut self, memcg: u16) -> Pick;
    /// Entries of cgroup `memcg` the policy holds (`list_lru_count_one`).
    fn count(&self, memcg: u16) -> u64;
    /// Entry `e` sits at `p` (after `stored`, and after a move); the default ignores it.
    fn placed(&mut self, _e: EntryId, _p: Placement) {}
    /// Check the policy's own bookkeeping (verify mode); the default has none to check.
    fn check(&self) -> nandstack_core::Result<()> {
        Ok(())
    }
    /// For a policy that evicts whole pool pages: the victim pages it has chosen, counted by
    /// (objects on the page, file objects among them) when chosen, in key order (the paper's Fig. 11).
    /// The default (an entry-granular policy) has none.
    fn victim_mix(&self) -> Vec<((u32, u32), u64)> {
        Vec::new()
    }

    /// For a lottery: victims drawn per list (category), in list order, and the draws that found no
    /// ticket. The default (no lottery) has none.
    fn draws(&self) -> (Vec<u64>, u64) {
        (Vec::new(), 0)
    }
}

#[cfg(test)]
mod conformance;
#[cfg(test)]
mod lottery_twin;

/// The admission and replacement policies `cfg` names (`seed`: the run's, for the lottery).
pub fn from_config(
    cfg: &crate::zswap::ZswapConfig,
    seed: u64,
) -> nandstack_core::Result<(Box<dyn Admission>, Box<dyn Replacement>)> {
    use config::{AdmissionKind, ReplacementKind};
    let ez = &cfg.ezswap;
    ez.validate(cfg.zpool)?;
    let admission: Box<dyn Admission> = match ez.admission {
        AdmissionKind::All => Box::new(AdmitAll),
        AdmissionKind::Entropy => {
            let sample = ez.sample.sample();
            Box::new(EntropyAdmission::new(
                ratio_fit::builtin(cfg.compressor.algorithm(), sample),
                sample,
                ez.cost_file,
                ez.cost_anon,
            ))
        }
    };
    let replacement: Box<dyn Replacement> = match ez.replacement {
        ReplacementKind::Lru => Box::new(LruSecondChance::new()),
        ReplacementKind::PageLru => Box::new(PageLru::new()),
        ReplacementKind::Lottery => Box::new(Lottery::new(
            ez.cost_file,
            ez.cost_anon,
            seed ^ ez.lottery_seed.rotate_left(17),
        )),
        ReplacementKind::LotteryCode => Box::new(LotteryCode::new(
            ez.lottery_code_age,
            seed ^ ez.lottery_seed.rotate_left(17),
        )),
    };
    Ok((admission, replacement))
}
