//! pmbench-like workload: after writing every page once in order (pmbench initialises its buffer),
//! each access picks a page from a normal distribution centred on the middle of the working set with
//! σ = working set / 12 (clamped to the set) and reads it with probability `read_ratio`.

use nandstack_core::{Result, Rng};

use super::config::PmbenchConfig;
use super::{layout, mib_pages, MapKind, MemRef, RefStream, Workload};

struct Pmbench {
    pages: u32,
    init_left: u32,
    remaining: u64,
    total: u64,
    read_ratio: f64,
    rng: Rng,
}

impl RefStream for Pmbench {
    fn fill(&mut self, out: &mut Vec<MemRef>, max: usize) -> Result<bool> {
        let mut n = 0;
        while self.init_left > 0 && n < max {
            out.push(MemRef::write(self.pages - self.init_left));
            self.init_left -= 1;
            n += 1;
        }
        let centre = self.pages as f64 / 2.0;
        let sigma = self.pages as f64 / 12.0;
        if self.init_left == 0 {
            // The generator's state in a local for the loop (registers across the libm calls, not
            // loads and stores through `self`).
            let mut rng = self.rng.clone();
            let take = self.remaining.min((max - n) as u64);
            out.reserve(take as usize);
            for _ in 0..take {
                let page = page_at(centre + rng.normal() * sigma, self.pages - 1);
                let read = rng.chance(self.read_ratio);
                out.push(MemRef::access(page, !read));
            }
            self.remaining -= take;
            self.rng = rng;
        }
        Ok(self.init_left > 0 || self.remaining > 0)
    }
    fn len_hint(&self) -> Option<u64> {
        Some(self.total)
    }
}

/// The page of position `v`: `v.floor().clamp(0.0, last as f64) as u32` without libm's `floor` (a
/// call on baseline x86-64, 5 % of the host benchmark): truncation is the floor of a positive `v`
/// (`as` saturates), and a `v` at or below 0 (or NaN) is page 0 either way.
#[inline]
fn page_at(v: f64, last: u32) -> u32 {
    if v > 0.0 {
        (v as u64).min(last as u64) as u32
    } else {
        0
    }
}

pub fn build(c: &PmbenchConfig, seed: u64) -> Workload {
    let ws = mib_pages(c.working_set_mib);
    let (pages, mappings) = layout(&[(ws, MapKind::Anon)]);
    let init = if c.init { ws } else { 0 };
    Workload {
        pages,
        mappings,
        files: Vec::new(),
        threads: vec![Box::new(Pmbench {
            pages: ws,
            init_left: init,
            remaining: c.references,
            total: c.references + init as u64,
            read_ratio: c.read_ratio,
            rng: Rng::derive(seed, 0x706d_6265),
        })],
        kv: false,
        touches_all: true,
        describe: format!(
            "pmbench normal σ=WS/12, {} MiB, read ratio {}",
            c.working_set_mib, c.read_ratio
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::page_at;
    use nandstack_core::Rng;

    /// The same page as the floor-and-clamp it replaces, on edge values and on a million normal draws.
    #[test]
    fn page_at_is_floor_then_clamp() {
        let obvious = |v: f64, last: u32| v.floor().clamp(0.0, last as f64) as u32;
        let edges = [
            0.0,
            -0.0,
            -0.5,
            -1.0,
            0.5,
            1.0,
            99.999_999_999,
            100.0,
            100.5,
            1e300,
            -1e300,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        for &v in &edges {
            for last in [0, 1, 99, 100, u32::MAX] {
                assert_eq!(page_at(v, last), obvious(v, last), "v {v}, last {last}");
            }
        }
        let mut rng = Rng::new(9);
        for _ in 0..1_000_000 {
            let v = 50_000.0 + rng.normal() * 40_000.0;
            assert_eq!(page_at(v, 99_999), obvious(v, 99_999), "v {v}");
        }
    }
}
