//! Bookkeeping of pool pages for the replacement policies that evict whole pool pages (zswap 4.7's page
//! LRU on z3fold/zbud, ezswap's CA): which entries each pool page holds, how many of them are file
//! pages, the sum of their time stamps, the page's used chunks, and the ordered lists the pages sit on.
//!
//! A *group* is the entries of one cgroup on one pool page (with a single cgroup, as in the paper, a
//! group is the pool page). Each cgroup has `L` ordered lists (head = newest); a policy says which list
//! a group belongs on ([`Filing`]) and whether a change re-files it. Victims are picked per cgroup, and
//! their entries handed out one by one ([`PoolPages::next_victim_entry`]).
//!
//! Used chunks are z3fold's: `ceil(len / 64)` chunks of 63 usable per page; an object above 3,968 bytes
//! has a (headless) page to itself, which counts as full.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

use super::{EntryId, PageKind, Pick, Placement};
use crate::vm::page::NONE;

/// Usable 64-byte chunks of a z3fold/zbud page (one is the header).
pub const USABLE_CHUNKS: u32 = 63;
/// Largest object sharing a page (z3fold's and zbud's).
pub const MAX_BUDDY_BYTES: u32 = 4096 - 128;

#[derive(Debug, Clone, Copy)]
struct Rec {
    live: bool,
    memcg: u16,
    group: u32,
    kind: PageKind,
    chunks: u32,
    stamp: u64,
}

/// A group of entries (one cgroup's objects on one pool page).
#[derive(Debug, Clone, Default)]
pub struct Group {
    pub container: u64,
    pub memcg: u16,
    pub members: Vec<EntryId>,
    pub files: u32,
    pub stamp_sum: u64,
    /// (list, key) while listed.
    listed: Option<(usize, i64)>,
}

#[derive(Debug, Clone, Default)]
struct OList {
    by_key: BTreeMap<i64, u32>,
    lo: i64,
    hi: i64,
    stamp_total: u128,
}

/// How a policy files groups.
pub trait Filing {
    /// Lists per cgroup.
    fn lists(&self) -> usize;
    /// The list of a group (`used_chunks` of its pool page, `headless` when the page holds one big
    /// object).
    fn list_of(&self, g: &Group, used_chunks: u32, headless: bool) -> usize;
    /// Whether a group whose membership changed (`grew` = a new entry arrived) is re-filed; a group
    /// whose list changes is always re-filed.
    fn refile(&self, grew: bool) -> bool;
    /// On re-filing: head (newest end) or tail, given the group's stamp sum and the list's average
    /// (`None` for an empty list).
    fn at_head(&self, stamp_sum: u64, list_avg: Option<f64>, grew: bool) -> bool;
    /// The same decision, also given the group's member count and the pool's clock (entries stored so
    /// far), for rules by the members' age. Default: `at_head`.
    fn at_head_aged(
        &self,
        stamp_sum: u64,
        _members: u32,
        _clock: u64,
        list_avg: Option<f64>,
        grew: bool,
    ) -> bool {
        self.at_head(stamp_sum, list_avg, grew)
    }
}

#[derive(Debug, Clone, Default)]
struct Container {
    used_chunks: u32,
    headless: bool,
    groups: Vec<u32>,
}

/// The hasher of the maps by pool page: FxHash's multiply-rotate over the key's integers (pool page
/// ids are small, dense integers; SipHash or a B-tree walk cost more than the rest of a store).
#[derive(Default)]
struct IdHash(u64);

impl Hasher for IdHash {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u16(&mut self, v: u16) {
        self.write_u64(v as u64);
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// A map keyed by pool page. Probed, never iterated: its order cannot reach a result.
type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHash>>;

/// See the module documentation.
#[derive(Debug, Clone, Default)]
pub struct PoolPages {
    recs: Vec<Rec>,
    groups: Vec<Group>,
    free_groups: Vec<u32>,
    by_key: IdMap<(u64, u16), u32>,
    containers: IdMap<u64, Container>,
    /// Per cgroup, its lists.
    lists: Vec<Vec<OList>>,
    /// Per cgroup, entries of the current victim still to hand out.
    pending: Vec<VecDeque<EntryId>>,
    counts: Vec<u64>,
    clock: u64,
    /// Victim pages chosen, by (objects, file objects) at the choice (the paper's Fig. 11).
    victims: BTreeMap<(u32, u32), u64>,
}

impl PoolPages {
    fn cg(&mut self, memcg: u16, nlists: usize) {
        let m = memcg as usize;
        if self.lists.len() <= m {
            self.lists.resize_with(m + 1, Vec::new);
            self.pending.resize_with(m + 1, VecDeque::new);
            self.counts.resize(m + 1, 0);
        }
        if self.lists[m].len() < nlists {
            self.lists[m].resize_with(nlists, OList::default);
        }
    }

    /// Cgroups seen so far.
    pub fn cgroups(&self) -> usize {
        self.lists.len()
    }

    /// Entries of cgroup `memcg`.
    pub fn count(&self, memcg: u16) -> u64 {
        self.counts.get(memcg as usize).copied().unwrap_or(0)
    }

    pub fn group(&self, g: u32) -> &Group {
        &self.groups[g as usize]
    }

    /// Groups on list `l` of cgroup `memcg`, head (newest) first.
    pub fn list(&self, memcg: u16, l: usize) -> Vec<u32> {
        self.lists
            .get(memcg as usize)
            .and_then(|ls| ls.get(l))
            .map_or(Vec::new(), |o| o.by_key.values().copied().collect())
    }

    /// Groups on list `l` of cgroup `memcg`.
    pub fn list_len(&self, memcg: u16, l: usize) -> u64 {
        self.lists
            .get(memcg as usize)
            .and_then(|ls| ls.get(l))
            .map_or(0, |o| o.by_key.len() as u64)
    }

    /// The tail (oldest) group of list `l`.
    pub fn tail(&self, memcg: u16, l: usize) -> Option<u32> {
        self.lists
            .get(memcg as usize)?
            .get(l)?
            .by_key
            .last_key_value()
            .map(|(_, &g)| g)
    }

    /// `e` entered the pool (cgroup `memcg`); it joins a group at [`PoolPages::placed`].
    pub fn stored(&mut self, e: EntryId, memcg: u16) {
        let i = e as usize;
        if self.recs.len() <= i {
            self.recs.resize(
                i + 1,
                Rec {
                    live: false,
                    memcg: 0,
                    group: NONE,
                    kind: PageKind::Anon,
                    chunks: 0,
                    stamp: 0,
                },
            );
        }
        debug_assert!(!self.recs[i].live, "entry {e} stored twice");
        self.recs[i] = Rec {
            live: true,
            memcg,
            group: NONE,
            kind: PageKind::Anon,
            chunks: 0,
            stamp: self.clock,
        };
        // The global clock: a time stamp per zpage entering the pool.
        self.clock += 1;
        let m = memcg as usize;
        if self.counts.len() <= m {
            self.counts.resize(m + 1, 0);
        }
        self.counts[m] += 1;
    }

    /// `e` sits at `p` (first placement or a move).
    pub fn placed(&mut self, f: &dyn Filing, e: EntryId, p: Placement) {
        let rec = self.recs[e as usize];
        debug_assert!(rec.live);
        let fresh = rec.group == NONE;
        if !fresh {
            self.leave(f, e);
        }
        let (chunks, headless) = if p.len_bytes > MAX_BUDDY_BYTES {
            (USABLE_CHUNKS, true)
        } else {
            (p.len_bytes.div_ceil(64), false)
        };
        let r = &mut self.recs[e as usize];
        r.kind = p.kind;
        r.chunks = chunks;
        let memcg = r.memcg;
        let g = match self.by_key.get(&(p.container, memcg)) {
            Some(&g) => g,
            None => {
                let g = self.free_groups.pop().unwrap_or(self.groups.len() as u32);
                let grp = Group {
                    container: p.container,
                    memcg,
                    ..Group::default()
                };
                if g as usize == self.groups.len() {
                    self.groups.push(grp);
                } else {
                    self.groups[g as usize] = grp;
                }
                self.by_key.insert((p.container, memcg), g);
                self.containers
                    .entry(p.container)
                    .or_default()
                    .groups
                    .push(g);
                g
            }
        };
        self.recs[e as usize].group = g;
        self.add_stamp(g, rec.stamp as i128);
        let grp = &mut self.groups[g as usize];
        grp.members.push(e);
        grp.files += (p.kind == PageKind::File) as u32;
        let c = self.containers.get_mut(&p.container).expect("container");
        c.used_chunks += chunks;
        c.headless |= headless;
        self.refile_container(f, p.container, Some(g), fresh);
    }

    /// `e` left the pool.
    pub fn removed(&mut self, f: &dyn Filing, e: EntryId) {
        let rec = self.recs[e as usize];
        debug_assert!(rec.live, "entry {e} not stored");
        if rec.group != NONE {
            self.leave(f, e);
        }
        self.recs[e as usize].live = false;
        self.counts[rec.memcg as usize] -= 1;
        if let Some(p) = self.pending.get_mut(rec.memcg as usize) {
            p.retain(|&x| x != e);
        }
    }

    /// Take `e` out of its group (re-filing what is left).
    fn leave(&mut self, f: &dyn Filing, e: EntryId) {
        let rec = self.recs[e as usize];
        let g = rec.group;
        self.add_stamp(g, -(rec.stamp as i128));
        let grp = &mut self.groups[g as usize];
        grp.members.retain(|&x| x != e);
        grp.files -= (rec.kind == PageKind::File) as u32;
        let container = grp.container;
        let empty = grp.members.is_empty();
        self.recs[e as usize].group = NONE;
        let c = self.containers.get_mut(&container).expect("container");
        c.used_chunks -= rec.chunks;
        if rec.chunks == USABLE_CHUNKS && c.headless {
            c.headless = false;
        }
        if empty {
            c.groups.retain(|&x| x != g);
            if c.groups.is_empty() {
                self.containers.remove(&container);
            }
            self.unlist(g);
            let grp = &self.groups[g as usize];
            self.by_key.remove(&(grp.container, grp.memcg));
            self.free_groups.push(g);
        }
        if self.containers.contains_key(&container) {
            self.refile_container(f, container, None, false);
        }
    }

    /// Change group `g`'s stamp sum (and its list's total while it is listed).
    fn add_stamp(&mut self, g: u32, delta: i128) {
        let grp = &mut self.groups[g as usize];
        grp.stamp_sum = (grp.stamp_sum as i128 + delta) as u64;
        if let Some((l, _)) = grp.listed {
            let o = &mut self.lists[grp.memcg as usize][l];
            o.stamp_total = (o.stamp_total as i128 + delta) as u128;
        }
    }

    fn unlist(&mut self, g: u32) {
        let grp = &mut self.groups[g as usize];
        if let Some((l, key)) = grp.listed.take() {
            let o = &mut self.lists[grp.memcg as usize][l];
            o.by_key.remove(&key);
            o.stamp_total -= grp.stamp_sum as u128;
        }
    }

    /// Re-file the groups of `container` after a change (`changed` = the group that changed, `grew`
    /// when it gained a new entry).
    fn refile_container(
        &mut self,
        f: &dyn Filing,
        container: u64,
        changed: Option<u32>,
        grew: bool,
    ) {
        // The container's groups are not changed by re-filing: lent out for the loop, not copied.
        let c = self.containers.get_mut(&container).expect("container");
        let (used, headless) = (c.used_chunks, c.headless);
        let gs = std::mem::take(&mut c.groups);
        for &g in &gs {
            let want = f.list_of(&self.groups[g as usize], used, headless);
            let grp = &self.groups[g as usize];
            let is_changed = changed == Some(g) || changed.is_none();
            let moved = grp.listed.map(|(l, _)| l) != Some(want);
            let refile = is_changed && f.refile(grew && changed == Some(g));
            if !moved && !refile {
                continue;
            }
            self.unlist(g);
            let memcg = self.groups[g as usize].memcg;
            self.cg(memcg, f.lists());
            let grp = &self.groups[g as usize];
            let o = &mut self.lists[memcg as usize][want];
            let avg = (!o.by_key.is_empty()).then(|| o.stamp_total as f64 / o.by_key.len() as f64);
            let members = grp.members.len() as u32;
            let key = if f.at_head_aged(
                grp.stamp_sum,
                members,
                self.clock,
                avg,
                grew && changed == Some(g),
            ) {
                o.lo -= 1;
                o.lo
            } else {
                o.hi += 1;
                o.hi
            };
            o.by_key.insert(key, g);
            o.stamp_total += grp.stamp_sum as u128;
            self.groups[g as usize].listed = Some((want, key));
        }
        self.containers
            .get_mut(&container)
            .expect("container")
            .groups = gs;
    }

    /// The next entry of cgroup `memcg`'s current victim, if one is being handed out.
    pub fn next_victim_entry(&mut self, memcg: u16) -> Option<EntryId> {
        self.pending.get_mut(memcg as usize)?.pop_front()
    }

    /// Make group `g` the victim: its entries are handed out in order; it goes to the head of its list
    /// (so a victim whose writebacks fail is not picked again at once).
    pub fn set_victim(&mut self, g: u32) -> Option<EntryId> {
        let grp = &self.groups[g as usize];
        let kind = (grp.members.len() as u32, grp.files);
        *self.victims.entry(kind).or_default() += 1;
        let memcg = grp.memcg as usize;
        let members: Vec<EntryId> = grp.members.clone();
        if let Some((l, key)) = grp.listed {
            let o = &mut self.lists[memcg][l];
            o.by_key.remove(&key);
            o.lo -= 1;
            let k = o.lo;
            o.by_key.insert(k, g);
            self.groups[g as usize].listed = Some((l, k));
        }
        let p = &mut self.pending[memcg];
        p.clear();
        p.extend(members);
        p.pop_front()
    }

    /// Victim pages chosen so far, by (objects, file objects), in key order.
    pub fn victim_mix(&self) -> Vec<((u32, u32), u64)> {
        self.victims.iter().map(|(&k, &v)| (k, v)).collect()
    }

    /// Used chunks and headless flag of the pool page holding group `g`.
    pub fn page_of(&self, g: u32) -> (u32, bool) {
        let c = &self.containers[&self.groups[g as usize].container];
        (c.used_chunks, c.headless)
    }

    /// Make the tail group of list `l` of cgroup `memcg` (a list that has one) the victim: the first of
    /// its entries to write back (see [`PoolPages::set_victim`]).
    pub fn take_tail(&mut self, memcg: u16, l: usize) -> Pick {
        let g = self.tail(memcg, l).expect("a list with tickets has pages");
        match self.set_victim(g) {
            Some(e) => Pick::Writeback(e),
            None => Pick::Empty,
        }
    }

    /// [`PoolPages::check`], and every listed group on the list `f` files it on now.
    pub fn check_filing(&self, name: &str, f: &dyn Filing) -> nandstack_core::Result<()> {
        self.check(name)?;
        for m in 0..self.cgroups() {
            for l in 0..f.lists() {
                for g in self.list(m as u16, l) {
                    let (used, headless) = self.page_of(g);
                    if f.list_of(self.group(g), used, headless) != l {
                        return Err(nandstack_core::Error::Invariant(format!(
                            "{name}: group {g} on list {l}"
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    /// Check lists, groups and counts against each other.
    pub fn check(&self, name: &str) -> nandstack_core::Result<()> {
        let bad = |m: String| Err(nandstack_core::Error::Invariant(format!("{name}: {m}")));
        let live: u64 = self.recs.iter().filter(|r| r.live).count() as u64;
        if live != self.counts.iter().sum::<u64>() {
            return bad(format!("{live} live entries, counts {:?}", self.counts));
        }
        let mut listed = 0;
        for (m, ls) in self.lists.iter().enumerate() {
            for (l, o) in ls.iter().enumerate() {
                let mut total = 0u128;
                for (&k, &g) in &o.by_key {
                    let grp = &self.groups[g as usize];
                    if grp.listed != Some((l, k))
                        || grp.memcg as usize != m
                        || grp.members.is_empty()
                    {
                        return bad(format!("group {g} misfiled on list {l} of cgroup {m}"));
                    }
                    total += grp.stamp_sum as u128;
                    listed += 1;
                }
                if total != o.stamp_total {
                    return bad(format!("list {l} of cgroup {m}: stamp total"));
                }
            }
        }
        if listed != self.by_key.len() {
            return bad(format!("{listed} groups listed of {}", self.by_key.len()));
        }
        Ok(())
    }
}
