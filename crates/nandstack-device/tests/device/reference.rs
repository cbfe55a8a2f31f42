//! A brute-force reference FTL, written for obviousness: it shares no code with the engine's FTL (only the
//! seeded RNG of `nandstack-core`, so that the randomized victim policies can be compared in lockstep).
//!
//! Every block keeps the logical unit stored in each slot; a slot is valid iff the map points back at it.
//! Victims are chosen by scanning every block in scope; there are no buckets, queues or indexes. The
//! contracts it implements are those documented in `ftl/config.rs`, `ftl/gc/*.rs` and docs/model-ftl.md:
//!
//! * allocation is static: the plane of a host write of unit `u` is `(u / units_per_page) % planes`
//!   (the reference is only used with geometries whose planes are all channels, where that is the
//!   engine's default striping);
//! * free blocks are taken in the order they became free (initially by block id) per plane;
//! * GC schedule: `every_write` tests the threshold before every host unit write, `block_open` only
//!   when the host write needs a new block (before taking it); a burst collects victims until free
//!   blocks in scope reach `start` (`to_start`) or `stop` (`to_stop`), or exactly one victim
//!   (`one_victim`); a host write that needs a new block never leaves its plane with `streams` or fewer
//!   free blocks (plane GC first) — except, with `one_victim` and `block_open`, when the threshold GC
//!   left an open block in the write's stream: the write goes there;
//! * migrations keep the victim's plane and go to the stream the placement gives them, in slot order;
//! * greedy: fewest valid units; device scope breaks ties on the lower plane first; then by when the
//!   block reached its count (sealed, or lost a valid unit while sealed): oldest or newest;
//! * cost-benefit: max (age + 1) × (1 − u) / 2u with age = host units written since the block's last
//!   write or invalidation; u = 0 is infinite; ties to the lower block id;
//! * FIFO: the block sealed first; random: a uniform pick from the candidate list; d-choices: `d` uniform
//!   picks with replacement, the first with the fewest valid units. The candidate list is kept in
//!   insertion order with swap-removal, per plane, and device scope indexes the planes' lists end to end.

use std::collections::VecDeque;

use nandstack_core::Rng;

/// The "logical unit" of a padding slot.
const PADDING: u32 = u32::MAX;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Victim {
    Greedy { newest: bool },
    CostBenefit,
    Fifo,
    Random,
    DChoices(u32),
}

/// What one GC invocation collects.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Burst {
    ToStart,
    ToStop,
    OneVictim,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Trigger {
    EveryWrite,
    BlockOpen,
}

/// Where each write goes: `Single` (one stream), `HostGc` (host → 0, migrations → 1) or `Oracle` (by
/// the unit's true temperature, for host writes and migrations alike).
#[derive(Clone, Debug)]
pub enum Placement {
    Single,
    HostGc,
    Oracle(Vec<bool>),
}

#[derive(Clone, Debug)]
pub struct RefConfig {
    pub planes: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    pub units_per_page: u32,
    pub logical_units: u32,
    pub start: u32,
    pub stop: u32,
    pub burst: Burst,
    pub trigger: Trigger,
    pub device_scope: bool,
    pub victim: Victim,
    pub placement: Placement,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum State {
    Free,
    Open,
    Sealed,
}

#[derive(Clone, Debug)]
struct Block {
    /// Logical unit written in each slot (`None`: not written yet, or padding).
    slots: Vec<Option<u32>>,
    state: State,
    sealed_order: u64,
    /// Event number at which the block reached its current valid count while sealed.
    count_since: u64,
    /// Host clock of the last write into or invalidation of the block.
    modified_at: u64,
    candidate: bool,
    /// Valid units, counted as they come and go (`scanned_valid` recounts them from the slots).
    valid: u32,
}

/// One GC victim: (block id, valid units moved).
pub type RefGcEvent = (u32, u32);

pub struct RefFtl {
    pub cfg: RefConfig,
    blocks: Vec<Block>,
    /// Logical unit → (block, slot).
    map: Vec<Option<(u32, u32)>>,
    free: Vec<VecDeque<u32>>,
    /// Open block per (stream, plane).
    open: Vec<Option<u32>>,
    /// Candidate lists per plane, insertion order with swap-removal (for random and d-choices).
    lists: Vec<Vec<u32>>,
    streams: u32,
    clock: u64,
    events: u64,
    seals: u64,
    rng: Rng,
    pub programs: u64,
    pub host_units: u64,
    pub moved_units: u64,
    pub erases: u64,
    pub gc_log: Vec<RefGcEvent>,
}

impl RefFtl {
    pub fn new(cfg: RefConfig, rng: Rng) -> RefFtl {
        let units_per_block = (cfg.pages_per_block * cfg.units_per_page) as usize;
        let total = (cfg.planes * cfg.blocks_per_plane) as usize;
        let streams = match cfg.placement {
            Placement::Single => 1,
            _ => 2,
        };
        RefFtl {
            blocks: vec![
                Block {
                    slots: vec![None; units_per_block],
                    state: State::Free,
                    sealed_order: 0,
                    count_since: 0,
                    modified_at: 0,
                    candidate: false,
                    valid: 0,
                };
                total
            ],
            map: vec![None; cfg.logical_units as usize],
            free: (0..cfg.planes)
                .map(|p| (p * cfg.blocks_per_plane..(p + 1) * cfg.blocks_per_plane).collect())
                .collect(),
            open: vec![None; (streams * cfg.planes) as usize],
            lists: vec![Vec::new(); cfg.planes as usize],
            streams,
            clock: 0,
            events: 0,
            seals: 0,
            rng,
            programs: 0,
            host_units: 0,
            moved_units: 0,
            erases: 0,
            gc_log: Vec::new(),
            cfg,
        }
    }

    fn plane_of(&self, block: u32) -> u32 {
        block / self.cfg.blocks_per_plane
    }

    /// Valid units of a block (the running count).
    pub fn valid(&self, block: u32) -> u32 {
        self.blocks[block as usize].valid
    }

    /// Valid units of a block, recounted by scanning its slots.
    pub fn scanned_valid(&self, block: u32) -> u32 {
        self.blocks[block as usize]
            .slots
            .iter()
            .enumerate()
            .filter(|&(slot, lpn)| {
                lpn.is_some_and(|l| {
                    l != PADDING && self.map[l as usize] == Some((block, slot as u32))
                })
            })
            .count() as u32
    }

    pub fn state(&self, block: u32) -> State {
        self.blocks[block as usize].state
    }

    pub fn total_blocks(&self) -> u32 {
        self.blocks.len() as u32
    }

    fn free_in_scope(&self, plane: u32) -> u32 {
        if self.cfg.device_scope {
            self.free.iter().map(|q| q.len() as u32).sum()
        } else {
            self.free[plane as usize].len() as u32
        }
    }

    fn stream_for(&self, lpn: u32, host: bool) -> u32 {
        match &self.cfg.placement {
            Placement::Single => 0,
            Placement::HostGc => u32::from(!host),
            Placement::Oracle(hot) => u32::from(!hot[lpn as usize]),
        }
    }

    pub fn write(&mut self, lpn: u32) {
        let plane = (lpn / self.cfg.units_per_page) % self.cfg.planes;
        let stream = self.stream_for(lpn, true);
        if self.cfg.trigger == Trigger::EveryWrite {
            self.gc_if_below_start(plane);
        }
        if self.open[(stream * self.cfg.planes + plane) as usize].is_none() {
            if self.cfg.trigger == Trigger::BlockOpen {
                self.gc_if_below_start(plane);
            }
            let took_gc_block = self.cfg.trigger == Trigger::BlockOpen
                && self.cfg.burst == Burst::OneVictim
                && self.open[(stream * self.cfg.planes + plane) as usize].is_some();
            while !took_gc_block && self.free[plane as usize].len() as u32 <= self.streams {
                self.collect(Some(plane));
            }
        }
        self.clock += 1;
        self.unmap(lpn);
        self.append(stream, plane, lpn);
        self.host_units += 1;
    }

    pub fn trim(&mut self, lpn: u32) {
        self.unmap(lpn);
    }

    /// Pad every open block's partly written page (FLUSH).
    pub fn flush(&mut self) {
        for k in 0..self.open.len() {
            let Some(b) = self.open[k] else { continue };
            let written = self.written(b);
            let rem = written % self.cfg.units_per_page;
            if rem == 0 {
                continue;
            }
            for slot in written..written + self.cfg.units_per_page - rem {
                // A padding slot is written but holds no data.
                self.blocks[b as usize].slots[slot as usize] = Some(PADDING);
            }
            self.programs += 1;
            if self.written(b) as usize == self.blocks[b as usize].slots.len() {
                self.seal(b, k);
            }
        }
    }

    fn written(&self, b: u32) -> u32 {
        self.blocks[b as usize]
            .slots
            .iter()
            .filter(|s| s.is_some())
            .count() as u32
    }

    fn unmap(&mut self, lpn: u32) {
        if let Some((b, _)) = self.map[lpn as usize].take() {
            let blk = &mut self.blocks[b as usize];
            blk.valid -= 1;
            blk.modified_at = self.clock;
            if blk.state == State::Sealed {
                self.events += 1;
                blk.count_since = self.events;
            }
        }
    }

    fn append(&mut self, stream: u32, plane: u32, lpn: u32) {
        let k = (stream * self.cfg.planes + plane) as usize;
        let b = match self.open[k] {
            Some(b) => b,
            None => {
                let b = self.free[plane as usize]
                    .pop_front()
                    .expect("reference: a free block for the write");
                self.blocks[b as usize].state = State::Open;
                self.open[k] = Some(b);
                b
            }
        };
        let slot = self.written(b);
        self.blocks[b as usize].slots[slot as usize] = Some(lpn);
        self.blocks[b as usize].modified_at = self.clock;
        self.blocks[b as usize].valid += 1;
        self.map[lpn as usize] = Some((b, slot));
        if (slot + 1).is_multiple_of(self.cfg.units_per_page) {
            self.programs += 1;
        }
        if (slot + 1) as usize == self.blocks[b as usize].slots.len() {
            self.seal(b, k);
        }
    }

    fn seal(&mut self, b: u32, k: usize) {
        self.open[k] = None;
        self.seals += 1;
        self.events += 1;
        let plane = self.plane_of(b) as usize;
        let blk = &mut self.blocks[b as usize];
        blk.state = State::Sealed;
        blk.sealed_order = self.seals;
        blk.count_since = self.events;
        blk.candidate = true;
        self.lists[plane].push(b);
    }

    fn gc_if_below_start(&mut self, plane: u32) {
        if self.free_in_scope(plane) >= self.cfg.start {
            return;
        }
        let scope = (!self.cfg.device_scope).then_some(plane);
        let target = match self.cfg.burst {
            Burst::ToStart => self.cfg.start,
            Burst::ToStop => self.cfg.stop,
            Burst::OneVictim => {
                self.collect(scope);
                return;
            }
        };
        let mut guard = 0;
        while self.free_in_scope(plane) < target {
            self.collect(scope);
            guard += 1;
            assert!(guard < 1_000_000, "reference GC does not converge");
        }
    }

    /// Candidates in scope, plane by plane, in block id order.
    fn candidates(&self, scope: Option<u32>) -> Vec<u32> {
        (0..self.total_blocks())
            .filter(|&b| self.blocks[b as usize].candidate)
            .filter(|&b| scope.is_none_or(|p| self.plane_of(b) == p))
            .collect()
    }

    /// The candidate list of the scope (random / d-choices), planes end to end.
    fn list(&self, scope: Option<u32>) -> Vec<u32> {
        match scope {
            Some(p) => self.lists[p as usize].clone(),
            None => self.lists.concat(),
        }
    }

    fn choose(&mut self, scope: Option<u32>) -> u32 {
        let cands = self.candidates(scope);
        assert!(!cands.is_empty(), "reference: no victim in {scope:?}");
        match self.cfg.victim {
            Victim::Greedy { newest } => *cands
                .iter()
                .min_by_key(|&&b| {
                    let since = self.blocks[b as usize].count_since as i64;
                    (
                        self.valid(b),
                        self.plane_of(b),
                        if newest { -since } else { since },
                    )
                })
                .unwrap(),
            Victim::Fifo => *cands
                .iter()
                .min_by_key(|&&b| self.blocks[b as usize].sealed_order)
                .unwrap(),
            Victim::CostBenefit => {
                let upb = self.blocks[0].slots.len() as f64;
                let mut best: Option<(f64, u32)> = None;
                for &b in &cands {
                    let u = self.valid(b) as f64 / upb;
                    let score = if u == 0.0 {
                        f64::INFINITY
                    } else {
                        let age = (self.clock - self.blocks[b as usize].modified_at) as f64 + 1.0;
                        age * (1.0 - u) / (2.0 * u)
                    };
                    if best.is_none_or(|(s, _)| score > s) {
                        best = Some((score, b));
                    }
                }
                best.unwrap().1
            }
            Victim::Random => {
                let list = self.list(scope);
                list[self.rng.below(list.len() as u64) as usize]
            }
            Victim::DChoices(d) => {
                let list = self.list(scope);
                let mut best = list[self.rng.below(list.len() as u64) as usize];
                for _ in 1..d {
                    let c = list[self.rng.below(list.len() as u64) as usize];
                    if self.valid(c) < self.valid(best) {
                        best = c;
                    }
                }
                best
            }
        }
    }

    fn collect(&mut self, scope: Option<u32>) {
        let v = self.choose(scope);
        let plane = self.plane_of(v);
        self.blocks[v as usize].candidate = false;
        let list = &mut self.lists[plane as usize];
        let pos = list.iter().position(|&b| b == v).unwrap();
        list.swap_remove(pos);
        let live: Vec<u32> = self.blocks[v as usize]
            .slots
            .iter()
            .enumerate()
            .filter_map(|(slot, lpn)| {
                lpn.filter(|&l| l != PADDING && self.map[l as usize] == Some((v, slot as u32)))
            })
            .collect();
        self.gc_log.push((v, live.len() as u32));
        for &lpn in &live {
            let stream = self.stream_for(lpn, false);
            self.map[lpn as usize] = None;
            self.append(stream, plane, lpn);
        }
        self.moved_units += live.len() as u64;
        let blk = &mut self.blocks[v as usize];
        blk.slots.iter_mut().for_each(|s| *s = None);
        blk.valid = 0;
        blk.state = State::Free;
        self.erases += 1;
        self.free[plane as usize].push_back(v);
    }
}
