//! Time series sampled every `run.interval_sim_seconds` (default 100 ms) of simulated time: swap space used, swap I/O and
//! faults in the interval, free RAM, the device's writes (host interface and flash, in 4 KiB pages: their
//! ratio is the interval's WAF), and per cgroup its usage, LRU list sizes and swap bandwidth.

use nandstack_host::host::Host;

/// At most this many points are kept.
pub const MAX_POINTS: usize = 100_000;

#[derive(Clone, Debug, Default)]
pub struct CgSeries {
    pub usage_pages: Vec<u64>,
    pub swap_read_mib_per_s: Vec<f64>,
    pub swap_write_mib_per_s: Vec<f64>,
    /// The cgroup's LRU list sizes (inactive anon, active anon, inactive file, active file), exact.
    pub lru_pages: [Vec<u64>; 4],
    /// Cumulative reclaim events (diagnostics; not in the report): `workingset_refault_anon`,
    /// `workingset_activate_anon`, `pgactivate`, `pgdeactivate`.
    pub events: [Vec<u64>; 4],
    last_read: u64,
    last_write: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Series {
    pub interval_ns: u64,
    next_ns: u64,
    last_ns: u64,
    pub t_ms: Vec<f64>,
    pub swap_used_pages: Vec<u64>,
    pub pswpin: Vec<u64>,
    pub pswpout: Vec<u64>,
    pub major_faults: Vec<u64>,
    pub minor_faults: Vec<u64>,
    pub free_pages: Vec<u64>,
    /// 4 KiB pages written to the device (swap-outs, file writeback, a host GC's copies).
    pub device_write_pages: Vec<u64>,
    /// Flash programs in 4 KiB pages (every cause: the device's GC, padding).
    pub flash_write_pages: Vec<u64>,
    pub cgroups: Vec<CgSeries>,
    last: [u64; 4],
    last_dev: [u64; 2],
}

impl Series {
    pub fn new(interval_ns: u64, cgroups: usize) -> Series {
        Series {
            interval_ns: interval_ns.max(1),
            next_ns: interval_ns.max(1),
            cgroups: vec![CgSeries::default(); cgroups],
            ..Series::default()
        }
    }

    /// Record a point if an interval has passed (or `force`, at the end).
    pub fn sample(&mut self, now: u64, h: &Host, force: bool) {
        if (now < self.next_ns && !force) || self.t_ms.len() >= MAX_POINTS || now <= self.last_ns {
            return;
        }
        let dt = (now - self.last_ns) as f64 / 1e9;
        self.last_ns = now;
        self.next_ns = (now / self.interval_ns + 1) * self.interval_ns;
        let s = &h.stats;
        let major = s.faults[0] + s.faults[3];
        let minor = s.faults[1] + s.faults[2] + s.faults[4];
        let cur = [s.pswpin, s.pswpout, major, minor];
        self.t_ms.push(now as f64 / 1e6);
        self.swap_used_pages.push(h.swap.used);
        self.pswpin.push(cur[0] - self.last[0]);
        self.pswpout.push(cur[1] - self.last[1]);
        self.major_faults.push(cur[2] - self.last[2]);
        self.minor_faults.push(cur[3] - self.last[3]);
        self.free_pages.push(h.vm.free_pages());
        self.last = cur;
        let d = h.io.dev.stats();
        let dev = [
            d.host_write_bytes / 4096,
            d.flash_program_pages * d.page_size_bytes / 4096,
        ];
        self.device_write_pages.push(dev[0] - self.last_dev[0]);
        self.flash_write_pages.push(dev[1] - self.last_dev[1]);
        self.last_dev = dev;
        for (c, m) in self.cgroups.iter_mut().zip(&h.vm.memcgs) {
            c.usage_pages.push(m.usage);
            for (l, v) in c.lru_pages.iter_mut().enumerate() {
                v.push(m.lru_len(l as u8));
            }
            let ev = [
                m.stats.workingset_refault_anon,
                m.stats.workingset_activate_anon,
                m.stats.pgactivate,
                m.stats.pgdeactivate,
            ];
            for (v, e) in c.events.iter_mut().zip(ev) {
                v.push(e);
            }
            let (r, w) = (m.stats.swap_read_bytes, m.stats.swap_write_bytes);
            c.swap_read_mib_per_s
                .push((r - c.last_read) as f64 / 1048576.0 / dt.max(1e-12));
            c.swap_write_mib_per_s
                .push((w - c.last_write) as f64 / 1048576.0 / dt.max(1e-12));
            c.last_read = r;
            c.last_write = w;
        }
    }
}
