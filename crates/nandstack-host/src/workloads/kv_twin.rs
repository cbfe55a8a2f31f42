//! The slow, obvious twin of the request streams: items' byte ranges in plain arrays, each request's
//! key and GET/SET drawn and emitted at once (no lookahead, no page table), the references cut into
//! fills by the same rule (a fill takes whole items and requests until it holds `max` references).
//! Shares only the random sources (RNG, permutations, Zipf, value sizes, slab classes) with the stream.

use super::*;
use crate::workloads::{OP_READ, OP_WRITE};

fn access(page: u64, write: bool) -> MemRef {
    MemRef {
        page: page as u32,
        op: if write { OP_WRITE } else { OP_READ },
    }
}

/// Pages `[start, start + len)` touches (at least its first byte's).
fn span(start: u64, len: u64, write: bool, out: &mut Vec<MemRef>) {
    let last = if len == 0 { start } else { start + len - 1 };
    let mut p = start / 4096;
    while p <= last / 4096 {
        out.push(access(p, write));
        p += 1;
    }
}

/// The requests after the load: `(key, write)` in order, `draw` giving each one.
fn requests(
    n: u64,
    ramp: u64,
    think_us: u32,
    draw: &mut dyn FnMut() -> (u64, bool),
    item: &dyn Fn(u64, bool, &mut Vec<MemRef>),
    groups: &mut Vec<Vec<MemRef>>,
) {
    for i in 0..ramp + n {
        let (key, write) = draw();
        let mut g = Vec::new();
        if i >= ramp {
            g.push(MemRef::marker(OP_BEGIN, 0));
        }
        item(key, write, &mut g);
        if i >= ramp {
            g.push(MemRef::marker(OP_END, 0));
        }
        if think_us > 0 {
            g.push(MemRef::marker(OP_SLEEP, think_us));
        }
        groups.push(g);
    }
}

/// memcached ETC's references, one group per loaded item or request.
pub fn etc(c: &EtcConfig, seed: u64) -> Vec<Vec<MemRef>> {
    let mut rng = Rng::derive(seed, 0x6574_6373);
    let classes = slab_classes();
    let mut class_of = Vec::new();
    let mut counts = vec![0u64; classes.len()];
    for _ in 0..c.keys {
        let u = rng.unit_f64().max(1e-12);
        let key = 30.7984 + 8.20449 / 0.078688 * ((-u.ln()).powf(-0.078688) - 1.0);
        let value = value_size(&mut rng, c.value_sizes);
        let item = 48.0 + key.clamp(1.0, 250.0) + value.clamp(1.0, (1 << 20) as f64 - 400.0);
        let mut ci = 0;
        while ci + 1 < classes.len() && (classes[ci] as f64) < item {
            ci += 1;
        }
        class_of.push(ci);
        counts[ci] += 1;
    }
    let table_bytes = c.keys * 8;
    let mut at = table_bytes.div_ceil(1 << 20) * (1 << 20);
    let mut base = Vec::new();
    for (i, &cnt) in counts.iter().enumerate() {
        base.push(at);
        at += (cnt * classes[i]).div_ceil(1 << 20) * (1 << 20);
    }
    let mut used = vec![0u64; classes.len()];
    let (mut offset, mut size) = (Vec::new(), Vec::new());
    for &ci in &class_of {
        offset.push(base[ci] + used[ci] * classes[ci]);
        size.push(classes[ci]);
        used[ci] += 1;
    }
    let table = Permutation::new(c.keys, seed ^ 0x7462_6c65);
    let item = |key: u64, write: bool, load: bool, out: &mut Vec<MemRef>| {
        out.push(access(table.apply(key) * 8 / 4096, write && load));
        span(offset[key as usize], size[key as usize], write, out);
    };
    let mut groups = Vec::new();
    for key in 0..c.keys {
        let mut g = Vec::new();
        item(key, true, true, &mut g);
        groups.push(g);
    }
    let hot = (c.keys as f64 * c.hot_key_fraction) as u64;
    let perm = Permutation::new(c.keys, seed ^ 0x686f_7420);
    let mut rng = Rng::derive(seed, 0x6574_6372);
    let n = c.keys;
    let mut draw = || {
        let k = if hot == 0 || hot >= n {
            rng.below(n)
        } else if rng.chance(c.hot_request_fraction) {
            rng.below(hot)
        } else {
            hot + rng.below(n - hot)
        };
        (perm.apply(k), !rng.chance(c.get_ratio))
    };
    let item = |key: u64, write: bool, out: &mut Vec<MemRef>| item(key, write, false, out);
    requests(
        c.requests,
        c.ramp_up_requests,
        c.think_us,
        &mut draw,
        &item,
        &mut groups,
    );
    groups
}

/// YCSB's references, one group per loaded record or request; `data_start` is the records'
/// first page.
pub fn ycsb(c: &YcsbConfig, seed: u64, data_start: u64) -> Vec<Vec<MemRef>> {
    let index = Permutation::new(c.records, seed ^ 0x6964_7820);
    let rb = c.record_bytes as u64;
    let item = |key: u64, write: bool, load: bool, out: &mut Vec<MemRef>| {
        if c.index {
            out.push(access(index.apply(key) * 16 / 4096, write && load));
        }
        span(data_start * 4096 + key * rb, rb, write, out);
    };
    let mut groups = Vec::new();
    let load = if c.load { c.records } else { 0 };
    for key in c.records - load..c.records {
        let mut g = Vec::new();
        item(key, true, true, &mut g);
        groups.push(g);
    }
    let n = c.records;
    let zipf = Zipf::new(n, c.zipf_theta);
    let scramble = Permutation::new(n, seed ^ 0x7a69_7066);
    let hot = (n as f64 * c.hot_data_fraction) as u64;
    let mut rng = Rng::derive(seed, 0x7963_7362);
    let mut draw = || {
        let k = match c.distribution {
            KeyDistribution::Uniform => rng.below(n),
            KeyDistribution::Zipf => scramble.apply(zipf.sample(&mut rng) - 1),
            KeyDistribution::Hotspot => {
                if hot == 0 || hot >= n {
                    rng.below(n)
                } else if rng.chance(c.hot_op_fraction) {
                    rng.below(hot)
                } else {
                    hot + rng.below(n - hot)
                }
            }
        };
        (k, !rng.chance(c.read_ratio))
    };
    let item = |key: u64, write: bool, out: &mut Vec<MemRef>| item(key, write, false, out);
    requests(
        c.requests,
        c.ramp_up_requests,
        c.think_us,
        &mut draw,
        &item,
        &mut groups,
    );
    groups
}

/// Cut `groups` into fills of sizes `max` (cycled): each fill takes whole groups while it holds
/// fewer than its `max` references; with whether more follow.
pub fn fills(groups: &[Vec<MemRef>], max: &[usize]) -> Vec<(Vec<MemRef>, bool)> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut call = 0;
    loop {
        let m = max[call % max.len()];
        call += 1;
        let mut f = Vec::new();
        while i < groups.len() && f.len() < m {
            f.extend_from_slice(&groups[i]);
            i += 1;
        }
        let more = i < groups.len();
        out.push((f, more));
        if !more {
            return out;
        }
    }
}

/// The stream's fills with sizes `max` (cycled) until it ends.
pub fn stream_fills(w: &mut Workload, max: &[usize]) -> Vec<(Vec<MemRef>, bool)> {
    let mut out = Vec::new();
    let mut call = 0;
    loop {
        let mut f = Vec::new();
        let more = w.threads[0].fill(&mut f, max[call % max.len()]).unwrap();
        call += 1;
        out.push((f, more));
        if !more {
            return out;
        }
    }
}

fn max_sizes(seed: u64) -> Vec<usize> {
    let mut rng = Rng::new(seed);
    let mut v: Vec<usize> = (0..97).map(|_| 1 + rng.below(40) as usize).collect();
    v.extend([4096, 1, 3, 130, 65]);
    v
}

/// ETC: the stream with its page table and lookahead gives the twin's fills exactly, for seeded
/// configurations and fill sizes from 1 reference to 4096.
#[test]
fn etc_stream_matches_its_twin() {
    for seed in 0..6u64 {
        let mut rng = Rng::new(100 + seed);
        let c = EtcConfig {
            keys: 500 + rng.below(4000),
            requests: rng.below(3000),
            get_ratio: [0.967, 0.5, 1.0, 0.0][seed as usize % 4],
            hot_key_fraction: [0.1, 0.0, 1.0, 0.3][seed as usize % 4],
            hot_request_fraction: 0.9,
            think_us: (seed % 2) as u32 * 7,
            value_sizes: if seed % 3 == 0 {
                EtcValueSizes::Mutilate
            } else {
                EtcValueSizes::Gpareto
            },
            ramp_up_requests: rng.below(200) * (seed % 2),
        };
        let max = max_sizes(seed);
        let want = fills(&etc(&c, seed * 31 + 1), &max);
        let got = stream_fills(&mut build_etc(&c, seed * 31 + 1), &max);
        assert_eq!(got.len(), want.len(), "seed {seed}: fills");
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(g == w, "seed {seed}: fill {k} differs");
        }
    }
}

/// YCSB, every key distribution, with and without index and load: the same.
#[test]
fn ycsb_stream_matches_its_twin() {
    let dists = [
        KeyDistribution::Uniform,
        KeyDistribution::Zipf,
        KeyDistribution::Hotspot,
    ];
    for seed in 0..9u64 {
        let mut rng = Rng::new(200 + seed);
        let c = YcsbConfig {
            records: 300 + rng.below(3000),
            record_bytes: [1024, 100, 4096, 5000, 1][seed as usize % 5],
            distribution: dists[seed as usize % 3],
            zipf_theta: 0.99,
            hot_data_fraction: 0.2,
            hot_op_fraction: 0.8,
            read_ratio: 0.5,
            requests: rng.below(3000),
            index: seed % 2 == 0,
            load: seed % 4 != 3,
            think_us: (seed % 3) as u32,
            ramp_up_requests: rng.below(100),
        };
        let max = max_sizes(seed);
        let mut w = build_ycsb(&c, seed + 5);
        let data_start = w.mappings.last().unwrap().start as u64;
        let want = fills(&ycsb(&c, seed + 5, data_start), &max);
        let got = stream_fills(&mut w, &max);
        assert_eq!(got.len(), want.len(), "seed {seed}: fills");
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(g == w, "seed {seed}: fill {k} differs");
        }
    }
}
