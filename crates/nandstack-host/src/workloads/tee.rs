//! One reference stream read by several simulations in lockstep ([`tee`]).
//!
//! Runs that differ only below the workload (DISS's schemes, a platform's ablations) read the same
//! seeded stream, and generating it can be half of a run. A tee generates each chunk once and hands a
//! copy to every reader. A reader gets exactly the chunks the stream's own `fill` calls made, in
//! order, with the same end-of-stream flag — so a simulation reading through a tee does what it does on
//! the stream itself (its loop reacts to chunk boundaries, so the boundaries are kept too).
//!
//! Readers advance at their own pace; chunks stay until every reader has passed them. A reader may run
//! at most `window` chunks ahead of the slowest one: past that its [`RefStream::ready`] is false and its
//! simulation pauses (`Sim::step`) until the others catch up, which bounds the memory kept. A reader
//! that stops early (a run's limit) is [`detached`](TeeReader::detach) on drop.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use nandstack_core::Result;

use super::{MemRef, RefStream};

/// One `fill` call's output: its references and whether the stream had more.
struct Chunk {
    refs: Vec<MemRef>,
    more: bool,
}

struct Shared {
    source: Box<dyn RefStream>,
    /// Chunks `base ..` generated and not yet passed by every reader.
    chunks: VecDeque<Chunk>,
    base: u64,
    /// Each reader's next chunk; `None` once detached.
    next: Vec<Option<u64>>,
    /// The source's last fill said it had ended.
    ended: bool,
    window: u64,
}

impl Shared {
    fn slowest(&self) -> Option<u64> {
        self.next.iter().flatten().copied().min()
    }

    /// Drop the chunks every attached reader has passed.
    fn trim(&mut self) {
        let keep_from = self
            .slowest()
            .unwrap_or(self.base + self.chunks.len() as u64);
        while self.base < keep_from && !self.chunks.is_empty() {
            self.chunks.pop_front();
            self.base += 1;
        }
    }

    /// Whether reader `id` can take its next chunk now: generated already, the stream has ended (its
    /// fill returns nothing more), or within `window` chunks of the slowest reader.
    fn ready(&self, id: usize) -> bool {
        let Some(at) = self.next[id] else { return true };
        at < self.base + self.chunks.len() as u64
            || self.ended
            || at - self.slowest().unwrap_or(at) < self.window
    }
}

/// One reader of a tee: a [`RefStream`] like the source.
pub struct TeeReader {
    shared: Arc<Mutex<Shared>>,
    id: usize,
    len_hint: Option<u64>,
    /// `fill` of a reader whose chunk size differs from the first reader's would change the chunks.
    max: Option<usize>,
}

/// `readers` streams reading `source`'s chunks, each at most `window` (≥ 1) chunks ahead of the
/// slowest. Every reader must call `fill` with the same `max` (the tee checks).
pub fn tee(source: Box<dyn RefStream>, readers: usize, window: u64) -> Vec<TeeReader> {
    let len_hint = source.len_hint();
    let shared = Arc::new(Mutex::new(Shared {
        source,
        chunks: VecDeque::new(),
        base: 0,
        next: vec![Some(0); readers],
        ended: false,
        window: window.max(1),
    }));
    (0..readers)
        .map(|id| TeeReader {
            shared: shared.clone(),
            id,
            len_hint,
            max: None,
        })
        .collect()
}

impl TeeReader {
    fn lock(&self) -> MutexGuard<'_, Shared> {
        // Only this process's simulations hold it, one at a time; a panic leaves whole chunks.
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stop reading: the other readers no longer wait for this one.
    pub fn detach(&mut self) {
        let mut s = self.lock();
        s.next[self.id] = None;
        s.trim();
    }
}

impl Drop for TeeReader {
    fn drop(&mut self) {
        self.detach();
    }
}

impl RefStream for TeeReader {
    fn fill(&mut self, out: &mut Vec<MemRef>, max: usize) -> Result<bool> {
        if *self.max.get_or_insert(max) != max {
            return Err(nandstack_core::Error::Invariant(format!(
                "a tee's reader asked for {max} references after {:?}",
                self.max
            )));
        }
        let mut s = self.lock();
        let Some(at) = s.next[self.id] else {
            return Ok(false);
        };
        if at == s.base + s.chunks.len() as u64 {
            if s.ended {
                return Ok(false);
            }
            // The furthest reader generates the next chunk (its caller checked `ready`).
            let mut refs = Vec::with_capacity(max + 64);
            let more = s.source.fill(&mut refs, max)?;
            s.ended = !more;
            s.chunks.push_back(Chunk { refs, more });
        }
        let c = &s.chunks[(at - s.base) as usize];
        out.extend_from_slice(&c.refs);
        let more = c.more;
        s.next[self.id] = Some(at + 1);
        if at == s.base {
            s.trim();
        }
        Ok(more)
    }

    fn len_hint(&self) -> Option<u64> {
        self.len_hint
    }

    fn ready(&self) -> bool {
        self.lock().ready(self.id)
    }

    fn widen(&mut self) {
        let mut s = self.lock();
        s.window = s.window.saturating_mul(2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nandstack_core::Rng;

    /// A stream of `n` seeded references in fills of uneven sizes (some past `max`, as Mobile's are).
    struct Seeded {
        rng: Rng,
        left: u64,
    }
    impl RefStream for Seeded {
        fn fill(&mut self, out: &mut Vec<MemRef>, max: usize) -> Result<bool> {
            let n = self.rng.below(max as u64 + 40).min(self.left);
            for _ in 0..n {
                out.push(MemRef::read(self.rng.below(1000) as u32));
            }
            self.left -= n;
            Ok(self.left > 0)
        }
        fn len_hint(&self) -> Option<u64> {
            Some(self.left)
        }
    }

    fn seeded(seed: u64, left: u64) -> Box<Seeded> {
        Box::new(Seeded {
            rng: Rng::new(seed),
            left,
        })
    }

    fn chunks(s: &mut dyn RefStream) -> Vec<(Vec<MemRef>, bool)> {
        let mut out = Vec::new();
        loop {
            let mut buf = Vec::new();
            let more = s.fill(&mut buf, 64).unwrap();
            out.push((buf, more));
            if !more {
                return out;
            }
        }
    }

    /// Every reader, whatever the order they read in, gets the source's chunks and flags exactly; no
    /// reader gets ahead of the slowest by more than the window; chunks are freed behind the slowest.
    #[test]
    fn readers_get_the_sources_chunks_within_the_window() {
        let plain = chunks(seeded(5, 20_000).as_mut());
        for window in [1u64, 3, 16] {
            let mut readers = tee(seeded(5, 20_000), 3, window);
            let mut got = vec![Vec::new(); 3];
            let mut done = [false; 3];
            let mut order = Rng::new(window);
            while done.iter().any(|d| !d) {
                let r = order.below(3) as usize;
                if done[r] || !readers[r].ready() {
                    continue;
                }
                let mut buf = Vec::new();
                let more = readers[r].fill(&mut buf, 64).unwrap();
                got[r].push((buf, more));
                done[r] = !more;
                let s = readers[0].lock();
                let (lo, hi) = (s.slowest().unwrap_or(0), s.next.iter().flatten().max());
                assert!(hi.is_none_or(|&h| h - lo <= window), "window {window}");
                assert!(s.chunks.len() as u64 <= window + 1);
            }
            for g in &got {
                assert_eq!(g, &plain, "window {window}");
            }
        }
    }

    /// A detached reader no longer holds the others back; an ended stream keeps saying so.
    #[test]
    fn a_detached_reader_frees_the_others() {
        let mut readers = tee(seeded(9, 5_000), 2, 2);
        let mut buf = Vec::new();
        for _ in 0..2 {
            readers[0].fill(&mut buf, 64).unwrap();
        }
        assert!(
            !readers[0].ready(),
            "two chunks ahead of a reader that has read none"
        );
        readers[1].detach();
        assert!(readers[0].ready());
        while readers[0].fill(&mut buf, 64).unwrap() {}
        assert!(!readers[0].fill(&mut buf, 64).unwrap());
        assert!(readers[0].lock().chunks.is_empty());
        assert!(readers[0].fill(&mut buf, 32).is_err(), "another chunk size");
    }

    #[test]
    fn widening_lets_a_reader_further_ahead() {
        let mut readers = tee(seeded(3, 50_000), 2, 1);
        let mut buf = Vec::new();
        readers[0].fill(&mut buf, 64).unwrap();
        assert!(!readers[0].ready());
        readers[0].widen();
        assert!(readers[0].ready());
        readers[0].fill(&mut buf, 64).unwrap();
        assert!(!readers[0].ready());
    }
}
