//! Real time: device time is tied to wall time. The device clock reads `wall elapsed ÷ time_scale`
//! since the daemon started; a request the model completes at device time `d` is answered at wall time
//! `d × time_scale`. Replies wait in a heap on a responder thread, so requests the model runs in
//! parallel (other dies, other channels) are answered in parallel, in completion order. How late each
//! reply left (scheduling, the FUSE thread being busy) is the lag, reported, never hidden.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fuser::{ReplyData, ReplyEmpty, ReplyWrite};
use nandstack_core::Histogram;

#[derive(Copy, Clone)]
pub struct Clock {
    pub t0: Instant,
    pub time_scale: f64,
}

impl Clock {
    /// Device time now, ns.
    pub fn device_now(&self) -> u64 {
        (self.t0.elapsed().as_nanos() as f64 / self.time_scale) as u64
    }
    /// The wall instant at which device time `ns` falls.
    pub fn wall_at(&self, ns: u64) -> Instant {
        self.t0 + Duration::from_nanos((ns as f64 * self.time_scale) as u64)
    }
}

pub enum Reply {
    Data(ReplyData, Vec<u8>),
    Written(ReplyWrite, u32),
    Done(ReplyEmpty),
}

impl Reply {
    pub fn send(self) {
        match self {
            Reply::Data(r, d) => r.data(&d),
            Reply::Written(r, n) => r.written(n),
            Reply::Done(r) => r.ok(),
        }
    }
}

pub struct Pending {
    pub due: Instant,
    pub seq: u64,
    pub reply: Reply,
}

/// Lateness of the replies, ns (the measured window only: reset with the counters).
#[derive(Clone, Default)]
pub struct LagStats {
    pub hist: Histogram,
    pub late_over_1ms: u64,
}

pub type Lag = Arc<Mutex<LagStats>>;

/// Answer each pending reply at its due time; when the channel closes, answer the rest at once.
pub fn respond(rx: Receiver<Pending>, lag: Lag) {
    let mut heap: BinaryHeap<Reverse<(Instant, u64)>> = BinaryHeap::new();
    let mut waiting: std::collections::BTreeMap<u64, Reply> = std::collections::BTreeMap::new();
    let mut open = true;
    while open || !heap.is_empty() {
        let got = match heap.peek() {
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(Reverse((due, _))) if open => {
                rx.recv_timeout(due.saturating_duration_since(Instant::now()))
            }
            Some(_) => Err(RecvTimeoutError::Timeout),
        };
        match got {
            Ok(p) => {
                heap.push(Reverse((p.due, p.seq)));
                waiting.insert(p.seq, p.reply);
            }
            Err(RecvTimeoutError::Disconnected) => open = false,
            Err(RecvTimeoutError::Timeout) => {}
        }
        let now = Instant::now();
        while let Some(&Reverse((due, seq))) = heap.peek() {
            if due > now && open {
                break;
            }
            heap.pop();
            if let Some(r) = waiting.remove(&seq) {
                r.send();
            }
            let late = Instant::now().saturating_duration_since(due).as_nanos() as u64;
            if let Ok(mut l) = lag.lock() {
                l.hist.record(late);
                l.late_over_1ms += u64::from(late > 1_000_000);
            }
        }
    }
}
