//! Key-value workloads over a key → page layout, with request markers for throughput and latency.
//!
//! * YCSB-like: a hash index (16 B per record, entries scattered by a seeded permutation of the keys)
//!   and the records back to back (`record_bytes` each). A request reads the key's index page, then
//!   reads (read) or writes (update) the record's pages. Keys: uniform, scrambled zipf (rank → key
//!   through a permutation, like YCSB's scrambled zipfian) or hotspot (the first `hot_data_fraction` of
//!   keys get `hot_op_fraction` of requests, as YCSB's hotspot generator).
//! * memcached ETC-like: items of 48 B header + key (GEV(30.8, 8.2, 0.079) bytes) + value (generalized
//!   Pareto(0, 214.5, 0.348) bytes, at most 1 MiB) in slab classes of chunk 96 B × 1.25^i, each class a
//!   contiguous region of 1 MiB slabs; a hash table of 8 B buckets. GET reads the bucket and the item,
//!   SET reads the bucket and writes the item. `hot_request_fraction` of requests go to the hot
//!   `hot_key_fraction` of keys (scattered by a permutation).
//!
//! Both start with a load phase writing every record (ETC: every item) once, then `ramp_up_requests`
//! requests that are not measured (no request markers), then the measured `requests`.

use nandstack_core::{Result, Rng};
use nandstack_workload::perm::Permutation;
use nandstack_workload::zipf::Zipf;

use super::config::{EtcConfig, EtcValueSizes, KeyDistribution, YcsbConfig};
use super::{layout, MapKind, MemRef, RefStream, Workload, OP_BEGIN, OP_END, OP_SLEEP};

/// Where a key lives: index/bucket page and the pages its item spans.
trait Layout: Send {
    fn index_page(&self, key: u64) -> Option<u32>;
    /// First and last page (inclusive) of the key's item.
    fn item_pages(&self, key: u64) -> (u32, u32);
    /// The index page and item pages of a request's key drawn as `rank` (the key before `gen`'s
    /// scattering permutation, if it has one).
    fn request_pages(&self, rank: u64, gen: &KeyGen) -> (Option<u32>, (u32, u32)) {
        let key = gen.key(rank);
        (self.index_page(key), self.item_pages(key))
    }
    /// Hint the CPU to bring what `request_pages(rank, …)` reads into cache (no effect on any result).
    fn prefetch_request(&self, _rank: u64) {}
}

/// First and last page (inclusive) of the byte range `start`, `len` (an empty item touches its first
/// byte's page).
fn span_pages(start: u64, len: u64) -> (u32, u32) {
    (
        (start / 4096) as u32,
        ((start + len.max(1) - 1) / 4096) as u32,
    )
}

/// Requests generated ahead of their references: the keys and GET/SET draws come from the stream's
/// RNG in the same order as one at a time, and looking up a batch of items before emitting any lets
/// the item-table reads (a cache miss each on a large key space) overlap.
const LOOKAHEAD: usize = 64;

/// A request generated ahead: its key's rank (before the key generator's permutation), whether it
/// writes, and its key's index page and item pages.
#[derive(Clone, Copy)]
struct Ahead {
    rank: u64,
    write: bool,
    index: Option<u32>,
    pages: (u32, u32),
}

enum KeyGen {
    Uniform,
    Zipf(Zipf, Permutation),
    Split {
        hot: u64,
        p: f64,
        perm: Option<Permutation>,
    },
}

impl KeyGen {
    /// The next key's rank: the draw before the scattering permutation (the key itself without one).
    fn next_rank(&self, rng: &mut Rng, n: u64) -> u64 {
        match self {
            KeyGen::Uniform => rng.below(n),
            KeyGen::Zipf(z, _) => z.sample(rng) - 1,
            KeyGen::Split { hot, p, .. } => {
                if *hot == 0 || *hot >= n {
                    rng.below(n)
                } else if rng.chance(*p) {
                    rng.below(*hot)
                } else {
                    hot + rng.below(n - hot)
                }
            }
        }
    }

    /// The key drawn as `rank`.
    fn key(&self, rank: u64) -> u64 {
        match self {
            KeyGen::Uniform | KeyGen::Split { perm: None, .. } => rank,
            KeyGen::Zipf(_, perm)
            | KeyGen::Split {
                perm: Some(perm), ..
            } => perm.apply(rank),
        }
    }
}

struct KvStream<L: Layout> {
    layout: L,
    keys: u64,
    load_next: u64,
    /// Ramp-up requests still to issue before the measured ones (no request markers: not counted).
    ramp: u64,
    remaining: u64,
    total: u64,
    read_ratio: f64,
    think_us: u32,
    gen: KeyGen,
    rng: Rng,
    /// Requests generated but not yet emitted (oldest first; counted in `ramp` / `remaining` until
    /// emitted).
    ahead: std::collections::VecDeque<Ahead>,
}

impl<L: Layout> KvStream<L> {
    fn push_item(&self, index: Option<u32>, write: bool, pages: (u32, u32), out: &mut Vec<MemRef>) {
        if let Some(p) = index {
            out.push(MemRef::access(p, write && self.load_next < self.keys));
        }
        for p in pages.0..=pages.1 {
            out.push(MemRef::access(p, write));
        }
    }

    /// Generate up to [`LOOKAHEAD`] of the requests not yet generated (the queue is empty); false when
    /// none is left.
    fn generate(&mut self) -> bool {
        debug_assert!(self.ahead.is_empty());
        let n = (self.ramp + self.remaining).min(LOOKAHEAD as u64);
        // Draw every request first (prefetching its item's entry: a random line of a table of MiBs
        // for the cold keys), then look the items up: the lookups no longer wait one after another.
        for _ in 0..n {
            let rank = self.gen.next_rank(&mut self.rng, self.keys);
            let read = self.rng.chance(self.read_ratio);
            self.layout.prefetch_request(rank);
            self.ahead.push_back(Ahead {
                rank,
                write: !read,
                index: None,
                pages: (0, 0),
            });
        }
        for a in self.ahead.iter_mut() {
            (a.index, a.pages) = self.layout.request_pages(a.rank, &self.gen);
        }
        n > 0
    }
}

impl<L: Layout> RefStream for KvStream<L> {
    fn fill(&mut self, out: &mut Vec<MemRef>, max: usize) -> Result<bool> {
        let start = out.len();
        while self.load_next < self.keys && out.len() - start < max {
            let key = self.load_next;
            self.push_item(
                self.layout.index_page(key),
                true,
                self.layout.item_pages(key),
                out,
            );
            self.load_next += 1;
        }
        while self.load_next >= self.keys && out.len() - start < max {
            if self.ahead.is_empty() && !self.generate() {
                break;
            }
            let r = self.ahead.pop_front().expect("a request generated ahead");
            let measured = self.ramp == 0;
            if measured {
                out.push(MemRef::marker(OP_BEGIN, 0));
            }
            self.push_item(r.index, r.write, r.pages, out);
            if measured {
                out.push(MemRef::marker(OP_END, 0));
            }
            if self.think_us > 0 {
                out.push(MemRef::marker(OP_SLEEP, self.think_us));
            }
            if measured {
                self.remaining -= 1;
            } else {
                self.ramp -= 1;
            }
        }
        Ok(self.load_next < self.keys || self.ramp + self.remaining > 0)
    }
    fn len_hint(&self) -> Option<u64> {
        Some(self.total)
    }
}

struct YcsbLayout {
    index: Option<(u32, Permutation)>,
    data_start: u64,
    record_bytes: u64,
}

impl Layout for YcsbLayout {
    fn index_page(&self, key: u64) -> Option<u32> {
        self.index
            .as_ref()
            .map(|(start, perm)| start + (perm.apply(key) * 16 / 4096) as u32)
    }
    fn item_pages(&self, key: u64) -> (u32, u32) {
        span_pages(self.data_start + key * self.record_bytes, self.record_bytes)
    }
}

pub fn build_ycsb(c: &YcsbConfig, seed: u64) -> Workload {
    let index_pages = if c.index {
        (c.records * 16).div_ceil(4096) as u32
    } else {
        0
    };
    let data_pages = (c.records * c.record_bytes as u64).div_ceil(4096) as u32;
    let mut maps = Vec::new();
    if c.index {
        maps.push((index_pages, MapKind::Anon));
    }
    maps.push((data_pages, MapKind::Anon));
    let (pages, mappings) = layout(&maps);
    let data_start = mappings.last().unwrap().start as u64 * 4096;
    let gen = match c.distribution {
        KeyDistribution::Uniform => KeyGen::Uniform,
        KeyDistribution::Zipf => KeyGen::Zipf(
            Zipf::new(c.records, c.zipf_theta),
            Permutation::new(c.records, seed ^ 0x7a69_7066),
        ),
        KeyDistribution::Hotspot => KeyGen::Split {
            hot: (c.records as f64 * c.hot_data_fraction) as u64,
            p: c.hot_op_fraction,
            perm: None,
        },
    };
    let load = if c.load { c.records } else { 0 };
    let stream = KvStream {
        layout: YcsbLayout {
            index: c
                .index
                .then(|| (0u32, Permutation::new(c.records, seed ^ 0x6964_7820))),
            data_start,
            record_bytes: c.record_bytes as u64,
        },
        keys: c.records,
        load_next: c.records - load,
        ramp: c.ramp_up_requests,
        remaining: c.requests,
        total: load + c.ramp_up_requests + c.requests,
        read_ratio: c.read_ratio,
        think_us: c.think_us,
        gen,
        rng: Rng::derive(seed, 0x7963_7362),
        ahead: Default::default(),
    };
    let describe = format!(
        "ycsb {:?} {} records × {} B, read ratio {}",
        c.distribution, c.records, c.record_bytes, c.read_ratio
    )
    .to_lowercase();
    kv_workload((pages, mappings), stream, describe)
}

/// A key-value server's workload: one request stream over `layout`'s anonymous mappings.
fn kv_workload<L: Layout + 'static>(
    (pages, mappings): (u32, Vec<super::Mapping>),
    stream: KvStream<L>,
    describe: String,
) -> Workload {
    Workload {
        pages,
        mappings,
        files: Vec::new(),
        threads: vec![Box::new(stream)],
        kv: true,
        touches_all: true,
        describe,
    }
}

struct EtcLayout {
    table: Permutation,
    /// Per key: its item's first and last page (the load phase's order).
    pages: Vec<(u32, u32)>,
    /// Per rank of the hot/cold split (before the permutation that scatters the hot keys): the key's
    /// bucket page and item pages. A request's lookup is one load, with no permutation to compute
    /// (two per request otherwise), and the hot keys' entries, which take most requests, stay
    /// together in cache instead of one cache line each across the table.
    by_rank: Vec<RankEntry>,
}

/// [`EtcLayout::by_rank`]'s entry: bucket page, first and last item page.
#[derive(Clone, Copy)]
struct RankEntry {
    bucket: u32,
    first: u32,
    last: u32,
}

impl Layout for EtcLayout {
    fn index_page(&self, key: u64) -> Option<u32> {
        Some((self.table.apply(key) * 8 / 4096) as u32)
    }
    fn item_pages(&self, key: u64) -> (u32, u32) {
        self.pages[key as usize]
    }
    fn request_pages(&self, rank: u64, gen: &KeyGen) -> (Option<u32>, (u32, u32)) {
        let e = self.by_rank[rank as usize];
        debug_assert!({
            let key = gen.key(rank);
            self.index_page(key) == Some(e.bucket) && self.item_pages(key) == (e.first, e.last)
        });
        (Some(e.bucket), (e.first, e.last))
    }
    fn prefetch_request(&self, rank: u64) {
        nandstack_core::hint::prefetch(&self.by_rank, rank as usize);
    }
}

/// Slab chunk sizes: 96 B growing by 1.25 (8-byte aligned) up to 1 MiB.
fn slab_classes() -> Vec<u64> {
    let mut v = Vec::new();
    let mut s = 96.0f64;
    while (s as u64) < (1 << 20) {
        let c = (s as u64).div_ceil(8) * 8;
        if v.last() != Some(&c) {
            v.push(c);
        }
        s *= 1.25;
    }
    v.push(1 << 20);
    v
}

/// mutilate's `fb_value` head: (probability, value bytes), checked in order before the tail
/// (`Generator.cc` `createFacebookValue`; together 0.44155).
const FB_VALUE_HEAD: [(f64, f64); 15] = [
    (0.00536, 0.0),
    (0.00047, 1.0),
    (0.17820, 2.0),
    (0.09239, 3.0),
    (0.00018, 4.0),
    (0.02740, 5.0),
    (0.00065, 6.0),
    (0.00606, 7.0),
    (0.00023, 8.0),
    (0.00837, 9.0),
    (0.00837, 10.0),
    (0.08989, 11.0),
    (0.00092, 12.0),
    (0.00326, 13.0),
    (0.01980, 14.0),
];

/// A value size, bytes: generalized Pareto(`loc`, 214.476, 0.348238) by inversion.
fn gpareto_value(rng: &mut Rng, loc: f64) -> f64 {
    let u = rng.unit_f64().max(1e-12);
    loc + 214.476 / 0.348238 * (u.powf(-0.348238) - 1.0)
}

/// A value size, bytes, from `sizes`.
fn value_size(rng: &mut Rng, sizes: EtcValueSizes) -> f64 {
    match sizes {
        EtcValueSizes::Gpareto => gpareto_value(rng, 0.0),
        EtcValueSizes::Mutilate => {
            let u = rng.unit_f64();
            let mut sum = 0.0;
            for (p, v) in FB_VALUE_HEAD {
                sum += p;
                if u < sum {
                    return v;
                }
            }
            gpareto_value(rng, 15.0)
        }
    }
}

pub fn build_etc(c: &EtcConfig, seed: u64) -> Workload {
    let mut rng = Rng::derive(seed, 0x6574_6373);
    let classes = slab_classes();
    let n = c.keys as usize;
    let mut class_of = Vec::with_capacity(n);
    let mut counts = vec![0u64; classes.len()];
    for _ in 0..n {
        let u = rng.unit_f64().max(1e-12);
        let key = 30.7984 + 8.20449 / 0.078688 * ((-u.ln()).powf(-0.078688) - 1.0);
        let value = value_size(&mut rng, c.value_sizes);
        let item = 48.0 + key.clamp(1.0, 250.0) + value.clamp(1.0, (1 << 20) as f64 - 400.0);
        let ci = classes
            .partition_point(|&cs| (cs as f64) < item)
            .min(classes.len() - 1);
        class_of.push(ci as u8);
        counts[ci] += 1;
    }
    let table_pages = (c.keys * 8).div_ceil(4096);
    // Class regions after the hash table, each rounded up to whole 1 MiB slabs.
    let mut base = vec![0u64; classes.len()];
    let mut at = table_pages.div_ceil(256) * 256 * 4096;
    for (i, &cnt) in counts.iter().enumerate() {
        base[i] = at;
        at += (cnt * classes[i]).div_ceil(1 << 20) * (1 << 20);
    }
    let mut next = vec![0u64; classes.len()];
    let mut item_pages = Vec::with_capacity(n);
    for &ci in &class_of {
        let ci = ci as usize;
        item_pages.push(span_pages(base[ci] + next[ci] * classes[ci], classes[ci]));
        next[ci] += 1;
    }
    let total_pages = (at / 4096) as u32;
    let (pages, mappings) = layout(&[(total_pages.max(1), MapKind::Anon)]);
    let scatter = Permutation::new(c.keys, seed ^ 0x686f_7420);
    let mut layout = EtcLayout {
        table: Permutation::new(c.keys, seed ^ 0x7462_6c65),
        pages: item_pages,
        by_rank: Vec::new(),
    };
    layout.by_rank = (0..c.keys)
        .map(|rank| {
            let key = scatter.apply(rank);
            let (first, last) = layout.item_pages(key);
            RankEntry {
                bucket: layout.index_page(key).expect("every ETC key has a bucket"),
                first,
                last,
            }
        })
        .collect();
    let stream = KvStream {
        layout,
        keys: c.keys,
        load_next: 0,
        ramp: c.ramp_up_requests,
        remaining: c.requests,
        total: c.keys + c.ramp_up_requests + c.requests,
        read_ratio: c.get_ratio,
        think_us: c.think_us,
        gen: KeyGen::Split {
            hot: (c.keys as f64 * c.hot_key_fraction) as u64,
            p: c.hot_request_fraction,
            perm: Some(scatter),
        },
        rng: Rng::derive(seed, 0x6574_6372),
        ahead: Default::default(),
    };
    let describe = format!(
        "memcached ETC {} keys, {:.0}% of requests on {:.0}% of keys, GET ratio {}",
        c.keys,
        c.hot_request_fraction * 100.0,
        c.hot_key_fraction * 100.0,
        c.get_ratio
    );
    kv_workload((pages, mappings), stream, describe)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// mutilate's `fb_value`: the head's masses (0.17820 at 2 B, 0.44155 below 15 B in all) and the
    /// tail's median 15 + 214.476 (2^0.348238 − 1) / 0.348238 ≈ 183.2 B.
    #[test]
    fn mutilate_values_have_the_fb_value_head_and_tail() {
        let mut rng = Rng::derive(9, 1);
        let n = 200_000;
        let v: Vec<f64> = (0..n)
            .map(|_| value_size(&mut rng, EtcValueSizes::Mutilate))
            .collect();
        let share = |f: &dyn Fn(f64) -> bool| v.iter().filter(|&&x| f(x)).count() as f64 / n as f64;
        assert!((share(&|x| x < 15.0) - 0.44155).abs() < 0.005);
        assert!((share(&|x| x == 2.0) - 0.17820).abs() < 0.004);
        assert_eq!(share(&|x| x < 15.0 && x.fract() != 0.0), 0.0);
        let mut tail: Vec<f64> = v.into_iter().filter(|&x| x >= 15.0).collect();
        tail.sort_by(f64::total_cmp);
        let median = tail[tail.len() / 2];
        assert!((median - 183.2).abs() < 4.0, "tail median {median}");
        // The default keeps location 0: its median is 214.476 (2^0.348238 − 1) / 0.348238 ≈ 168.2 B.
        let mut g: Vec<f64> = (0..n)
            .map(|_| value_size(&mut rng, EtcValueSizes::Gpareto))
            .collect();
        g.sort_by(f64::total_cmp);
        assert!(
            (g[n / 2] - 168.2).abs() < 4.0,
            "gpareto median {}",
            g[n / 2]
        );
    }

    #[test]
    fn ycsb_requests_touch_index_then_record_pages() {
        let c = YcsbConfig {
            records: 1000,
            record_bytes: 1024,
            distribution: KeyDistribution::Hotspot,
            zipf_theta: 0.99,
            hot_data_fraction: 0.2,
            hot_op_fraction: 0.8,
            read_ratio: 0.5,
            requests: 2000,
            index: true,
            load: true,
            think_us: 0,
            ramp_up_requests: 0,
        };
        let mut w = build_ycsb(&c, 1);
        let mut v = Vec::new();
        while w.threads[0].fill(&mut v, 4096).unwrap() {}
        // Load: 1000 × (index + 1 record page) writes.
        assert!(v[..2000].iter().all(|r| r.op == super::super::OP_WRITE));
        let begins = v.iter().filter(|r| r.op == OP_BEGIN).count();
        assert_eq!(begins, 2000);
        let data_start = w.mappings[1].start;
        let hot_pages = data_start + 200 * 1024 / 4096;
        let reqs: Vec<&MemRef> = v[2000..]
            .iter()
            .filter(|r| r.op <= 1 && r.page >= data_start)
            .collect();
        let hot = reqs.iter().filter(|r| r.page < hot_pages).count();
        assert!((hot as f64 / reqs.len() as f64 - 0.8).abs() < 0.05);
    }

    /// Ramp-up requests are the same requests as measured ones (the same references in the same
    /// order), only without request markers: 500 ramp-up + 2000 measured make the references of 2500
    /// measured requests, with 2000 markers pairs, all after the ramp-up's references.
    #[test]
    fn ramp_up_requests_are_unmarked_leading_requests() {
        let refs = |ramp: u64, requests: u64| {
            let c = EtcConfig {
                keys: 3000,
                requests,
                get_ratio: 0.967,
                hot_key_fraction: 0.1,
                hot_request_fraction: 0.9,
                think_us: 0,
                value_sizes: EtcValueSizes::Gpareto,
                ramp_up_requests: ramp,
            };
            let mut w = build_etc(&c, 5);
            let mut v = Vec::new();
            while w.threads[0].fill(&mut v, 4096).unwrap() {}
            v
        };
        let (ramped, plain) = (refs(500, 2000), refs(0, 2500));
        let access = |v: &[MemRef]| -> Vec<(u8, u32)> {
            v.iter()
                .filter(|r| r.op <= 1)
                .map(|r| (r.op, r.page))
                .collect()
        };
        assert_eq!(access(&ramped), access(&plain));
        let begins = |v: &[MemRef]| v.iter().filter(|r| r.op == OP_BEGIN).count();
        assert_eq!((begins(&ramped), begins(&plain)), (2000, 2500));
        // The first measured request starts where plain's 501st does.
        let nth_begin = |v: &[MemRef], n: usize| {
            let i = v
                .iter()
                .enumerate()
                .filter(|(_, r)| r.op == OP_BEGIN)
                .nth(n)
                .unwrap()
                .0;
            v[..i].iter().filter(|r| r.op <= 1).count()
        };
        assert_eq!(nth_begin(&ramped, 0), nth_begin(&plain, 500));
    }

    #[test]
    fn etc_items_fit_their_classes_and_do_not_overlap() {
        let c = EtcConfig {
            keys: 5000,
            requests: 100,
            get_ratio: 0.967,
            hot_key_fraction: 0.1,
            hot_request_fraction: 0.9,
            think_us: 0,
            value_sizes: EtcValueSizes::Gpareto,
            ramp_up_requests: 0,
        };
        let w = build_etc(&c, 3);
        assert!(w.pages > 0);
        assert!(slab_classes().windows(2).all(|p| p[0] < p[1]));
    }
}

#[cfg(test)]
#[path = "kv_twin.rs"]
mod twin;
