//! Tests of the lottery (CA) and of the code's lottery against a slow, obvious twin that shares no code
//! with either: flat vectors of entries and pages, every category, weight, list average and ticket count
//! recomputed by full scans — with the paper's formulas in floating point, or the code's lists, weights,
//! ticket share and age rule written out — lists as plain vectors (index 0 = head). Twin and policy draw
//! from the same seeded generator, so on the same event stream they must pick the same victims and keep
//! the same lists. Also: the lottery's draw frequencies match the tickets.

use nandstack_core::Rng;

use super::lottery::{Lottery, CATEGORIES};
use super::lottery_code::LotteryCode;
use super::pool_pages::PoolPages;
use super::{PageKind, Pick, Placement, Replacement};

/// Which lottery the twin plays.
#[derive(Clone, Copy)]
enum Rules {
    /// The paper's 18 categories (`lottery`).
    Paper,
    /// The authors' code's 19 lists (`lottery_code`) with its age threshold.
    Code { age: u64 },
}

#[derive(Clone, Copy, Debug)]
struct TEntry {
    id: u32,
    live: bool,
    container: Option<u64>,
    file: bool,
    len: u32,
    stamp: u64,
    /// Order of joining its current page.
    joined: u64,
}

/// The twin: one cgroup, as in the paper.
struct Twin {
    entries: Vec<TEntry>,
    /// Per category, pages (containers) head first.
    lists: Vec<Vec<u64>>,
    pending: Vec<u32>,
    clock: u64,
    joins: u64,
    rng: Rng,
    rules: Rules,
}

impl Twin {
    fn with(seed: u64, rules: Rules) -> Twin {
        let (lists, mix) = match rules {
            Rules::Paper => (18, 0x006c_6f74_7465_7279),
            Rules::Code { .. } => (19, 0x636f_6465_6c6f_7474),
        };
        Twin {
            entries: Vec::new(),
            lists: vec![Vec::new(); lists],
            pending: Vec::new(),
            clock: 0,
            joins: 0,
            rng: Rng::new(seed ^ mix),
            rules,
        }
    }

    /// The code's list: one object by files and free chunks in eighths (< 8, < 16, < 24, < 32), two
    /// by files and free chunks in sixteenths (< 16, < 32), three by files; 32 free chunks or more
    /// with fewer than three objects: the last list. A headless page has no free chunks.
    fn code_list(&self, c: u64) -> usize {
        let m = self.members(c);
        let n = m.len().min(3);
        let f = m.iter().filter(|e| e.file).count().min(n);
        let headless = m.iter().any(|e| e.len > 3968);
        let used: i64 = m.iter().map(|e| e.len.div_ceil(64) as i64).sum();
        let free = if headless { 0 } else { (63 - used).max(0) };
        if n < 3 && free >= 32 {
            return 18;
        }
        let table: &[(usize, usize, i64, i64, usize)] = &[
            // (objects, files, free from, free to, list)
            (1, 0, 0, 7, 0),
            (1, 0, 8, 15, 1),
            (1, 0, 16, 23, 2),
            (1, 0, 24, 31, 3),
            (1, 1, 0, 7, 4),
            (1, 1, 8, 15, 5),
            (1, 1, 16, 23, 6),
            (1, 1, 24, 31, 7),
            (2, 0, 0, 15, 8),
            (2, 0, 16, 31, 9),
            (2, 1, 0, 15, 10),
            (2, 1, 16, 31, 11),
            (2, 2, 0, 15, 12),
            (2, 2, 16, 31, 13),
            (3, 0, 0, 63, 14),
            (3, 1, 0, 63, 15),
            (3, 2, 0, 63, 16),
            (3, 3, 0, 63, 17),
        ];
        table
            .iter()
            .find(|&&(tn, tf, lo, hi, _)| tn == n && tf == f && (lo..=hi).contains(&free))
            .map(|t| t.4)
            .expect("every page has a list")
    }

    fn code_weight(list: usize) -> u64 {
        match list {
            0 => 1751,
            1 => 1501,
            2 => 1250,
            3 => 1000,
            4 => 7018,
            5 => 6015,
            6 => 5000,
            7 => 4000,
            8 => 500,
            9 => 250,
            10 => 800,
            11 => 400,
            12 => 2000,
            13 => 1000,
            14 => 222,
            15 => 296,
            16 => 444,
            17 => 889,
            _ => 1,
        }
    }

    fn members(&self, c: u64) -> Vec<TEntry> {
        let mut m: Vec<TEntry> = self
            .entries
            .iter()
            .filter(|e| e.live && e.container == Some(c))
            .copied()
            .collect();
        m.sort_by_key(|e| e.joined);
        m
    }

    /// The paper's category: objects, file objects, free space below or above a quarter.
    fn category(&self, c: u64) -> usize {
        let m = self.members(c);
        let n = m.len().min(3);
        let f = m.iter().filter(|e| e.file).count().min(n);
        let headless = m.iter().any(|e| e.len > 3968);
        let used: u32 = m.iter().map(|e| e.len.div_ceil(64)).sum();
        let free_frac = if headless {
            0.0
        } else {
            (63.0 - used as f64).max(0.0) / 63.0
        };
        let pairs: Vec<(usize, usize)> =
            (1..=3).flat_map(|n| (0..=n).map(move |f| (n, f))).collect();
        let idx = pairs.iter().position(|&p| p == (n, f)).unwrap();
        idx * 2 + if free_frac >= 0.25 { 1 } else { 0 }
    }

    /// W = 1 / (cost / ratio) × 10,000, ratio = (1 − lowest free fraction) / n, costs 1 and 4.
    fn weight(cat: usize) -> u64 {
        let pairs: Vec<(usize, usize)> =
            (1..=3).flat_map(|n| (0..=n).map(move |f| (n, f))).collect();
        let (n, f) = pairs[cat / 2];
        let ratio = if cat % 2 == 1 { 0.75 } else { 1.0 } / n as f64;
        let cost = f as f64 + 4.0 * (n - f) as f64;
        ((1.0 / (cost / ratio)) * 10_000.0 + 1e-9).floor() as u64
    }

    fn stamp_sum(&self, c: u64) -> u64 {
        self.members(c).iter().map(|e| e.stamp).sum()
    }

    fn unlist(&mut self, c: u64) {
        for l in &mut self.lists {
            l.retain(|&x| x != c);
        }
    }

    /// The live entry `id` leaves its container (whose category is recomputed); its index.
    fn leave_container(&mut self, id: u32) -> usize {
        let i = self
            .entries
            .iter()
            .position(|x| x.id == id && x.live)
            .unwrap();
        if let Some(o) = self.entries[i].container.take() {
            self.refile(o, false);
        }
        i
    }

    /// Re-file page `c` (if it still holds anything) by the head/tail rule (`grew`: an entry stored
    /// for the first time joined it).
    fn refile(&mut self, c: u64, grew: bool) {
        self.unlist(c);
        if self.members(c).is_empty() {
            return;
        }
        let (cat, head) = match self.rules {
            Rules::Paper => {
                let cat = self.category(c);
                let others = self.lists[cat].clone();
                let sum = self.stamp_sum(c) as f64;
                let head = others.is_empty()
                    || sum
                        > others
                            .iter()
                            .map(|&o| self.stamp_sum(o) as f64)
                            .sum::<f64>()
                            / others.len() as f64;
                (cat, head)
            }
            Rules::Code { age } => {
                // Mean age of the members, in entries stored since: clock − Σ stamps ÷ n < age.
                let m = self.members(c);
                let n = m.len() as i128;
                let ages: i128 = m.iter().map(|e| self.clock as i128 - e.stamp as i128).sum();
                (self.code_list(c), grew || ages < age as i128 * n)
            }
        };
        if head {
            self.lists[cat].insert(0, c);
        } else {
            self.lists[cat].push(c);
        }
    }

    fn stored(&mut self, id: u32) {
        let e = TEntry {
            id,
            live: true,
            container: None,
            file: false,
            len: 0,
            stamp: self.clock,
            joined: 0,
        };
        self.clock += 1;
        self.entries.retain(|x| x.id != id);
        self.entries.push(e);
    }

    fn placed(&mut self, id: u32, p: Placement) {
        let fresh = self
            .entries
            .iter()
            .any(|x| x.id == id && x.live && x.container.is_none());
        let i = self.leave_container(id);
        self.joins += 1;
        let e = &mut self.entries[i];
        e.container = Some(p.container);
        e.file = p.kind == PageKind::File;
        e.len = p.len_bytes;
        e.joined = self.joins;
        self.refile(p.container, fresh);
    }

    fn removed(&mut self, id: u32) {
        let i = self.leave_container(id);
        self.entries[i].live = false;
        self.pending.retain(|&x| x != id);
    }

    fn pick(&mut self) -> Pick {
        if !self.pending.is_empty() {
            return Pick::Writeback(self.pending.remove(0));
        }
        let pages: u64 = self.lists.iter().map(|l| l.len() as u64).sum();
        let tickets: Vec<u64> = (0..self.lists.len())
            .map(|c| match self.rules {
                Rules::Paper => self.lists[c].len() as u64 * Twin::weight(c),
                Rules::Code { .. } => {
                    self.lists[c].len() as u64 * 1000 / pages.max(1) * Twin::code_weight(c)
                }
            })
            .collect();
        let total: u64 = tickets.iter().sum();
        if total == 0 {
            // No page: nothing to write back; pages whose tickets all rounded to 0: a failed step.
            return if pages == 0 {
                Pick::Empty
            } else {
                Pick::Rotate
            };
        }
        let mut r = self.rng.below(total);
        let mut cat = 0;
        while r >= tickets[cat] {
            r -= tickets[cat];
            cat += 1;
        }
        let victim = *self.lists[cat].last().unwrap();
        self.lists[cat].retain(|&x| x != victim);
        self.lists[cat].insert(0, victim);
        self.pending = self.members(victim).iter().map(|e| e.id).collect();
        Pick::Writeback(self.pending.remove(0))
    }
}

/// A page kind drawn at random: file with probability `p_file`.
fn file_with(rng: &mut Rng, p_file: f64) -> PageKind {
    if rng.chance(p_file) {
        PageKind::File
    } else {
        PageKind::Anon
    }
}

/// A policy's lists (cgroup 0) as containers, head first, for comparison.
fn containers(pages: &PoolPages, lists: usize) -> Vec<Vec<u64>> {
    (0..lists)
        .map(|c| {
            pages
                .list(0, c)
                .iter()
                .map(|&g| pages.group(g).container)
                .collect()
        })
        .collect()
}

fn lists_of(l: &Lottery) -> Vec<Vec<u64>> {
    containers(l.pages(), CATEGORIES)
}

fn code_lists_of(l: &LotteryCode) -> Vec<Vec<u64>> {
    containers(l.pages(), super::lottery_code::LISTS)
}

#[test]
fn lottery_agrees_with_its_slow_twin() {
    agree_with_twin(
        |seed| Lottery::new(10_000, 40_000, seed),
        Rules::Paper,
        lists_of,
    );
}

#[test]
fn the_code_s_lottery_agrees_with_its_slow_twin() {
    // A threshold the event streams cross both ways (3,000 events, about half of them stores).
    for age in [40, 300] {
        agree_with_twin(
            |seed| LotteryCode::new(age, seed),
            Rules::Code { age },
            code_lists_of,
        );
    }
}

/// Random stores, frees, compaction moves and picks on `make(seed)` and the twin with `rules`, for
/// twelve seeds: the same victims and the same lists after every event.
fn agree_with_twin<T: Replacement>(
    make: impl Fn(u64) -> T,
    rules: Rules,
    lists_of: impl Fn(&T) -> Vec<Vec<u64>>,
) {
    for seed in 1..=12u64 {
        let mut fast = make(seed);
        let mut twin = Twin::with(seed, rules);
        let mut rng = Rng::new(seed * 7919);
        // Containers with (objects, used chunks); entries live: (id, container, len).
        let mut live: Vec<(u32, u64, u32)> = Vec::new();
        let mut next_id = 0u32;
        let mut next_container = 0u64;
        for step in 0..3000 {
            match rng.below(10) {
                0..=4 => {
                    let len = match rng.below(10) {
                        0 => 3969 + rng.below(127) as u32,
                        1..=4 => 64 + rng.below(1000) as u32,
                        _ => 1000 + rng.below(2900) as u32,
                    };
                    // A container with room (≤ 3 objects, chunks fit), else a new one.
                    let fits = |c: u64| {
                        let objs: Vec<&(u32, u64, u32)> =
                            live.iter().filter(|x| x.1 == c).collect();
                        objs.len() < 3
                            && len <= 3968
                            && objs.iter().all(|x| x.2 <= 3968)
                            && objs.iter().map(|x| x.2.div_ceil(64)).sum::<u32>() + len.div_ceil(64)
                                <= 63
                    };
                    let cands: Vec<u64> = (0..next_container).filter(|&c| fits(c)).collect();
                    let c = if !cands.is_empty() && rng.chance(0.7) {
                        cands[rng.below(cands.len() as u64) as usize]
                    } else {
                        next_container += 1;
                        next_container - 1
                    };
                    let p = Placement {
                        container: c,
                        len_bytes: len,
                        kind: file_with(&mut rng, 0.6),
                    };
                    let id = next_id;
                    next_id += 1;
                    fast.stored(id, 0);
                    fast.placed(id, p);
                    twin.stored(id);
                    twin.placed(id, p);
                    live.push((id, c, len));
                }
                5 | 6 => {
                    if !live.is_empty() {
                        let (id, _, _) = live.swap_remove(rng.below(live.len() as u64) as usize);
                        fast.removed(id);
                        twin.removed(id);
                    }
                }
                7 => {
                    // A compaction move: a lone object goes to another page with room.
                    let lone: Vec<usize> = (0..live.len())
                        .filter(|&i| {
                            live.iter().filter(|x| x.1 == live[i].1).count() == 1
                                && live[i].2 <= 1500
                        })
                        .collect();
                    if let Some(&i) = lone.first() {
                        let (id, from, len) = live[i];
                        let dst = (0..next_container).find(|&c| {
                            c != from
                                && (1..3).contains(&live.iter().filter(|x| x.1 == c).count())
                                && live.iter().filter(|x| x.1 == c).all(|x| x.2 <= 3968)
                                && live
                                    .iter()
                                    .filter(|x| x.1 == c)
                                    .map(|x| x.2.div_ceil(64))
                                    .sum::<u32>()
                                    + len.div_ceil(64)
                                    <= 63
                        });
                        if let Some(dst) = dst {
                            let p = Placement {
                                container: dst,
                                len_bytes: len,
                                kind: file_with(&mut rng, 0.5),
                            };
                            // The kind does not change in a move: keep the twin's and the lottery's.
                            let kind =
                                if twin.entries.iter().any(|e| e.id == id && e.live && e.file) {
                                    PageKind::File
                                } else {
                                    PageKind::Anon
                                };
                            let p = Placement { kind, ..p };
                            fast.placed(id, p);
                            twin.placed(id, p);
                            live[i].1 = dst;
                        }
                    }
                }
                _ => {
                    let (a, b) = (fast.pick(0), twin.pick());
                    assert_eq!(a, b, "seed {seed} step {step}: pick");
                    if let Pick::Writeback(id) = a {
                        if rng.chance(0.8) {
                            fast.removed(id);
                            twin.removed(id);
                            live.retain(|x| x.0 != id);
                        }
                    }
                }
            }
            assert_eq!(
                lists_of(&fast),
                twin.lists,
                "seed {seed} step {step}: lists"
            );
            assert_eq!(fast.count(0), live.len() as u64);
            fast.check().unwrap();
        }
    }
}

#[test]
fn lottery_frequencies_match_the_tickets() {
    // Fixed pages: 40 one-object anonymous full pages, 20 one-object roomy file pages, 30 pages of
    // three full anonymous objects, 10 pages of two roomy objects (one file, one anonymous).
    let mut l = Lottery::new(10_000, 40_000, 99);
    let mut id = 0u32;
    let mut container = 0u64;
    let mut put = |l: &mut Lottery, objs: &[(u32, PageKind)]| {
        for &(len, kind) in objs {
            l.stored(id, 0);
            l.placed(
                id,
                Placement {
                    container,
                    len_bytes: len,
                    kind,
                },
            );
            id += 1;
        }
        container += 1;
    };
    for _ in 0..40 {
        put(&mut l, &[(3900, PageKind::Anon)]);
    }
    for _ in 0..20 {
        put(&mut l, &[(1000, PageKind::File)]);
    }
    for _ in 0..30 {
        put(
            &mut l,
            &[
                (1300, PageKind::Anon),
                (1300, PageKind::Anon),
                (1300, PageKind::Anon),
            ],
        );
    }
    for _ in 0..10 {
        put(&mut l, &[(1000, PageKind::File), (1000, PageKind::Anon)]);
    }
    let tickets = l.tickets(0);
    let total: u64 = tickets.iter().sum();
    // 40 × 2,500 + 20 × 7,500 + 30 × 277 + 10 × 750.
    assert_eq!(total, 100_000 + 150_000 + 8_310 + 7_500);
    let n = 200_000u64;
    let mut hits = [0u64; CATEGORIES];
    for _ in 0..n {
        hits[l.draw(0).unwrap()] += 1;
    }
    for c in 0..CATEGORIES {
        let p = tickets[c] as f64 / total as f64;
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        let expect = n as f64 * p;
        // Within 5 standard deviations (and none drawn where there are no tickets).
        assert!(
            (hits[c] as f64 - expect).abs() <= 5.0 * sd + 1e-9,
            "category {c}: {} draws, {expect:.0} expected (sd {sd:.1})",
            hits[c]
        );
    }
}
