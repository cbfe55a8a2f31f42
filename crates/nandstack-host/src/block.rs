//! The host's block layer: merges the pages of one I/O batch (a plug) into requests of contiguous
//! sectors up to `max_sectors_kb`, issues them to the SSD at the submitting thread's time, counts them by
//! region and kind, and optionally writes them to a block trace (MSR CSV or blkparse text).

use std::fs::File;
use std::io::{BufWriter, Write};

use nandstack_core::{Error, Nanos, Result};
use nandstack_device::{Command, Completion, Device};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Output format of the host's block trace.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BlockTraceFormat {
    /// MSR Cambridge CSV (`Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`; FILETIME ticks
    /// of 100 ns from simulation start). Discards cannot be expressed and are left out.
    Msr,
    /// `blkparse` default text, issue (`D`) events only; discards appear with RWBS `D`.
    Blkparse,
}

/// Where to write the block requests the host issued.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlockTraceOut {
    /// File to write (created or truncated).
    pub path: String,
    /// `msr` or `blkparse`. Default `blkparse`.
    #[serde(default = "d_trace_format")]
    pub format: BlockTraceFormat,
}
fn d_trace_format() -> BlockTraceFormat {
    BlockTraceFormat::Blkparse
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IoKind {
    Read = 0,
    Write = 1,
    Discard = 2,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Region {
    Swap = 0,
    File = 1,
}

/// Request size histograms are kept exactly up to this many pages.
pub const HIST_PAGES: usize = 1024;

/// Issuer ids of kernel threads in the block trace (the first entries of the layer's `comms`).
pub const COMM_KSWAPD: u16 = 0;
pub const COMM_KWORKER: u16 = 1;
pub const COMM_FLUSH: u16 = 2;

/// Requests and pages indexed `[region][kind]`, and request sizes.
#[derive(Clone, Debug)]
pub struct IoCounters {
    pub requests: [[u64; 3]; 2],
    pub pages: [[u64; 3]; 2],
    /// Requests that start where the previous request of the same region and kind ended.
    pub sequential: [[u64; 3]; 2],
    /// Where the last request of each region and kind ended (byte offset).
    pub next_offset: [[u64; 3]; 2],
    /// Request sizes in pages (index = size, last bucket = larger), indexed `region * 3 + kind`.
    pub sizes: Vec<Vec<u64>>,
}
impl Default for IoCounters {
    fn default() -> Self {
        IoCounters {
            requests: [[0; 3]; 2],
            pages: [[0; 3]; 2],
            sequential: [[0; 3]; 2],
            next_offset: [[u64::MAX; 3]; 2],
            sizes: vec![vec![0; HIST_PAGES + 1]; 6],
        }
    }
}

struct TraceOut {
    out: BufWriter<File>,
    path: String,
    format: BlockTraceFormat,
    seq: u64,
}

pub struct BlockLayer {
    /// The device below (any kind).
    pub dev: Box<dyn Device>,
    pub max_req_pages: u32,
    pub counters: IoCounters,
    /// Device latency (completion − issue) of the requests issued, by kind (read, write, discard).
    pub latency: [nandstack_core::Histogram; 3],
    trace: Option<TraceOut>,
    /// Names of the issuers (the `comm` of trace lines).
    pub comms: Vec<String>,
    /// Latest completion of a read or write (the device is idle after it, TRIMs aside).
    pub rw_busy_until: Nanos,
    /// Pages read that held no data on the device, by region (file pages never written; on the swap
    /// partition a read of no data is an error).
    pub read_pages_no_data: [u64; 2],
    /// With a queue depth (`host.block.queue_depth`): when each of the device's command slots is free
    /// again (the completion of the command it holds). `None`: no limit, every request is issued when
    /// it arrives.
    slots: Option<Vec<Nanos>>,
    /// Requests that waited for a free slot, and their summed wait (ns).
    pub queue_waits: u64,
    pub queue_wait_ns: u64,
}

impl BlockLayer {
    pub fn new(
        dev: Box<dyn Device>,
        max_req_pages: u32,
        trace: Option<&BlockTraceOut>,
    ) -> Result<BlockLayer> {
        let trace = match trace {
            Some(t) => {
                let f = File::create(&t.path).map_err(|e| Error::Io {
                    path: t.path.clone(),
                    source: e,
                })?;
                Some(TraceOut {
                    out: BufWriter::with_capacity(1 << 16, f),
                    path: t.path.clone(),
                    format: t.format,
                    seq: 0,
                })
            }
            None => None,
        };
        Ok(BlockLayer {
            dev,
            max_req_pages,
            counters: IoCounters::default(),
            latency: Default::default(),
            trace,
            comms: vec!["kswapd0".into(), "kworker".into(), "flush".into()],
            rw_busy_until: Nanos::ZERO,
            read_pages_no_data: [0; 2],
            slots: None,
            queue_waits: 0,
            queue_wait_ns: 0,
        })
    }

    /// Limit the commands in flight at the device to `depth` (`host.block.queue_depth`; eMMC 5.0 has
    /// one). A request arriving while every slot is busy is issued when the earliest one completes,
    /// and its submitter waits for that too. `None` (the default): no limit.
    pub fn set_queue_depth(&mut self, depth: Option<u32>) {
        self.slots = depth.map(|d| vec![Nanos::ZERO; d.max(1) as usize]);
    }

    /// The queue depth in force (`None`: unlimited).
    pub fn queue_depth(&self) -> Option<u32> {
        self.slots.as_ref().map(|s| s.len() as u32)
    }

    /// When a request arriving at `now` reaches the device, and the slot it takes (the one free
    /// earliest, lowest index on a tie; FIFO in submission order).
    fn admit(&mut self, now: Nanos) -> (Nanos, Option<usize>) {
        let Some(slots) = self.slots.as_ref() else {
            return (now, None);
        };
        let (i, free) = slots
            .iter()
            .enumerate()
            .min_by_key(|&(i, &t)| (t, i))
            .map(|(i, &t)| (i, t))
            .expect("a queue depth is at least 1");
        let start = now.max(free);
        if start > now {
            self.queue_waits += 1;
            self.queue_wait_ns += (start - now).0;
        }
        (start, Some(i))
    }

    /// Register an issuer name; returns its id.
    pub fn comm(&mut self, name: &str) -> u16 {
        self.comms.push(name.into());
        (self.comms.len() - 1) as u16
    }

    /// Issue one request of `pages` 4 KiB pages at byte `offset`, arriving at `now`; returns its
    /// completion time.
    pub fn issue(
        &mut self,
        kind: IoKind,
        region: Region,
        offset: u64,
        pages: u32,
        now: Nanos,
        comm: u16,
    ) -> Result<Nanos> {
        let len = pages as u64 * 4096;
        let cmd = match kind {
            IoKind::Read => Command::read(offset, len),
            IoKind::Write => Command::write(offset, len),
            IoKind::Discard => Command::trim(offset, len),
        };
        Ok(self
            .issue_command(kind, region, cmd, pages, now, comm)?
            .done)
    }

    /// Issue any data command of `pages` 4 KiB pages (a zone append, a read whose per-unit metadata the
    /// caller needs), counted as `kind` on `region`; returns the device's whole completion, its `done`
    /// at least `now`. The trace records it where the data is (an append: where it landed).
    pub fn issue_command(
        &mut self,
        kind: IoKind,
        region: Region,
        cmd: Command<'_>,
        pages: u32,
        now: Nanos,
        comm: u16,
    ) -> Result<Completion> {
        let at = match &cmd {
            Command::Read { offset, .. }
            | Command::Write { offset, .. }
            | Command::Trim { offset, .. } => Some(*offset),
            _ => None,
        };
        // With a queue depth the request reaches the device when a slot is free (`start`); the trace and
        // the device latency count from there, the submitter gets the completion (the wait included).
        let (start, slot) = self.admit(now);
        let mut c = self.dev.submit(start, cmd)?;
        if kind == IoKind::Read && region == Region::Swap && c.unmapped_units > 0 {
            return Err(lost_swap_data(at.unwrap_or(0), pages, c.unmapped_units));
        }
        self.read_pages_no_data[region as usize] += c.unmapped_units;
        c.done = c.done.max(start);
        if let (Some(i), Some(slots)) = (slot, self.slots.as_mut()) {
            slots[i] = c.done;
        }
        let offset = c.written_at.or(at).unwrap_or(0);
        self.record(kind, region, offset, pages, start, c.done, comm)?;
        Ok(c)
    }

    /// Count (and trace) a request served by something other than the device below — a loop device
    /// over a RAM file, for example — issued at `now` and completing at `done`.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        kind: IoKind,
        region: Region,
        offset: u64,
        pages: u32,
        now: Nanos,
        done: Nanos,
        comm: u16,
    ) -> Result<()> {
        let len = pages as u64 * 4096;
        if kind != IoKind::Discard {
            self.rw_busy_until = self.rw_busy_until.max(done);
        }
        let (r, k) = (region as usize, kind as usize);
        self.counters.requests[r][k] += 1;
        self.counters.pages[r][k] += pages as u64;
        self.counters.sizes[r * 3 + k][(pages as usize).min(HIST_PAGES)] += 1;
        let c = &mut self.counters;
        if c.next_offset[r][k] == offset {
            c.sequential[r][k] += 1;
        }
        c.next_offset[r][k] = offset + len;
        self.latency[k].record((done - now).0);
        if let Some(t) = self.trace.as_mut() {
            let comm = &self.comms[comm as usize];
            t.seq += 1;
            let res = match t.format {
                BlockTraceFormat::Msr => {
                    if kind == IoKind::Discard {
                        Ok(())
                    } else {
                        writeln!(
                            t.out,
                            "{},nandstack,0,{},{},{},{}",
                            now.0 / 100,
                            if kind == IoKind::Read {
                                "Read"
                            } else {
                                "Write"
                            },
                            offset,
                            len,
                            (done - now).0 / 100
                        )
                    }
                }
                BlockTraceFormat::Blkparse => writeln!(
                    t.out,
                    "259,0 0 {} {}.{:09} 0 D {} {} + {} [{}]",
                    t.seq,
                    now.0 / 1_000_000_000,
                    now.0 % 1_000_000_000,
                    match kind {
                        IoKind::Read => "R",
                        IoKind::Write => "W",
                        IoKind::Discard => "D",
                    },
                    offset / 512,
                    len / 512,
                    comm
                ),
            };
            res.map_err(|e| Error::Io {
                path: t.path.clone(),
                source: e,
            })?;
        }
        Ok(())
    }

    /// Issue a batch of single pages (byte offsets, in submission order): runs of consecutive pages
    /// merge into one request up to the maximum size. `done[i]` gets page i's completion time.
    pub fn issue_batch(
        &mut self,
        kind: IoKind,
        region: Region,
        pages: &[u64],
        now: Nanos,
        comm: u16,
        done: &mut Vec<Nanos>,
    ) -> Result<()> {
        done.clear();
        let mut i = 0;
        while i < pages.len() {
            let j = run_end(pages.len(), i, self.max_req_pages, |j| {
                pages[j] == pages[j - 1] + 4096
            });
            let d = self.issue(kind, region, pages[i], (j - i) as u32, now, comm)?;
            done.extend(std::iter::repeat_n(d, j - i));
            i = j;
        }
        Ok(())
    }

    pub fn finish(&mut self) -> Result<()> {
        if let Some(t) = self.trace.as_mut() {
            t.out.flush().map_err(|e| Error::Io {
                path: t.path.clone(),
                source: e,
            })?;
        }
        Ok(())
    }
}

/// Where the run of pages starting at index `i` (of `len`) ends, exclusive: it takes page `j` while
/// `continues(j)` (page `j` follows page `j - 1`) and the run stays under `max` pages — one request.
pub fn run_end(len: usize, i: usize, max: u32, continues: impl Fn(usize) -> bool) -> usize {
    let mut j = i + 1;
    while j < len && continues(j) && ((j - i) as u32) < max {
        j += 1;
    }
    j
}

/// A swap-in that read units the device no longer holds: host data was lost (the swap layer only reads
/// slots whose pages it wrote out). The real system would crash or read zeroes.
fn lost_swap_data(offset: u64, pages: u32, units: u64) -> Error {
    Error::Invariant(format!(
        "host data lost: a swap-in read of {pages} page(s) at byte {offset} found {units} unit(s) the \
         device no longer holds — a TRIM or a swap-range invalidation hit pages the host still needed \
         (STRIM and CL-SDI need the clean-data handler, host.swap.clean_data_handler = true)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nandstack_device::{DeviceKind, DeviceStats};

    /// A device with unbounded internal parallelism: every command completes `LAT` after it arrives.
    struct FixedLatency;
    const LAT: u64 = 100_000;
    impl Device for FixedLatency {
        fn kind(&self) -> DeviceKind {
            DeviceKind::Block
        }
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
        fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
            self
        }
        fn capacity_bytes(&self) -> u64 {
            1 << 30
        }
        fn submit(&mut self, at: Nanos, _cmd: Command<'_>) -> Result<Completion> {
            Ok(Completion::at(Nanos(at.0 + LAT)))
        }
        fn stats(&self) -> DeviceStats {
            DeviceStats::default()
        }
        fn details(&self) -> serde_json::Value {
            serde_json::Value::Null
        }
        fn reset_counters(&mut self) {}
        fn enable_verification(&mut self) {}
        fn check_invariants(&self) -> Result<()> {
            Ok(())
        }
    }

    /// Completions of two one-page reads at t = 0 and a third at t = 50 µs, at queue depth `qd`.
    fn three_reads(qd: Option<u32>) -> (Vec<u64>, BlockLayer) {
        let mut io = BlockLayer::new(Box::new(FixedLatency), 128, None).unwrap();
        io.set_queue_depth(qd);
        let done = [(0, 0), (8192, 0), (65536, 50_000)]
            .iter()
            .map(|&(off, at)| {
                io.issue(IoKind::Read, Region::File, off, 1, Nanos(at), 0)
                    .unwrap()
                    .0
            })
            .collect();
        (done, io)
    }

    #[test]
    fn queue_depth_one_serialises_requests() {
        // Unlimited (the default): all three overlap, each completes 100 µs after it arrives.
        let (done, io) = three_reads(None);
        assert_eq!(done, vec![100_000, 100_000, 150_000]);
        assert_eq!((io.queue_waits, io.queue_wait_ns), (0, 0));
        assert_eq!(io.queue_depth(), None);
        // QD1 (eMMC 5.0): the second starts when the first completes (100 µs → done 200 µs); the third,
        // arriving at 50 µs, waits for the second (starts 200 µs → done 300 µs).
        let (done, io) = three_reads(Some(1));
        assert_eq!(done, vec![100_000, 200_000, 300_000]);
        assert_eq!(io.queue_waits, 2);
        assert_eq!(io.queue_wait_ns, 100_000 + 150_000);
        // Device latency counts from dispatch: every request spent 100 µs at the device.
        assert_eq!(io.latency[0].max(), LAT);
        // QD2: the first two overlap; the third waits for the earliest slot (free at 100 µs).
        let (done, io) = three_reads(Some(2));
        assert_eq!(done, vec![100_000, 100_000, 200_000]);
        assert_eq!((io.queue_waits, io.queue_wait_ns), (1, 50_000));
    }

    #[test]
    fn a_request_after_the_slot_frees_does_not_wait() {
        let mut io = BlockLayer::new(Box::new(FixedLatency), 128, None).unwrap();
        io.set_queue_depth(Some(1));
        assert_eq!(
            io.issue(IoKind::Write, Region::Swap, 0, 2, Nanos(0), 0)
                .unwrap()
                .0,
            100_000
        );
        assert_eq!(
            io.issue(IoKind::Write, Region::Swap, 8192, 2, Nanos(100_000), 0)
                .unwrap()
                .0,
            200_000
        );
        assert_eq!(io.queue_waits, 0);
    }
}
