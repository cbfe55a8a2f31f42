//! Compressed-page pools: where zswap and zram keep compressed pages, and how many pages of memory that
//! costs. One file per allocator behind the [`Zpool`] trait:
//!
//! * [`zsmalloc`]: Linux 6.18's allocator (the only one zswap and zram have since 6.15) — size classes
//!   in 16-byte steps over zspages of 1..=8 pages, merged classes, fullness groups, holes left by frees,
//!   compaction only when asked ([`Zpool::compact`], the kernel's `zs_compact` from its shrinker or from
//!   zram's `compact` attribute);
//! * [`z3fold`]: up to three objects per page in 64-byte chunks (ezswap's pool; removed from Linux 6.15);
//! * [`zbud`]: up to two objects per page.
//!
//! Compressors are not here: a pool stores lengths (`nandstack-compress` produces them).
//!
//! # Contract
//! * [`Zpool::alloc`] stores an object of `len_bytes` (1..=[`Zpool::max_object_bytes`]) and returns a
//!   handle that stays valid, naming the same object, until freed — even when compaction moves it. A
//!   length of 0 or above the maximum is an [`nandstack_core::Error::OutOfRange`], and nothing changes.
//! * [`Zpool::free`] releases it; an unknown or already freed handle is an `OutOfRange` error.
//! * [`Zpool::total_pages`] counts every page the pool holds from the system, partly used and empty
//!   space inside them included (zswap's `pool_total_size` and zram's `mem_used_total` divided by 4096).
//!   A page whose last object goes is returned at once (zsmalloc frees an empty zspage in `zs_free`).
//! * [`Zpool::extent`] says where a live object sits: `(container, offset, len)` with containers of
//!   [`Zpool::container_bytes`]; live objects never overlap and stay inside their container.
//! * Everything is deterministic: the same calls give the same handles, placements and counts.

pub mod z3fold;
pub mod zbud;
pub mod zsmalloc;

#[cfg(test)]
mod conformance;

use nandstack_core::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use z3fold::Z3fold;
pub use zbud::Zbud;
pub use zsmalloc::Zsmalloc;

/// Page size of the modelled machine (x86-64).
pub const PAGE_BYTES: u32 = 4096;

/// Names a stored object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Handle(pub u32);

/// Where a live object sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Extent {
    /// A zspage (zsmalloc) or a page (z3fold, zbud); ids are reused once a container is freed.
    pub container: u64,
    pub offset_bytes: u32,
    /// Bytes the object occupies, allocator overhead stored with it included (zsmalloc's handle).
    pub len_bytes: u32,
}

/// A compressed-page allocator. See the module documentation for the contract.
pub trait Zpool {
    fn name(&self) -> &'static str;
    /// Largest object accepted (zsmalloc 4096, z3fold 4096 through a page of its own, zbud 3968).
    fn max_object_bytes(&self) -> u32;
    fn alloc(&mut self, len_bytes: u32) -> Result<Handle>;
    fn free(&mut self, handle: Handle) -> Result<()>;
    /// Pages held from the system.
    fn total_pages(&self) -> u64;
    /// Live objects.
    fn objects(&self) -> u64;
    /// Move objects to release pages, as the allocator's own compaction does; returns the pages freed.
    /// zsmalloc: `zs_compact`; z3fold and zbud compact a page on every free already: the default
    /// frees nothing.
    fn compact(&mut self) -> u64 {
        0
    }
    fn extent(&self, handle: Handle) -> Option<Extent>;
    /// Size of `container` in bytes (0 if it holds nothing).
    fn container_bytes(&self, container: u64) -> u32;
    /// Check the allocator's own bookkeeping (counts, lists); an [`Error::Invariant`] names what broke.
    fn check(&self) -> Result<()>;

    /// Append the handles of objects moved to another container since the last call (z3fold's
    /// `compact_single_buddy`), so that policies ranking containers can follow them. The default
    /// reports none (zbud never moves; zsmalloc's `compact` is not reported).
    fn take_moved(&mut self, _out: &mut Vec<Handle>) {}

    /// Bytes held from the system.
    fn total_bytes(&self) -> u64 {
        self.total_pages() * PAGE_BYTES as u64
    }
}

/// The pools by name (`zsmalloc`, `z3fold`, `z3fold_4_8`, `zbud`).
pub fn build(name: &str) -> Result<Box<dyn Zpool>> {
    match name {
        "zsmalloc" => Ok(Box::new(Zsmalloc::new())),
        "z3fold" => Ok(Box::new(Z3fold::new())),
        "z3fold_4_8" => Ok(Box::new(Z3fold::as_merged())),
        "zbud" => Ok(Box::new(Zbud::new())),
        _ => Err(Error::config(
            "zpool",
            format!("`{name}`: expected zsmalloc | z3fold | z3fold_4_8 | zbud"),
        )),
    }
}

fn check_len(pool: &str, len_bytes: u32, max: u32) -> Result<()> {
    if len_bytes == 0 || len_bytes > max {
        return Err(Error::OutOfRange(format!(
            "{pool}: object of {len_bytes} bytes (accepted: 1..={max})"
        )));
    }
    Ok(())
}

fn bad_handle(pool: &str, h: Handle) -> Error {
    Error::OutOfRange(format!("{pool}: handle {} is not allocated", h.0))
}

/// A slab of handles: handle → location, freed handles reused last-in first-out.
#[derive(Debug, Clone)]
struct Handles<L: Copy> {
    slots: Vec<Option<L>>,
    free: Vec<u32>,
    live: u64,
}

impl<L: Copy> Default for Handles<L> {
    fn default() -> Self {
        Handles {
            slots: Vec::new(),
            free: Vec::new(),
            live: 0,
        }
    }
}

impl<L: Copy> Handles<L> {
    fn insert(&mut self, loc: L) -> Handle {
        self.live += 1;
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(loc);
                Handle(i)
            }
            None => {
                self.slots.push(Some(loc));
                Handle(self.slots.len() as u32 - 1)
            }
        }
    }

    fn get(&self, h: Handle) -> Option<L> {
        self.slots.get(h.0 as usize).copied().flatten()
    }

    fn set(&mut self, h: Handle, loc: L) {
        self.slots[h.0 as usize] = Some(loc);
    }

    fn remove(&mut self, h: Handle) -> Option<L> {
        let loc = self.slots.get_mut(h.0 as usize)?.take()?;
        self.free.push(h.0);
        self.live -= 1;
        Some(loc)
    }
}

/// Ids for containers, reused smallest-first so runs are reproducible.
#[derive(Debug, Clone, Default)]
struct Ids {
    next: u32,
    free: std::collections::BTreeSet<u32>,
}

impl Ids {
    fn take(&mut self) -> u32 {
        match self.free.pop_first() {
            Some(i) => i,
            None => {
                self.next += 1;
                self.next - 1
            }
        }
    }

    fn give_back(&mut self, id: u32) {
        self.free.insert(id);
    }
}

/// Containers by id (ids reused smallest-first), with their count.
#[derive(Debug, Clone)]
struct Slab<P> {
    items: Vec<Option<P>>,
    ids: Ids,
    held: u64,
}

impl<P> Default for Slab<P> {
    fn default() -> Self {
        Slab {
            items: Vec::new(),
            ids: Ids::default(),
            held: 0,
        }
    }
}

impl<P> Slab<P> {
    fn insert(&mut self, item: P) -> u32 {
        let id = self.ids.take();
        if id as usize == self.items.len() {
            self.items.push(Some(item));
        } else {
            self.items[id as usize] = Some(item);
        }
        self.held += 1;
        id
    }

    fn remove(&mut self, id: u32) -> P {
        let item = self.items[id as usize].take().expect("live container");
        self.ids.give_back(id);
        self.held -= 1;
        item
    }

    fn get(&self, id: u32) -> Option<&P> {
        self.items.get(id as usize).and_then(|p| p.as_ref())
    }

    fn get_mut(&mut self, id: u32) -> &mut P {
        self.items[id as usize].as_mut().expect("live container")
    }

    fn iter(&self) -> impl Iterator<Item = (u32, &P)> {
        self.items
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.as_ref().map(|p| (i as u32, p)))
    }
}

/// An ordered list with O(log n) removal from anywhere: the kernel's `list_head` lists, where
/// `push_front` is `list_add` and `front` is `list_first_entry`.
#[derive(Debug, Clone, Default)]
struct OrderedList {
    by_key: std::collections::BTreeMap<i64, u32>,
}

impl OrderedList {
    fn push_front(&mut self, seq: &mut i64, id: u32) -> i64 {
        *seq += 1;
        self.by_key.insert(-*seq, id);
        -*seq
    }

    fn remove(&mut self, key: i64) {
        self.by_key.remove(&key);
    }

    fn front(&self) -> Option<(i64, u32)> {
        self.by_key.first_key_value().map(|(k, v)| (*k, *v))
    }

    fn len(&self) -> usize {
        self.by_key.len()
    }
}

/// The allocator holding compressed pages.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ZpoolKind {
    /// zsmalloc (the only allocator of Linux ≥ 6.15): size classes over zspages of 1–8 pages.
    Zsmalloc,
    /// z3fold (up to three objects per page; removed from Linux in 6.15, ezswap's pool), as last
    /// shipped.
    Z3fold,
    /// z3fold as first merged in Linux 4.8 (the ezswap paper's era): only a lone middle object is
    /// compacted on free.
    #[serde(rename = "z3fold_4_8")]
    Z3fold48,
    /// zbud (up to two objects per page; removed in 6.15).
    Zbud,
}

impl ZpoolKind {
    pub fn name(self) -> &'static str {
        match self {
            ZpoolKind::Zsmalloc => "zsmalloc",
            ZpoolKind::Z3fold => "z3fold",
            ZpoolKind::Z3fold48 => "z3fold_4_8",
            ZpoolKind::Zbud => "zbud",
        }
    }
}
