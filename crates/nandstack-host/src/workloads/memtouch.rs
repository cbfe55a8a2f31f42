//! `tools/memtouch.c`, reference for reference.
//!
//! The program seeds a 64-bit xorshift (13, 7, 17) with `SEED | 1`, maps PAGES anonymous pages, writes
//! words 0, 8, …, 504 of every page in page order (64 writes per page, each consuming one draw), then
//! performs OPS accesses. Each access draws its page (uniform: `rnd() % pages`; seq: a cursor; hot:
//! `urand() < 0.8` picks `rnd() % (pages/5)` else `pages/5 + rnd() % (pages − pages/5)`; normal: two
//! `urand()`s through Box–Muller (2π = 6.283185307179586, the same double as `TAU`), `q = (long)(pages/2 + z·pages/12)` clamped), then a word offset
//! (`rnd() % 512`), then `rnd() % 100 < WRITE_PCT` decides a write, which stores one more `rnd()`.
//! The same draws in the same order are made here, so the page sequence is the program's.

use nandstack_core::Result;

use super::{layout, MapKind, MemRef, RefStream, Workload};
use crate::config::{MemtouchConfig, MemtouchPattern};

pub struct Memtouch {
    s: u64,
    pages: u64,
    ops: u64,
    pattern: MemtouchPattern,
    wpct: u64,
    /// Fill position (page, word) or, after the fill, the access count.
    fill_page: u64,
    fill_word: u32,
    done_ops: u64,
    cursor: u64,
}

impl Memtouch {
    pub fn new(c: &MemtouchConfig) -> Memtouch {
        Memtouch {
            s: c.seed | 1,
            pages: c.pages,
            ops: c.ops,
            pattern: c.pattern,
            wpct: c.write_pct as u64,
            fill_page: 0,
            fill_word: 0,
            done_ops: 0,
            cursor: 0,
        }
    }

    #[inline]
    fn rnd(&mut self) -> u64 {
        self.s ^= self.s << 13;
        self.s ^= self.s >> 7;
        self.s ^= self.s << 17;
        self.s
    }

    #[inline]
    fn urand(&mut self) -> f64 {
        (self.rnd() >> 11) as f64 * (1.0 / 9007199254740992.0)
    }

    /// The page of the next access (consumes the pattern's draws).
    #[inline]
    fn next_page(&mut self) -> u64 {
        let pages = self.pages;
        match self.pattern {
            MemtouchPattern::Uniform => self.rnd() % pages,
            MemtouchPattern::Seq => {
                let p = self.cursor % pages;
                self.cursor += 1;
                p
            }
            MemtouchPattern::Hot => {
                if self.urand() < 0.8 {
                    self.rnd() % (pages / 5)
                } else {
                    pages / 5 + self.rnd() % (pages - pages / 5)
                }
            }
            MemtouchPattern::Normal => {
                let u1 = self.urand();
                let u2 = self.urand();
                let z = (-2.0 * (u1 + 1e-300).ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                // C: (long)(pages/2 + z*(pages/12.0)) — integer pages/2, truncation toward zero.
                let q = ((pages / 2) as f64 + z * (pages as f64 / 12.0)) as i64;
                q.clamp(0, pages as i64 - 1) as u64
            }
        }
    }
}

impl RefStream for Memtouch {
    fn fill(&mut self, out: &mut Vec<MemRef>, max: usize) -> Result<bool> {
        let mut n = 0;
        while self.fill_page < self.pages && n < max {
            self.rnd();
            out.push(MemRef::write(self.fill_page as u32));
            n += 1;
            self.fill_word += 8;
            if self.fill_word >= 512 {
                self.fill_word = 0;
                self.fill_page += 1;
            }
        }
        while self.fill_page >= self.pages && self.done_ops < self.ops && n < max {
            let p = self.next_page();
            let _word = self.rnd() % 512;
            let write = self.rnd() % 100 < self.wpct;
            if write {
                self.rnd();
            }
            out.push(MemRef::access(p as u32, write));
            self.done_ops += 1;
            n += 1;
        }
        Ok(self.fill_page < self.pages || self.done_ops < self.ops)
    }

    fn len_hint(&self) -> Option<u64> {
        Some(self.pages * 64 + self.ops)
    }
}

pub fn build(c: &MemtouchConfig) -> Workload {
    let (pages, mappings) = layout(&[(c.pages as u32, MapKind::Anon)]);
    Workload {
        pages,
        mappings,
        files: Vec::new(),
        threads: vec![Box::new(Memtouch::new(c))],
        kv: false,
        touches_all: true,
        describe: format!(
            "memtouch {} {} {:?} {} {}",
            c.pages, c.ops, c.pattern, c.write_pct, c.seed
        )
        .to_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(pattern: MemtouchPattern, pages: u64, ops: u64, wpct: u32) -> Vec<MemRef> {
        let mut m = Memtouch::new(&MemtouchConfig {
            pages,
            ops,
            pattern,
            write_pct: wpct,
            seed: 11,
        });
        let mut v = Vec::new();
        while m.fill(&mut v, 1000).unwrap() {}
        v
    }

    #[test]
    fn fill_writes_every_page_64_times_in_order_then_ops() {
        let v = refs(MemtouchPattern::Seq, 10, 25, 100);
        assert_eq!(v.len(), 640 + 25);
        for (i, r) in v[..640].iter().enumerate() {
            assert_eq!(*r, MemRef::write((i / 64) as u32));
        }
        let pages: Vec<u32> = v[640..].iter().map(|r| r.page).collect();
        assert_eq!(pages, (0..25).map(|i| i % 10).collect::<Vec<_>>());
        assert!(v[640..].iter().all(|r| r.op == super::super::OP_WRITE));
    }

    #[test]
    fn xorshift_matches_the_c_program() {
        // s = 11 | 1 = 11; first three outputs of s ^= s<<13; s ^= s>>7; s ^= s<<17 computed by hand
        // with 64-bit wrap-around.
        let mut m = Memtouch::new(&MemtouchConfig {
            pages: 1,
            ops: 0,
            pattern: MemtouchPattern::Uniform,
            write_pct: 0,
            seed: 10,
        });
        let mut s: u64 = 11;
        for _ in 0..3 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            assert_eq!(m.rnd(), s);
        }
    }

    #[test]
    fn patterns_stay_in_range_and_hot_is_skewed() {
        let pages = 1000;
        for p in [
            MemtouchPattern::Uniform,
            MemtouchPattern::Normal,
            MemtouchPattern::Hot,
        ] {
            let v = refs(p, pages, 20_000, 50);
            assert!(v[64_000..].iter().all(|r| (r.page as u64) < pages));
        }
        let v = refs(MemtouchPattern::Hot, pages, 20_000, 50);
        let hot = v[64_000..].iter().filter(|r| r.page < 200).count();
        assert!((15_000..17_000).contains(&hot), "{hot}");
        let v = refs(MemtouchPattern::Normal, pages, 20_000, 50);
        let mid = v[64_000..]
            .iter()
            .filter(|r| (r.page as i64 - 500).abs() <= 83)
            .count();
        // ±1σ holds ~68%.
        assert!((12_800..14_400).contains(&mid), "{mid}");
        let writes = v[64_000..].iter().filter(|r| r.op == 1).count();
        assert!((9_500..10_500).contains(&writes), "{writes}");
    }
}
