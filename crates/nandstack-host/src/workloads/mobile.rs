//! Mobile app switching (DISS paper, Table 2): four apps — V (video), G (game), O (office/PowerPoint),
//! W (web) — each with an anonymous working set and a file working set (code mapped VM_EXEC, resources
//! mapped read-only). The scenario's eight phases last 5, 5, 5, 30, 5, 5, 5, 5 Table-2 minutes
//! (× `minute_ms`). In the first half each app is launched in turn — its files are read in and its heap
//! written once — and stays in the background afterwards; in the second half the apps are switched.
//!
//! Every 1 ms tick the foreground app makes `foreground_refs_per_ms` references and each launched
//! background app `background_refs_per_ms` (a fractional rate: ⌊(t+1)·rate⌋ − ⌊t·rate⌋ at tick t),
//! then the thread waits for the next tick. Inside an app,
//! pages are zipf-popular (`zipf_theta`, popular pages scattered by a permutation); a reference goes to
//! the anon or file set in proportion to their sizes, and anon references write with `write_ratio`.
//! Each app also has a small shared data file (a tenth of its file set, at least 1 MiB: databases,
//! caches) that gets a tenth of its file references, writing with `data_write_ratio` (default
//! `write_ratio`) — the user writes that the flusher sends to the file partition. A fraction
//! `read_mostly_fraction` of each app's anonymous pages (a random subset of popularity ranks) is only
//! read after the launch: the pages a swap-in brings back clean and reclaim may drop clean again
//! (the DISS paper's swap-in-and-in).
//! The four apps share one address space and cgroup (one process in the model).

use nandstack_core::{Result, Rng};

use super::config::{AppProfile, MobileConfig, MobileScenario};
use super::region::Region;
use super::{layout, mib_pages, MapKind, MemRef, RefStream, Workload, OP_UNTIL};

const APPS: [&str; 4] = ["V", "G", "O", "W"];
const MINUTES: [u32; 8] = [5, 5, 5, 30, 5, 5, 5, 5];
const V: usize = 0;
const G: usize = 1;
const O: usize = 2;
const W: usize = 3;

fn sequence(s: MobileScenario) -> [usize; 8] {
    match s {
        MobileScenario::Video => [G, W, O, V, O, W, G, V],
        MobileScenario::Game => [O, V, W, G, W, V, O, G],
        MobileScenario::Social => [V, O, G, W, G, O, V, W],
        MobileScenario::Office => [G, W, V, O, V, W, G, O],
    }
}

fn default_apps() -> Vec<AppProfile> {
    [(300, 200), (700, 400), (400, 250), (600, 150)]
        .iter()
        .map(|&(anon_mib, file_mib)| AppProfile { anon_mib, file_mib })
        .collect()
}

struct App {
    anon: Region,
    /// Anonymous pages `anon.start .. anon.start + read_mostly` are only read after the launch.
    read_mostly: u32,
    /// Code and resources (file mappings), launched by reading them in order.
    files: Vec<Region>,
    /// The shared data file.
    data: Region,
    anon_share: f64,
    launched: bool,
}

struct Mobile {
    apps: Vec<App>,
    seq: [usize; 8],
    phase_end_ms: [u64; 8],
    phase: usize,
    tick: u64,
    end_ms: u64,
    fg_refs: f64,
    bg_refs: f64,
    write_ratio: f64,
    data_write_ratio: f64,
    rng: Rng,
    total: u64,
}

impl Mobile {
    fn refs(&mut self, app: usize, n: u32, out: &mut Vec<MemRef>) {
        // The generator's state in a local for the loop (registers, not stores through `self`).
        let mut rng = self.rng.clone();
        let a = &self.apps[app];
        out.reserve(n as usize);
        for _ in 0..n {
            if a.files.is_empty() || rng.chance(a.anon_share) {
                let p = a.anon.pick(&mut rng);
                let w = rng.chance(self.write_ratio) && p - a.anon.start >= a.read_mostly;
                out.push(MemRef::access(p, w));
            } else if rng.chance(0.1) {
                let p = a.data.pick(&mut rng);
                let w = rng.chance(self.data_write_ratio);
                out.push(MemRef::access(p, w));
            } else {
                let f = &a.files[rng.below(a.files.len() as u64) as usize];
                out.push(MemRef::read(f.pick(&mut rng)));
            }
        }
        self.rng = rng;
    }
}

/// References at tick `t` of a rate per tick: ⌊(t+1)·rate⌋ − ⌊t·rate⌋ (the rate itself when whole).
fn per_tick(rate: f64, t: u64) -> u32 {
    (((t + 1) as f64 * rate).floor() - (t as f64 * rate).floor()) as u32
}

impl RefStream for Mobile {
    fn fill(&mut self, out: &mut Vec<MemRef>, max: usize) -> Result<bool> {
        let start = out.len();
        while self.tick < self.end_ms && out.len() - start < max {
            while self.tick >= self.phase_end_ms[self.phase] {
                self.phase += 1;
            }
            let fg = self.seq[self.phase];
            if !self.apps[fg].launched {
                self.apps[fg].launched = true;
                let a = &self.apps[fg];
                for f in a.files.iter().chain([&a.data]) {
                    out.extend((f.start..f.start + f.len).map(MemRef::read));
                }
                out.extend((a.anon.start..a.anon.start + a.anon.len).map(MemRef::write));
            }
            self.refs(fg, per_tick(self.fg_refs, self.tick), out);
            let bg = per_tick(self.bg_refs, self.tick);
            for b in 0..self.apps.len() {
                if b != fg && self.apps[b].launched {
                    self.refs(b, bg, out);
                }
            }
            self.tick += 1;
            out.push(MemRef::marker(OP_UNTIL, self.tick as u32));
        }
        Ok(self.tick < self.end_ms)
    }
    fn len_hint(&self) -> Option<u64> {
        Some(self.total)
    }
}

pub fn build(c: &MobileConfig, seed: u64) -> Result<Workload> {
    let profiles = c.apps.clone().unwrap_or_else(default_apps);
    let mut maps = Vec::new();
    let mut files = Vec::new();
    for p in &profiles {
        maps.push((mib_pages(p.anon_mib), MapKind::Anon));
        let fp = mib_pages(p.file_mib);
        let code = fp * 3 / 10;
        for (pages, exec) in [(code, true), (fp - code, false)] {
            if pages > 0 {
                maps.push((
                    pages,
                    MapKind::File {
                        file: files.len(),
                        shared: false,
                        exec,
                    },
                ));
                files.push(pages);
            }
        }
        let data = (fp / 10).max(256);
        maps.push((
            data,
            MapKind::File {
                file: files.len(),
                shared: true,
                exec: false,
            },
        ));
        files.push(data);
    }
    let (pages, mappings) = layout(&maps);
    let mut apps = Vec::new();
    let mut mi = 0;
    let region = |m: &super::Mapping, i: u64| {
        Region::new(m.start, m.pages, c.zipf_theta, seed ^ (0x6d6f_6200 + i))
    };
    for p in &profiles {
        let anon = region(&mappings[mi], mi as u64);
        mi += 1;
        let mut fr = Vec::new();
        let fp = mib_pages(p.file_mib);
        let nfiles = [fp * 3 / 10, fp - fp * 3 / 10]
            .iter()
            .filter(|&&x| x > 0)
            .count();
        for _ in 0..nfiles {
            fr.push(region(&mappings[mi], mi as u64));
            mi += 1;
        }
        let data = region(&mappings[mi], mi as u64);
        mi += 1;
        let anon_share = p.anon_mib as f64 / (p.anon_mib + p.file_mib) as f64;
        let read_mostly = (anon.len as f64 * c.read_mostly_fraction).round() as u32;
        apps.push(App {
            anon,
            read_mostly,
            files: fr,
            data,
            anon_share,
            launched: false,
        });
    }
    let mut phase_end_ms = [0u64; 8];
    let mut t = 0.0;
    for (i, m) in MINUTES.iter().enumerate() {
        t += *m as f64 * c.minute_ms;
        phase_end_ms[i] = t.round() as u64;
    }
    let end_ms = phase_end_ms[7];
    if end_ms > u32::MAX as u64 {
        return Err(nandstack_core::Error::config(
            "workload.minute_ms",
            "the scenario would last longer than 2^32 ms",
        ));
    }
    let launch: u64 = apps
        .iter()
        .map(|a| {
            a.anon.len as u64
                + a.data.len as u64
                + a.files.iter().map(|f| f.len as u64).sum::<u64>()
        })
        .sum();
    let total = launch
        + (end_ms as f64 * (c.foreground_refs_per_ms + 3.0 * c.background_refs_per_ms)).round()
            as u64;
    let seq = sequence(c.scenario);
    Ok(Workload {
        pages,
        mappings,
        files,
        threads: vec![Box::new(Mobile {
            apps,
            seq,
            phase_end_ms,
            phase: 0,
            tick: 0,
            end_ms,
            fg_refs: c.foreground_refs_per_ms,
            bg_refs: c.background_refs_per_ms,
            write_ratio: c.write_ratio,
            data_write_ratio: c.data_write_ratio.unwrap_or(c.write_ratio),
            rng: Rng::derive(seed, 0x6d6f_6269),
            total,
        })],
        kv: false,
        touches_all: true,
        describe: format!(
            "mobile {:?}: {} ({} ms per minute)",
            c.scenario,
            seq.iter().map(|&a| APPS[a]).collect::<Vec<_>>().join(" "),
            c.minute_ms
        )
        .to_lowercase(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::{OP_READ, OP_UNTIL, OP_WRITE};

    #[test]
    fn a_fractional_rate_spreads_its_references_over_the_ticks() {
        assert!((0..1000).all(|t| per_tick(15.0, t) == 15));
        let quarter: Vec<u32> = (0..8).map(|t| per_tick(0.25, t)).collect();
        assert_eq!(quarter, [0, 0, 0, 1, 0, 0, 0, 1]);
        let n: u32 = (0..60_000).map(|t| per_tick(2000.0 / 60.0, t)).sum();
        assert_eq!(n, 2_000_000);
    }

    /// (memory references, last OP_UNTIL ms) of a whole scenario.
    fn count(minute_ms: f64, fg: f64, bg: f64) -> (u64, u32) {
        let c: MobileConfig = serde_json::from_value(serde_json::json!({
            "scenario": "video", "minute_ms": minute_ms, "foreground_refs_per_ms": fg,
            "background_refs_per_ms": bg,
            "apps": [{"anon_mib": 1, "file_mib": 1}, {"anon_mib": 1, "file_mib": 1},
                     {"anon_mib": 1, "file_mib": 1}, {"anon_mib": 1, "file_mib": 1}]}))
        .unwrap();
        let mut w = build(&c, 3).unwrap();
        let (mut refs, mut last, mut out) = (0u64, 0u32, Vec::new());
        loop {
            out.clear();
            let more = w.threads[0].fill(&mut out, 1 << 16).unwrap();
            refs += out
                .iter()
                .filter(|r| r.op == OP_READ || r.op == OP_WRITE)
                .count() as u64;
            if let Some(u) = out.iter().rev().find(|r| r.op == OP_UNTIL) {
                last = u.page;
            }
            if !more {
                return (refs, last);
            }
        }
    }

    #[test]
    fn stretching_the_minute_keeps_every_reference() {
        // 65 minutes of 2 ms (130 ticks) vs of 120 ms (7,800 ticks) at a sixtieth of the rates.
        let (short, end_short) = count(2.0, 600.0, 60.0);
        let (long, end_long) = count(120.0, 10.0, 1.0);
        assert_eq!((end_short, end_long), (130, 7_800));
        assert_eq!(short, long);
    }
}
