//! `fair`: a FLIN-like fairness scheduler (Tavakkol et al., ISCA 2018) for flows sharing dies.
//!
//! FLIN's first stage puts the transactions of low-intensity flows ahead of those of high-intensity
//! ones, and its second stage orders the rest to equalise the flows' slowdowns (time in the shared
//! device ÷ time the transaction would take if its flow ran alone). This policy does both, per die:
//! * a flow is low-intensity on a die when at most `low_per_epoch` of its transactions arrived there in
//!   the current epoch (`epoch_ns`, counted from t = 0);
//! * among ready host transactions, those of low-intensity flows go first (oldest first);
//! * otherwise the ready host transaction with the largest slowdown estimate goes: shared time =
//!   `now − arrival + service`, alone time = its service plus the service of the older waiting
//!   transactions of its own flow on the die (what it would wait behind if its flow were alone); ties
//!   to the oldest;
//! * GC work goes when no host transaction is ready (the GC rules of the engine still apply).
//!
//! Not modelled: FLIN's priority-class arbitration (the NVMe front end arbitrates submission queues) and
//! its GC wait balancing.

use super::{oldest_ready, Cand, Class, TxnScheduler};

#[derive(Clone)]
pub struct Fair {
    epoch_ns: u64,
    low_per_epoch: u32,
    /// Per die: the epoch counted, and (flow, arrivals in it) sorted by flow.
    counts: Vec<(u64, Vec<(u32, u32)>)>,
}

impl Fair {
    pub fn new(dies: u32, epoch_ns: u64, low_per_epoch: u32) -> Fair {
        Fair {
            epoch_ns: epoch_ns.max(1),
            low_per_epoch,
            counts: vec![(0, Vec::new()); dies as usize],
        }
    }

    /// Arrivals of `flow` at `die` in the epoch of `now`.
    fn intensity(&self, now: u64, die: u32, flow: u32) -> u32 {
        let (epoch, v) = &self.counts[die as usize];
        if *epoch != now / self.epoch_ns {
            return 0;
        }
        v.binary_search_by_key(&flow, |&(f, _)| f)
            .map_or(0, |i| v[i].1)
    }
}

impl TxnScheduler for Fair {
    fn name(&self) -> &'static str {
        "fair"
    }

    fn on_arrival(&mut self, now: u64, die: u32, flow: u32, class: Class) {
        if class == Class::Gc {
            return;
        }
        let epoch = now / self.epoch_ns;
        let (e, v) = &mut self.counts[die as usize];
        if *e != epoch {
            *e = epoch;
            v.clear();
        }
        match v.binary_search_by_key(&flow, |&(f, _)| f) {
            Ok(i) => v[i].1 += 1,
            Err(i) => v.insert(i, (flow, 1)),
        }
    }

    fn pick(&mut self, now: u64, die: u32, cands: &[Cand]) -> Option<usize> {
        let host = |c: &Cand| c.class != Class::Gc;
        if let Some(i) = oldest_ready(cands, |c| {
            host(c) && self.intensity(now, die, c.flow) <= self.low_per_epoch
        }) {
            return Some(i);
        }
        let mut best: Option<(f64, u64, usize)> = None;
        for (i, c) in cands.iter().enumerate() {
            if !(c.ready && host(c)) {
                continue;
            }
            let ahead: u64 = cands
                .iter()
                .filter(|o| o.flow == c.flow && o.seq < c.seq && host(o))
                .map(|o| o.service_ns)
                .sum();
            let alone = (c.service_ns + ahead).max(1) as f64;
            let shared = (now.saturating_sub(c.arrival_ns) + c.service_ns) as f64;
            let s = shared / alone;
            let better = match best {
                None => true,
                Some((bs, bseq, _)) => s > bs || (s == bs && c.seq < bseq),
            };
            if better {
                best = Some((s, c.seq, i));
            }
        }
        best.map(|(_, _, i)| i)
            .or_else(|| oldest_ready(cands, |c| c.class == Class::Gc))
    }
}
