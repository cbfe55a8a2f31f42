#!/usr/bin/env python3
"""Summarise a trace from trace-reclaim.sh: memcg reclaim invocations (how many write nothing, pages
written per invocation, the lowest priority reached, priority levels skipped),
`shrink_inactive_list` per priority (the host report's `reclaim.shrink_inactive_by_priority`), request
latency from issue to completion by the CPU that completed it, and memtouch's migrations between CPUs.
With the scheduler events of `trace-reclaim.sh --sched`: how long waking the idle loop worker takes (from
`sched_waking` on the waker's CPU to `sched_wakeup` in the IPI on the worker's idle CPU; its excess over
the median is `kswap::VCPU_WAKE_TAIL_US`), and on which CPU memtouch's wake-ups put the worker (split by
memtouch's and the worker's utilisation, their running shares decayed with PELT's 32 ms half-life, and
by whether the other CPU went idle less than 10 µs before).

    python3 tools/capture/analyze-trace.py OUT.trace.gz
"""

from __future__ import annotations

import collections
import gzip
import re
import sys

LINE = re.compile(r"^\s*(\S+)-\d+\s+\[(\d+)\]\s+\S+\s+(\d+\.\d+): (\w+): (.*)$")
RQ = re.compile(r"\S+ (\w+) (?:\d+ )?\(\) (\d+) \+ (\d+)")


# The host report's reclaim.shrink_inactive_by_priority figures, from the tracepoint's fields.
SHRINK_FIGURES = {
    "scanned": ("nr_scanned",),
    "reclaimed": ("nr_reclaimed",),
    "activated": ("nr_activate_anon", "nr_activate_file"),
    "ref_keep": ("nr_ref_keep",),
    "writeback": ("nr_writeback",),
}


HALF_LIFE_S = 0.032  # PELT's utilisation half-life


class Running:
    """Per task, whether it runs and its running share decayed with PELT's half-life; per CPU, since
    when it is idle (from `sched_switch`)."""

    def __init__(self) -> None:
        self.util: dict[str, float] = {}
        self.since: dict[str, float] = {}
        self.on: dict[str, int] = {}
        self.idle_since: dict[str, float | None] = {}

    def _update(self, pid: str, t: float) -> None:
        if pid in self.since:
            a = 0.5 ** ((t - self.since[pid]) / HALF_LIFE_S)
            self.util[pid] = self.util.get(pid, 0.0) * a + (1 - a) * self.on.get(pid, 0)
        self.since[pid] = t

    def switch(self, cpu: str, t: float, rest: str) -> None:
        prev_pid, next_comm, next_pid = SWITCH.search(rest).groups()
        for pid, on in ((prev_pid, 0), (next_pid, 1)):
            self._update(pid, t)
            self.on[pid] = on
        self.idle_since[cpu] = t if next_comm.startswith("swapper") else None

    def util_of(self, pid: str, t: float) -> float:
        self._update(pid, t)
        return self.util.get(pid, 0.0)


SWITCH = re.compile(r"prev_pid=(\d+) .*next_comm=(.+?) next_pid=(\d+)")


def quantile(v: list[float], q: float) -> float:
    return sorted(v)[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


def main(path: str) -> None:
    invocations: list[dict] = []
    current: dict | None = None
    issued: dict[tuple[str, str, str], float] = {}
    latency: dict[tuple[str, str], list[float]] = collections.defaultdict(list)
    issue_cpu: collections.Counter = collections.Counter()
    migrations = 0
    skips: collections.Counter = collections.Counter()
    by_priority: dict[int, collections.Counter] = collections.defaultdict(collections.Counter)
    waking: dict[str, tuple[float, str, str]] = {}  # worker pid -> (time, waker's CPU, worker's last CPU)
    wake_us: list[float] = []
    placed: collections.Counter = collections.Counter()  # (worker's last CPU, chosen CPU)
    running = Running()
    # Wake-ups of a worker last run on the other CPU: (low utilisation, other CPU idle < 10 µs) ->
    # [kept there, put on memtouch's CPU]
    packed: dict[tuple[bool, bool], list[int]] = collections.defaultdict(lambda: [0, 0])
    # The same for wake-ups not just after the other CPU went idle, by utilisation in twentieths.
    by_util: dict[int, list[int]] = collections.defaultdict(lambda: [0, 0])
    with gzip.open(path, "rt", errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            comm, cpu, t, event, rest = m.group(1), m.group(2), float(m.group(3)), m.group(4), m.group(5)
            if event == "mm_vmscan_memcg_reclaim_begin":
                current = {"written": 0, "priorities": []}
            elif event == "mm_vmscan_memcg_reclaim_end" and current is not None:
                invocations.append(current)
                current = None
            elif event == "mm_vmscan_lru_shrink_inactive" and current is not None:
                p = int(re.search(r"priority=(\d+)", rest).group(1))
                fields = dict(re.findall(r"(\w+)=(\d+)", rest))
                by_priority[p]["calls"] += 1
                for name, keys in SHRINK_FIGURES.items():
                    by_priority[p][name] += sum(int(fields.get(k, 0)) for k in keys)
                if current["priorities"] and current["priorities"][-1] - p > 1:
                    skips[(current["priorities"][-1], p)] += 1
                current["priorities"].append(p)
            elif event in ("block_rq_issue", "block_rq_complete"):
                r = RQ.search(rest)
                if not r:
                    continue
                rwbs, sector, n = r.groups()
                op = "D" if "D" in rwbs else ("W" if "W" in rwbs else "R")
                key = (op, sector, n)
                if event == "block_rq_issue":
                    issued[key] = t
                    if comm == "memtouch":
                        issue_cpu[cpu] += 1
                    if op == "W" and current is not None:
                        current["written"] += int(n) // 8
                elif key in issued:
                    latency[(op, cpu)].append(1e6 * (t - issued.pop(key)))
            elif event == "sched_migrate_task":
                migrations += 1
            elif event == "sched_switch":
                running.switch(cpu, t, rest)
            elif event in ("sched_waking", "sched_wakeup") and "comm=kworker/u" in rest:
                w = re.search(r"pid=(\d+) .*target_cpu=(\d+)", rest)
                if event == "sched_waking":
                    if comm == "memtouch":
                        me = re.match(r"\s*\S+-(\d+)", line).group(1)
                        util = running.util_of(me, t) + running.util_of(w.group(1), t)
                        idle = running.idle_since.get(w.group(2))
                        just_idle = idle is not None and t - idle < 10e-6
                        waking[w.group(1)] = (t, cpu, w.group(2), (util < 0.5, just_idle), util)
                elif w.group(1) in waking:
                    t0, waker_cpu, last, how, util = waking.pop(w.group(1))
                    placed[(last == waker_cpu, w.group(2) == waker_cpu)] += 1
                    if last != waker_cpu:
                        packed[how][w.group(2) == waker_cpu] += 1
                        if not how[1]:
                            by_util[min(int(util * 20), 39)][w.group(2) == waker_cpu] += 1
                    if comm == "<idle>" and cpu != waker_cpu:
                        wake_us.append(1e6 * (t - t0))
    n = len(invocations)
    if not n:
        print("no memcg reclaim invocation in the trace")
        return
    written = [i["written"] for i in invocations]
    lowest = collections.Counter(min(i["priorities"]) if i["priorities"] else -1 for i in invocations)
    print(
        f"reclaim invocations: {n}; writing nothing: {sum(w == 0 for w in written) / n:.0%}; "
        f"pages written per invocation: mean {sum(written) / n:.1f}, p90 {quantile(written, 0.9):.0f}, "
        f"max {max(written)}"
    )
    print("lowest priority reached:", dict(sorted(lowest.items(), reverse=True)))
    print("priority levels skipped (from, to): count:", dict(sorted(skips.items())))
    print("shrink_inactive_list per priority (as the host report's reclaim.shrink_inactive_by_priority):")
    for p in sorted(by_priority, reverse=True):
        print(f"  {p}: " + ", ".join(f"{k} {v}" for k, v in by_priority[p].items()))
    print(f"memtouch's requests issued on CPU: {dict(sorted(issue_cpu.items()))}; migrations: {migrations}")
    for (op, cpu), v in sorted(latency.items()):
        print(
            f"{op} completed on CPU {cpu}: {len(v)} requests, issue to completion "
            f"p50 {quantile(v, 0.5):.0f} µs, p90 {quantile(v, 0.9):.0f} µs, "
            f"over 1 ms {sum(x > 1000 for x in v)}"
        )
    if wake_us:
        qs = (0.5, 0.9, 0.99, 0.995, 0.999, 0.9995, 0.9999)
        print(
            f"waking the idle worker on the other CPU ({len(wake_us)} wake-ups), µs: "
            + ", ".join(f"p{100 * q:g} {quantile(wake_us, q):.0f}" for q in qs)
            + f", max {max(wake_us):.0f}"
        )
    if placed:
        for was_here in (False, True):
            n = placed[(was_here, False)] + placed[(was_here, True)]
            if n:
                print(
                    f"memtouch wakes the worker last run {'on its' if was_here else 'on another'} CPU: "
                    f"{n} times, put on memtouch's CPU {placed[(was_here, True)] / n:.1%}"
                )
        for (low, just_idle), (kept, moved) in sorted(packed.items(), reverse=True):
            print(
                f"  from the other CPU, memtouch + worker utilisation {'<' if low else '≥'} 0.5, "
                f"other CPU idle {'<' if just_idle else '≥'} 10 µs: {kept + moved} wake-ups, "
                f"put on memtouch's CPU {moved / (kept + moved):.1%}"
            )
        print(
            "  from the other CPU, other CPU idle ≥ 10 µs, by memtouch + worker utilisation "
            "(bins of 0.05 with 20+ wake-ups: put on memtouch's CPU / wake-ups): "
            + ", ".join(f"{b / 20:.2f}: {m}/{k + m}" for b, (k, m) in sorted(by_util.items()) if k + m >= 20)
        )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
