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
        while self.init_left == 0 && self.remaining > 0 && n < max {
            let q = (centre + self.rng.normal() * sigma).floor();
            let page = q.clamp(0.0, self.pages as f64 - 1.0) as u32;
            let read = self.rng.chance(self.read_ratio);
            out.push(MemRef::access(page, !read));
            self.remaining -= 1;
            n += 1;
        }
        Ok(self.init_left > 0 || self.remaining > 0)
    }
    fn len_hint(&self) -> Option<u64> {
        Some(self.total)
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
