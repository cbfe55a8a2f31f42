//! vm-scalability-like anonymous memory workload (`usemem`): a region of `size_mib`, populated by a
//! first write pass, then `passes` passes per thread — sequential over the thread's own slice, or
//! uniformly random over the whole region — each access a write with probability `write_ratio`.

use nandstack_core::{Result, Rng};

use super::config::{VmScalConfig, VmScalPattern};
use super::{layout, mib_pages, MapKind, MemRef, RefStream, Workload};

struct Thread {
    lo: u32,
    len: u32,
    region: u32,
    rand: bool,
    populate_left: u32,
    remaining: u64,
    total: u64,
    pos: u32,
    write_ratio: f64,
    rng: Rng,
}

impl RefStream for Thread {
    fn fill(&mut self, out: &mut Vec<MemRef>, max: usize) -> Result<bool> {
        let mut n = 0;
        while self.populate_left > 0 && n < max {
            out.push(MemRef::write(self.lo + self.len - self.populate_left));
            self.populate_left -= 1;
            n += 1;
        }
        while self.populate_left == 0 && self.remaining > 0 && n < max {
            let page = if self.rand {
                self.rng.below(self.region as u64) as u32
            } else {
                let p = self.lo + self.pos;
                self.pos = (self.pos + 1) % self.len;
                p
            };
            let write = self.write_ratio >= 1.0
                || (self.write_ratio > 0.0 && self.rng.chance(self.write_ratio));
            out.push(MemRef::access(page, write));
            self.remaining -= 1;
            n += 1;
        }
        Ok(self.populate_left > 0 || self.remaining > 0)
    }
    fn len_hint(&self) -> Option<u64> {
        Some(self.total)
    }
}

pub fn build(c: &VmScalConfig, seed: u64) -> Workload {
    let region = mib_pages(c.size_mib);
    let (pages, mappings) = layout(&[(region, MapKind::Anon)]);
    let t = c.threads;
    let slice = region / t;
    let threads = (0..t)
        .map(|i| {
            let lo = i * slice;
            let len = if i + 1 == t { region - lo } else { slice };
            let per = if c.pattern == VmScalPattern::Rand {
                region as f64 / t as f64
            } else {
                len as f64
            };
            let remaining = (per * c.passes).round().max(1.0) as u64;
            Box::new(Thread {
                lo,
                len,
                region,
                rand: c.pattern == VmScalPattern::Rand,
                populate_left: len,
                remaining,
                total: remaining + len as u64,
                pos: 0,
                write_ratio: c.write_ratio,
                rng: Rng::derive(seed, 0x766d_0000 + i as u64),
            }) as Box<dyn RefStream>
        })
        .collect();
    Workload {
        pages,
        mappings,
        files: Vec::new(),
        threads,
        kv: false,
        touches_all: true,
        describe: format!(
            "vm-scalability {:?} {} MiB, {} threads, write ratio {}",
            c.pattern, c.size_mib, c.threads, c.write_ratio
        )
        .to_lowercase(),
    }
}
