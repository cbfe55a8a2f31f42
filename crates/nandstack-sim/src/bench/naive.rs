//! The yardstick of `bench ftl`: a naive page-mapped greedy FTL, written for obviousness, run on the same
//! geometry and the same write stream as the engine's FTL in the same process, so that the ratio of the
//! two speeds is meaningful on a shared, noisy machine (wall-clock figures alone are not).
//!
//! It shares no code with `nandstack-device`: plain `Vec`s (no huge pages, no prefetching, no indexes),
//! the reverse map marks invalid units explicitly, and GC finds its victim by scanning every block of the
//! plane. Only the workload generator (`nandstack-workload`) is shared, so both see the same requests.
//!
//! Policy (the engine's defaults, in their simplest form): a 4 KiB unit goes to plane `lpn % planes`;
//! each plane has one open block that host writes and GC moves share; before every host unit write, while
//! the plane has fewer than [`GC_START`] free blocks, the sealed block with the fewest valid units (lowest
//! id on ties) is collected: its valid units move to the plane's open block, then it is erased.

use std::collections::VecDeque;
use std::time::Instant;

use nandstack_core::{Error, Result, MAPPING_UNIT_BYTES};
use nandstack_workload::{BlockGenerator, BlockRequest, Op};

use super::cpu_seconds;

const NONE: u32 = u32::MAX;
/// Collect while a plane has fewer free blocks than this (the engine's default `start_free_blocks`).
const GC_START: usize = 3;

pub struct NaiveFtl {
    planes: u32,
    blocks_per_plane: u32,
    units_per_block: u32,
    /// Logical unit → physical unit, or NONE.
    l2p: Vec<u32>,
    /// Physical unit → logical unit, or NONE when the unit holds no valid data.
    p2l: Vec<u32>,
    valid: Vec<u32>,
    written: Vec<u32>,
    sealed: Vec<bool>,
    free: Vec<VecDeque<u32>>,
    open: Vec<u32>,
    /// 4 KiB units programmed (= flash page programs with 4 KiB pages) and written by the host.
    pub programs: u64,
    pub host_units: u64,
}

impl NaiveFtl {
    pub fn new(planes: u32, blocks_per_plane: u32, units_per_block: u32, logical: u32) -> NaiveFtl {
        let blocks = (planes * blocks_per_plane) as usize;
        NaiveFtl {
            planes,
            blocks_per_plane,
            units_per_block,
            l2p: vec![NONE; logical as usize],
            p2l: vec![NONE; blocks * units_per_block as usize],
            valid: vec![0; blocks],
            written: vec![0; blocks],
            sealed: vec![false; blocks],
            free: (0..planes)
                .map(|p| (p * blocks_per_plane..(p + 1) * blocks_per_plane).collect())
                .collect(),
            open: vec![NONE; planes as usize],
            programs: 0,
            host_units: 0,
        }
    }

    /// Host write of one 4 KiB unit.
    pub fn write(&mut self, lpn: u32) -> Result<()> {
        let plane = lpn % self.planes;
        while self.free[plane as usize].len() < GC_START {
            self.collect(plane)?;
        }
        self.trim(lpn);
        self.append(plane, lpn)?;
        self.host_units += 1;
        Ok(())
    }

    /// Drop the current copy of `lpn`, if any.
    pub fn trim(&mut self, lpn: u32) {
        let old = self.l2p[lpn as usize];
        if old != NONE {
            self.p2l[old as usize] = NONE;
            self.valid[(old / self.units_per_block) as usize] -= 1;
            self.l2p[lpn as usize] = NONE;
        }
    }

    /// Program `lpn` into the next unit of the plane's open block.
    fn append(&mut self, plane: u32, lpn: u32) -> Result<()> {
        if self.open[plane as usize] == NONE {
            let b = self.free[plane as usize].pop_front().ok_or_else(|| {
                Error::DeviceFull(format!("naive FTL: plane {plane} has no free block"))
            })?;
            self.open[plane as usize] = b;
        }
        let b = self.open[plane as usize];
        let pua = b * self.units_per_block + self.written[b as usize];
        self.written[b as usize] += 1;
        self.p2l[pua as usize] = lpn;
        self.l2p[lpn as usize] = pua;
        self.valid[b as usize] += 1;
        self.programs += 1;
        if self.written[b as usize] == self.units_per_block {
            self.sealed[b as usize] = true;
            self.open[plane as usize] = NONE;
        }
        Ok(())
    }

    /// Greedy GC of one victim in `plane`.
    fn collect(&mut self, plane: u32) -> Result<()> {
        let first = plane * self.blocks_per_plane;
        let victim = (first..first + self.blocks_per_plane)
            .filter(|&b| self.sealed[b as usize])
            .min_by_key(|&b| self.valid[b as usize]);
        let v = match victim {
            Some(v) if self.valid[v as usize] < self.units_per_block => v,
            _ => {
                return Err(Error::DeviceFull(format!(
                    "naive FTL: plane {plane} has no block with invalid data to collect"
                )))
            }
        };
        self.sealed[v as usize] = false;
        let base = v * self.units_per_block;
        for pua in base..base + self.written[v as usize] {
            let lpn = self.p2l[pua as usize];
            if lpn != NONE {
                self.p2l[pua as usize] = NONE;
                self.valid[v as usize] -= 1;
                self.append(plane, lpn)?;
            }
        }
        self.written[v as usize] = 0;
        self.free[plane as usize].push_back(v);
        Ok(())
    }

    /// Apply one block request (reads only look their units up).
    fn apply(&mut self, r: &BlockRequest) -> Result<()> {
        let first = (r.offset / MAPPING_UNIT_BYTES) as u32;
        let end = (r.offset + r.len).div_ceil(MAPPING_UNIT_BYTES) as u32;
        for lpn in first..end {
            match r.op {
                Op::Write => self.write(lpn)?,
                Op::Trim => self.trim(lpn),
                Op::Read => {
                    std::hint::black_box(self.l2p[lpn as usize]);
                }
            }
        }
        Ok(())
    }
}

/// The naive FTL's figures for the measured phase.
#[derive(serde::Serialize)]
pub struct NaiveResult {
    pub description: &'static str,
    pub measured_host_writes: u64,
    pub waf: f64,
    pub wall_seconds: f64,
    pub cpu_seconds: Option<f64>,
    pub flash_programs_per_second: f64,
    pub flash_programs_per_cpu_second: Option<f64>,
}

/// The device and the phases of `bench ftl`, on the naive FTL: fill sequentially, warm up with
/// `warmup_bytes` of the generator's writes (dropping the three requests the engine's warm-up generated
/// ahead for its prefetch pipeline), then measure `requests` requests of the same stream.
pub struct NaivePlan {
    pub planes: u32,
    pub blocks_per_plane: u32,
    pub units_per_block: u32,
    pub logical_units: u32,
    pub warmup_bytes: u64,
    pub requests: u64,
}

pub fn run(plan: &NaivePlan, mut gen: BlockGenerator) -> Result<NaiveResult> {
    let mut ftl = NaiveFtl::new(
        plan.planes,
        plan.blocks_per_plane,
        plan.units_per_block,
        plan.logical_units,
    );
    for lpn in 0..plan.logical_units {
        ftl.write(lpn)?;
    }
    let mut written = 0;
    while written < plan.warmup_bytes {
        let r = gen.next_request();
        ftl.apply(&r)?;
        if r.op == Op::Write {
            written += r.len;
        }
    }
    for _ in 0..3 {
        gen.next_request();
    }
    let (programs0, host0) = (ftl.programs, ftl.host_units);
    let cpu0 = cpu_seconds();
    let t0 = Instant::now();
    let mut host_writes = 0;
    for _ in 0..plan.requests {
        let r = gen.next_request();
        ftl.apply(&r)?;
        host_writes += u64::from(r.op == Op::Write);
    }
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu0.and_then(|c0| cpu_seconds().map(|c| c - c0));
    let programs = (ftl.programs - programs0) as f64;
    Ok(NaiveResult {
        description: "naive page-mapped greedy FTL (plain tables, victim by scanning the plane), \
                      same geometry and requests",
        measured_host_writes: host_writes,
        waf: programs / (ftl.host_units - host0) as f64,
        wall_seconds: wall,
        cpu_seconds: cpu,
        flash_programs_per_second: programs / wall,
        flash_programs_per_cpu_second: cpu.map(|c| programs / c),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1 plane × 4 blocks × 2 units, 4 logical units: the fill of units 0–2 leaves 2 free blocks, so the
    /// write of unit 3 must collect, and the only sealed block is fully valid: a named error, not a loop.
    #[test]
    fn gc_without_invalid_data_is_a_named_error() {
        let mut f = NaiveFtl::new(1, 4, 2, 4);
        for lpn in 0..3 {
            f.write(lpn).unwrap();
        }
        let e = f.write(3).unwrap_err().to_string();
        assert!(e.contains("no block with invalid data"), "{e}");
    }

    /// 1 plane × 5 blocks × 2 units, 2 logical units written alternately: blocks fill with (0, 1) pairs,
    /// so whenever GC runs a sealed block holds no valid unit; nothing moves and WAF is exactly 1.
    #[test]
    fn alternating_overwrites_move_nothing() {
        let mut f = NaiveFtl::new(1, 5, 2, 2);
        for i in 0..100 {
            f.write(i % 2).unwrap();
        }
        assert_eq!((f.programs, f.host_units), (100, 100));
        for lpn in 0..2 {
            assert_eq!(f.p2l[f.l2p[lpn as usize] as usize], lpn);
        }
        assert_eq!(f.valid.iter().sum::<u32>(), 2);
    }

    /// Hand-computed: 1 plane × 5 blocks × 2 units, 4 logical units. Fill 0–3 (b0 = {0, 1}, b1 = {2, 3});
    /// overwrite 1 (b0 has 1 valid, b2 opened: {1}); the write of 2 finds 2 free blocks and collects the
    /// emptiest sealed block, b0: unit 0 moves to b2's last slot, b0 is erased, then 2 goes to a new b3.
    #[test]
    fn greedy_moves_the_valid_units_of_the_emptiest_block() {
        let mut f = NaiveFtl::new(1, 5, 2, 4);
        for lpn in [0, 1, 2, 3, 1, 2] {
            f.write(lpn).unwrap();
        }
        assert_eq!((f.programs, f.host_units), (7, 6));
        assert_eq!(f.l2p, vec![5, 4, 6, 3]);
        assert_eq!((f.written[0], f.valid[0], f.valid[1]), (0, 0, 1));
        assert_eq!(f.free[0], VecDeque::from(vec![4, 0]));
    }
}
