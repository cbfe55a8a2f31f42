"""The 2 s memory-cgroup statistics flush of the kernel captures' machine (Linux 6.18), and the phases
at which the capture experiments run each program: shared by `kernel-swap`, `kernel-zswap` and
`kernel-zram` (and the same as kswap.rs's `STATS_FLUSH_MS` / `FLUSH_PHASES_MS`)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..sweep.spec import Task

if TYPE_CHECKING:
    from .._api import Result

#: Linux 6.18's memory-cgroup statistics flush period (`FLUSH_TIME`), ms: reclaim reads the statistics
#: of the last periodic flush (kswap::STATS_FLUSH_MS).
STATS_FLUSH_MS = 2000
#: The first-flush times each program runs at (`host.reclaim.stats_flush_first_ms`; kswap::FLUSH_PHASES_MS):
#: the default (one period) first. The kernel's flusher runs from boot, so every capture started somewhere
#: in its period, and a capture holds only a run that finished (the v1 memory controller OOM-kills some
#: runs under heavy thrashing; the zram captures' README says such runs were repeated). The comparison
#: takes, per figure, the median over the phases whose runs finish (`median_figures`) and reports the
#: model's range over them and the first that finished.
FLUSH_PHASES_MS = (STATS_FLUSH_MS, 500, 1000, 1500)
#: The engine's message when a cgroup's reclaim makes no progress (the kernel would OOM-kill the program).
OUT_OF_MEMORY = "out of memory at"


def first_finished(
    task_list: Sequence[Task], results: Sequence[Result | None]
) -> dict[str, tuple[Result, int, list[Result], list[int]]]:
    """Per program: the run at the first phase (in `FLUSH_PHASES_MS` order) that finished and its phase
    (ms into the period), every run that finished, and the phases whose runs ran out of memory."""
    runs: dict[str, list[tuple[int, Result | None]]] = {}
    order = {phase % STATS_FLUSH_MS: i for i, phase in enumerate(FLUSH_PHASES_MS)}
    for task, result in zip(task_list, results):
        phase = int(task.params.get("flush_phase_ms", 0))
        runs.setdefault(task.params["program"], []).append((phase, result))
    out = {}
    for program, rs in runs.items():
        rs.sort(key=lambda r: order.get(r[0], len(order)))
        done = [(p, r) for p, r in rs if r is not None]
        if done:
            out[program] = (done[0][1], done[0][0], [r for _, r in done], [p for p, r in rs if r is None])
    return out


def phases_text() -> str:
    """The phases, ms into the period, in the order they are tried: "0, 500, 1000, 1500"."""
    return ", ".join(str(p % STATS_FLUSH_MS) for p in FLUSH_PHASES_MS)


def phase_params(program: str, phase_ms: int) -> dict[str, object]:
    """The parameters of `program`'s run with the first flush at `phase_ms`: it may end out of memory."""
    return {
        "program": program,
        "flush_phase_ms": phase_ms % STATS_FLUSH_MS,
        "seed": 1,
        "may_end_with": OUT_OF_MEMORY,
    }


def median_figures(per_phase: Sequence[dict[str, float]]) -> dict[str, float]:
    """The model's side of a capture comparison: per figure, the median over the phases whose runs
    finished (kswap::median_figures)."""
    return {k: statistics.median(p[k] for p in per_phase) for k in per_phase[0]}


def phase_note(oom: dict[str, list[int]], never: Sequence[str]) -> str:
    """A sentence for a report: the phases run, that the median over those that finished is compared,
    which programs ran out of memory where."""
    text = (
        f" Each program ran at {len(FLUSH_PHASES_MS)} phases of the {STATS_FLUSH_MS / 1000:g} s statistics "
        f"flush ({phases_text()} ms); the model's figures are, per figure, the median over the phases "
        "whose runs finished."
    )
    if oom:
        text += (
            " Ran out of memory (as the v1 memory controller does under thrashing) at: "
            + "; ".join(f"{p} {', '.join(f'{x} ms' for x in phases)}" for p, phases in sorted(oom.items()))
            + "."
        )
    if never:
        text += " Out of memory at every phase: " + ", ".join(never) + "."
    return text
