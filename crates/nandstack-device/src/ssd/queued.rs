//! `BlockSsd` through the queued engine: commands are accepted at a time, their flash transactions
//! queued, and completions come out as the device's clock advances (`Device::enqueue` / `advance`).
//! With the direct engine every command is placed at once (`schedule.rs`) and this file only chooses.
//!
//! The idle detector of background GC is a timer here: when no host command has been in flight for
//! `idle_threshold_us`, the controller collects one victim (its transactions queued like any other's;
//! semi-preemptible when `gc_preemption` is on, so host commands that arrive meanwhile go first), then
//! the next one when that is done and the device is still idle, until free blocks reach the target.

use nandstack_core::{Error, Result};

use super::engine::{CmdSpec, GcPageMoves};
use super::{BlockSsd, ControllerConfig};
use crate::device::{Command, Completion, ExtCommand, Tag};
use crate::ftl::Migration;

/// A command placed through the queued engine has no completion time yet.
const PENDING: u64 = u64::MAX;
/// The tag of a command submitted synchronously to a queued device.
const SYNC: Tag = Tag {
    id: u64::MAX,
    flow: u32::MAX,
};

/// Whether GC moves pages by copyback (no channel), from `gc_page_moves` and the migration target.
pub(super) fn copyback(cfg: &ControllerConfig, migration: Migration) -> Result<bool> {
    match (cfg.gc_page_moves, migration) {
        (GcPageMoves::Auto, m) => Ok(m == Migration::SamePlane),
        (GcPageMoves::Controller, _) => Ok(false),
        (GcPageMoves::Copyback, Migration::SamePlane) => Ok(true),
        (GcPageMoves::Copyback, Migration::AnyPlane) => Err(Error::config(
            "device.controller.gc_page_moves",
            "copyback keeps a page in its plane, but device.ftl.gc.migration = \"any_plane\" moves it \
             to another; use \"controller\" or \"same_plane\"",
        )),
    }
}

impl BlockSsd {
    /// Place the operations the FTL just recorded for a command whose flash work may start at `ready`:
    /// it completes when its operations are (programs only if `wait`), no earlier than `min_done`, plus
    /// `post_ns`. Direct engine: the completion time; queued engine: `PENDING`.
    pub(super) fn place(&mut self, ready: u64, wait: bool, min_done: u64, post_ns: u64) -> u64 {
        let Some(eng) = self.engine.as_mut() else {
            return self.schedule(ready, wait).max(min_done) + post_ns;
        };
        let tl = self.timelines.as_mut().expect("the queued engine is timed");
        self.ftl.drain_ops(&mut self.ops);
        let (tag, host) = self.cur.unwrap_or((None, true));
        let spec = CmdSpec {
            tag,
            flow: tag.map_or(0, |t| t.flow),
            wait_for_programs: wait,
            min_done,
            post_ns,
            host,
        };
        let ftl = &self.ftl;
        eng.submit(tl, ready, &self.ops, spec, &|p| ftl.free_blocks_in_plane(p));
        PENDING
    }

    /// The direct engine's record of when host work last finished (the idle detector's start).
    pub(super) fn note_done(&mut self, done: u64) {
        if self.engine.is_none() {
            self.busy_until = self.busy_until.max(done);
        }
    }

    pub(crate) fn is_queued(&self) -> bool {
        self.engine.is_some()
    }
    pub(crate) fn stash_is_empty(&self) -> bool {
        self.stash.is_empty()
    }
    /// The queued engine's clock (0 for the direct engine).
    pub(crate) fn now_ns(&self) -> u64 {
        self.engine.as_ref().map_or(0, |e| e.now())
    }

    /// The queued engine's counters and scheduler, for the summary.
    pub fn scheduling_report(&self) -> Option<(&'static str, super::EngineCounters)> {
        self.engine
            .as_ref()
            .map(|e| (e.scheduler_name(), e.counters.clone()))
    }

    /// Accept a host command at `at` (queued engine).
    pub(crate) fn enqueue_cmd(&mut self, at: u64, cmd: Command<'_>, tag: Tag) -> Result<()> {
        let now = self.engine.as_ref().expect("queued").now();
        if at < now {
            return Err(Error::Invariant(format!(
                "a command submitted at {at} ns to a queued device whose clock is at {now} ns"
            )));
        }
        self.run_until(at)?;
        self.cur = Some((Some(tag), true));
        self.bg_gave_up = None;
        let r = match cmd {
            Command::Read { offset, len } => self.read(offset, len, at),
            Command::Write { offset, len, .. } => self.write(offset, len, at),
            Command::Trim { offset, len } => self.trim(offset, len, at),
            Command::Flush => self.flush(at),
            Command::Ext(ExtCommand::RegisterSwapRange { offset, len }) => {
                self.register_swap_range(offset, len, at)
            }
            other => Err(crate::device::unsupported(crate::DeviceKind::Block, &other)),
        };
        self.cur = None;
        // A command with nothing to wait for completes at once (inside `submit`).
        self.engine
            .as_mut()
            .expect("queued")
            .drain_completions(&mut self.stash);
        r.map(|_| ())
    }

    /// When background GC wants to run next (the idle detector), if it does.
    fn idle_timer(&self) -> Option<u64> {
        let bg = &self.cfg.background_gc;
        let e = self.engine.as_ref()?;
        if !bg.enabled || e.background_busy() {
            return None;
        }
        let since = e.host_idle_since()?;
        if self.bg_gave_up == Some(since) {
            return None;
        }
        Some((since + super::engine::config::ns(bg.idle_threshold_us)).max(e.now()))
    }

    /// The next internal event (engine or idle detector).
    pub(crate) fn next_internal(&self) -> Option<u64> {
        let e = self.engine.as_ref()?.next_event();
        match (e, self.idle_timer()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Run the engine and the idle detector up to and including `until`.
    pub(crate) fn run_until(&mut self, until: u64) -> Result<()> {
        loop {
            match self.idle_timer() {
                Some(t) if t <= until => {
                    let tl = self.timelines.as_mut().expect("timed");
                    self.engine.as_mut().expect("queued").advance(tl, t);
                    if self.idle_timer() != Some(t) {
                        continue; // a command finished at t: the idle period moved
                    }
                    if self.ftl.background_collect(self.bg_target)? {
                        self.cur = Some((None, false));
                        self.place(t, true, 0, 0);
                        self.cur = None;
                        let e = self.engine.as_mut().expect("queued");
                        e.counters.background_gc_commands += 1;
                    } else {
                        let e = self.engine.as_ref().expect("queued");
                        self.bg_gave_up = e.host_idle_since();
                    }
                }
                _ => {
                    let tl = self.timelines.as_mut().expect("timed");
                    self.engine.as_mut().expect("queued").advance(tl, until);
                    break;
                }
            }
        }
        self.engine
            .as_mut()
            .expect("queued")
            .drain_completions(&mut self.stash);
        Ok(())
    }

    /// Hand over the completions collected so far.
    pub(crate) fn take_completions(&mut self, out: &mut Vec<(Tag, Completion)>) {
        out.extend(
            self.stash
                .drain(..)
                .map(|(t, d)| (t, Completion::at(nandstack_core::Nanos(d)))),
        );
    }

    /// `Device::submit` on a queued device: accept the command (not before the device's clock) and run
    /// the device until it completes.
    pub(crate) fn submit_sync(&mut self, at: u64, cmd: Command<'_>) -> Result<u64> {
        let at = at.max(self.engine.as_ref().expect("queued").now());
        self.enqueue_cmd(at, cmd, SYNC)?;
        loop {
            if let Some(i) = self.stash.iter().position(|(t, _)| *t == SYNC) {
                return Ok(self.stash.remove(i).1);
            }
            let next = self.next_internal().ok_or_else(|| {
                #[cfg(test)]
                eprintln!("{}", self.engine.as_ref().expect("queued").dump());
                Error::Invariant("a queued command never completed (nothing left to run)".into())
            })?;
            self.run_until(next)?;
        }
    }
}
