//! From a command's recorded flash operations to transactions with dependencies (the rules are listed in
//! the module documentation of `engine/mod.rs`; they are `ssd/schedule.rs`'s, as a graph).

use nandstack_core::MAPPING_UNIT_BYTES;

use super::sched::Class;
use super::{Cmd, CmdSpec, Engine, Ev, Kind, St, Txn, NONE};
use crate::ftl::ops::{FlashOp, OpCause, OpKind};
use crate::nand::Timelines;

/// "Every member added so far": a chain of joins, extended only when new members were added since the
/// last join was made (so each dependent costs one edge).
#[derive(Default)]
struct Barrier {
    join: Option<u32>,
    fresh: Vec<u32>,
}

impl Barrier {
    fn add(&mut self, t: u32) {
        self.fresh.push(t);
    }
    fn get(&mut self, eng: &mut Engine, cmd: u32) -> u32 {
        if self.fresh.is_empty() {
            return self.join.unwrap_or(NONE);
        }
        let j = eng.new_txn(Kind::Join, Class::Gc, NONE, NONE, 0, 0, cmd, 0);
        if let Some(prev) = self.join {
            eng.depend(j, prev);
        }
        for &m in &self.fresh {
            eng.depend(j, m);
        }
        self.fresh.clear();
        self.join = Some(j);
        j
    }
}

impl Engine {
    #[allow(clippy::too_many_arguments)]
    fn new_txn(
        &mut self,
        kind: Kind,
        class: Class,
        plane: u32,
        block: u32,
        page: u32,
        bytes: u64,
        cmd: u32,
        flow: u32,
    ) -> u32 {
        self.seq += 1;
        self.alloc_txn(Txn {
            kind,
            class,
            st: St::Waiting,
            plane,
            block,
            page,
            bytes,
            cmd,
            flow,
            seq: self.seq,
            waiting: 0,
            out: Vec::new(),
            tracked: false,
            prio_gc: false,
            urgent: false,
            plane_xfer: false,
        })
    }

    /// Queue a die operation: order it after the pending operations of its block that it must follow.
    fn enqueue_die_op(&mut self, id: u32) {
        let (kind, block, page, plane, flow, class) = {
            let t = &self.txns[id as usize];
            (t.kind, t.block, t.page, t.plane, t.flow, t.class)
        };
        if block != NONE {
            let q = std::mem::take(&mut self.block_q[block as usize]);
            match kind {
                Kind::Program => {
                    if let Some(&p) = q.iter().rev().find(|&&x| {
                        matches!(self.txns[x as usize].kind, Kind::Program | Kind::Erase)
                    }) {
                        self.depend(id, p);
                    }
                }
                Kind::Read => {
                    if let Some(&p) = q.iter().rev().find(|&&x| {
                        let o = &self.txns[x as usize];
                        o.kind == Kind::Program && o.page == page
                    }) {
                        self.depend(id, p);
                    }
                }
                _ => {
                    for &p in &q {
                        self.depend(id, p);
                    }
                    self.pending_erases[plane as usize] += 1;
                }
            }
            let mut q = q;
            q.push(id);
            self.block_q[block as usize] = q;
        }
        let d = self.array_of(plane);
        self.dies[d as usize].pending.push(id);
        self.sched.on_arrival(self.now, d, flow, class);
    }

    /// A program into `plane` waits for every transfer into it since its last program.
    fn after_plane_xfers(&mut self, id: u32, plane: u32) {
        let xs = std::mem::take(&mut self.plane_xfers[plane as usize]);
        for &x in &xs {
            self.depend(id, x);
            self.txns[x as usize].plane_xfer = false;
        }
        let mut xs = xs;
        xs.clear();
        self.plane_xfers[plane as usize] = xs;
    }

    /// Whether GC erasing in these planes is urgent: some plane would have at most
    /// `urgent_free_blocks` free blocks once the queued erases (these included) are counted.
    fn gc_urgent(&self, ops: &[FlashOp], free_in_plane: &dyn Fn(u32) -> u32) -> bool {
        let mut planes: Vec<(u32, u32)> = Vec::new();
        for op in ops.iter().filter(|o| o.kind == OpKind::Erase) {
            match planes.iter_mut().find(|(p, _)| *p == op.plane) {
                Some((_, n)) => *n += 1,
                None => planes.push((op.plane, 1)),
            }
        }
        planes.iter().any(|&(p, n)| {
            free_in_plane(p).saturating_sub(self.pending_erases[p as usize] + n)
                <= self.urgent_free_blocks
        })
    }

    /// Queue the operations of one command that arrives now and whose flash work may start at `ready`.
    pub(crate) fn submit(
        &mut self,
        tl: &mut Timelines,
        ready: u64,
        ops: &[FlashOp],
        spec: CmdSpec,
        free_in_plane: &dyn Fn(u32) -> u32,
    ) {
        let ready = ready.max(self.now);
        let has_gc = ops
            .iter()
            .any(|o| matches!(o.cause, OpCause::Gc | OpCause::WearLeveling));
        let urgent = has_gc && self.preemptible && self.gc_urgent(ops, free_in_plane);
        // Semi-preemptible GC that is not urgent: host work goes first and the write does not wait.
        let soft_gc = has_gc && self.preemptible && !urgent;
        self.counters.preemptible_gc_commands += u64::from(soft_gc);
        self.counters.urgent_gc_commands += u64::from(urgent);
        let cmd = self.alloc_cmd(Cmd {
            tag: spec.tag,
            outstanding: 0,
            min_done: spec.min_done,
            post_ns: spec.post_ns,
            arrival_ns: self.now,
            last_ns: ready,
            host: spec.host,
        });
        if spec.host {
            self.live_host += 1;
        } else {
            self.live_background += 1;
        }
        let flow = spec.flow;
        let gate = self.new_txn(Kind::Join, Class::Gc, NONE, NONE, 0, 0, cmd, flow);
        let (mut gc_data, mut gc_end, mut rmw) =
            (Barrier::default(), Barrier::default(), Barrier::default());
        let mut dep = NONE; // the last mapping read (each waits for the one before)
        let mut map_xfer = NONE;
        let page = self.page_bytes;
        for op in ops {
            let (p, b, pg) = (op.plane, op.block, op.page);
            let gc = matches!(op.cause, OpCause::Gc | OpCause::WearLeveling);
            let (id, tracked) = match (op.kind, gc, op.cause) {
                (OpKind::Read, true, _) => {
                    let out = if self.copyback { 0 } else { page };
                    let t = self.new_txn(Kind::Read, Class::Gc, p, b, pg, out, cmd, flow);
                    self.depend(t, dep);
                    gc_data.add(t);
                    gc_end.add(t);
                    (t, !soft_gc)
                }
                (OpKind::Program, true, _) => {
                    let data = gc_data.get(self, cmd);
                    let t = self.new_txn(Kind::Program, Class::Gc, p, b, pg, 0, cmd, flow);
                    if self.copyback {
                        self.depend(t, data);
                    } else {
                        let x = self.new_txn(Kind::Xfer, Class::Gc, p, NONE, 0, page, cmd, flow);
                        self.depend(x, gate);
                        self.depend(x, data);
                        if !soft_gc {
                            self.txns[x as usize].tracked = true;
                            self.cmds[cmd as usize].outstanding += 1;
                        }
                        self.depend(t, x);
                    }
                    self.after_plane_xfers(t, p);
                    gc_end.add(t);
                    (t, !soft_gc)
                }
                (OpKind::Erase, _, _) => {
                    let data = gc_data.get(self, cmd);
                    let t = self.new_txn(Kind::Erase, Class::Gc, p, b, pg, 0, cmd, flow);
                    self.depend(t, data);
                    gc_end.add(t);
                    (t, !soft_gc)
                }
                (OpKind::Read, false, OpCause::Translation) => {
                    let bytes = MAPPING_UNIT_BYTES.min(page);
                    let t = self.new_txn(Kind::Read, Class::Read, p, NONE, pg, bytes, cmd, flow);
                    self.depend(t, dep);
                    dep = t;
                    (t, true)
                }
                (OpKind::Transfer, false, OpCause::Translation) => {
                    let t = self.new_txn(Kind::Xfer, Class::Write, p, NONE, 0, page, cmd, flow);
                    self.depend(t, dep);
                    map_xfer = t;
                    (t, false)
                }
                (OpKind::Program, false, OpCause::Translation) => {
                    let t = self.new_txn(Kind::Program, Class::Write, p, NONE, pg, 0, cmd, flow);
                    self.depend(t, map_xfer);
                    (t, false)
                }
                (OpKind::Read, false, cause) => {
                    let bytes = op.units as u64 * MAPPING_UNIT_BYTES;
                    let t = self.new_txn(Kind::Read, Class::Read, p, b, pg, bytes, cmd, flow);
                    self.depend(t, dep);
                    if cause == OpCause::ReadModifyWrite {
                        rmw.add(t);
                    }
                    (t, true)
                }
                (OpKind::Transfer, _, _) => {
                    let t = self.new_txn(
                        Kind::Xfer,
                        Class::Write,
                        p,
                        NONE,
                        0,
                        MAPPING_UNIT_BYTES,
                        cmd,
                        flow,
                    );
                    if !soft_gc {
                        let g = gc_end.get(self, cmd);
                        self.depend(t, g);
                    }
                    let r = rmw.get(self, cmd);
                    self.depend(t, r);
                    self.depend(t, dep);
                    self.txns[t as usize].plane_xfer = true;
                    self.plane_xfers[p as usize].push(t);
                    (t, true)
                }
                (OpKind::Program, false, _) => {
                    let t = self.new_txn(Kind::Program, Class::Write, p, b, pg, 0, cmd, flow);
                    self.after_plane_xfers(t, p);
                    if !soft_gc {
                        let g = gc_end.get(self, cmd);
                        self.depend(t, g);
                    }
                    (t, spec.wait_for_programs)
                }
            };
            self.depend(id, gate);
            if gc {
                let tx = &mut self.txns[id as usize];
                tx.prio_gc = !soft_gc;
                tx.urgent = urgent;
            }
            if tracked {
                self.txns[id as usize].tracked = true;
                self.cmds[cmd as usize].outstanding += 1;
            }
            if self.txns[id as usize].kind != Kind::Xfer {
                self.enqueue_die_op(id);
            }
        }
        if self.cmds[cmd as usize].outstanding == 0 {
            // Nothing on flash to wait for: done at the gate (or its lower bound / post time).
            self.cmds[cmd as usize].outstanding = 1;
            self.txns[gate as usize].tracked = true;
        }
        if ready > self.now {
            self.push(ready, Ev::Gate(gate));
        } else {
            self.complete(tl, gate);
            self.flush_dirty(tl);
        }
    }
}
