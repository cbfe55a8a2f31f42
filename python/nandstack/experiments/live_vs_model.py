"""live-vs-model: memtouch programs of the kernel-swap captures' shapes, run live (the real kernel swapping
onto the simulated drive, `nandstack live`, docs/live.md) and through the host model on the same drive;
pages out/in and request sizes side by side, with verdicts.

The model runs are the experiment's tasks (pure simulations, like any experiment's); the live runs need
root, FUSE, loop devices and a memory cgroup, and happen in the analysis, one after another (each sets up
and tears down its own swap), after a check that the machine can run them.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..sweep.spec import Task
from .base import Analysis, Experiment, Table, config_task

if TYPE_CHECKING:
    from .._api import Result

PRESET = "block-tlc-consumer"
SWAP_MIB = 512
#: (program, pages, pattern, write %, memory limit MiB): the kernel-swap captures' shapes
#: (../shared/traces/kernel-swap/README.md), with fewer accesses so that each live run takes seconds.
PROGRAMS: tuple[tuple[str, int, str, int, int], ...] = (
    ("uniform_w50", 32768, "uniform", 50, 64),
    ("normal_w50", 32768, "normal", 50, 64),
    ("hot_w100", 32768, "hot", 100, 64),
    ("uniform_r100", 32768, "uniform", 0, 64),
    ("seq_w100", 32768, "seq", 100, 64),
    ("uniform_w50_l32", 16384, "uniform", 50, 32),
)
QUICK = ("uniform_w50", "hot_w100")
#: The loop device over the daemon's FUSE file as Linux 6.18 sets it up: non-rotational, requests up to
#: 1280 KiB (`max_sectors_kb`); the model gets the same, and the analysis checks each live run's.
LOOP_QUEUE = {"swap_solid_state": True, "max_request_kib": 1280}
OPS, QUICK_OPS, SEED = 100_000, 50_000, 11
#: Volumes within 15% (the issue's bar for --compare), mean pages per request within 25% (kernel-swap's).
TOLERANCE = {"pswpout": 0.15, "pswpin": 0.15, "write_pages_mean": 0.25, "read_pages_mean": 0.25}


def _device() -> dict[str, Any]:
    from .. import _toml
    from .._core import preset_toml

    return {k: v for k, v in _toml.loads(preset_toml(PRESET)).items() if k in ("seed", "device")}


def _argv(pages: int, pattern: str, write_pct: int, quick: bool) -> list[str]:
    return ["memtouch", str(pages), str(QUICK_OPS if quick else OPS), pattern, str(write_pct), str(SEED)]


def tasks(quick: bool) -> list[Task]:
    from .._live_compare import model_config

    out = []
    for name, pages, pattern, write_pct, limit in PROGRAMS:
        if quick and name not in QUICK:
            continue
        argv = _argv(pages, pattern, write_pct, quick)
        config = model_config(_device(), argv, limit, SWAP_MIB, LOOP_QUEUE)
        out.append(config_task(config, {"program": name, "limit_mib": limit, "argv": " ".join(argv)}))
    return out


def live_figures(task: Task) -> dict[str, Any]:
    """Run the task's program live (root) on the same drive; the kernel's figures and the run's checks."""
    from .. import _cli_live, live

    argv = task.params["argv"].split()
    argv[0] = str(_cli_live.memtouch_binary())
    plan = _cli_live.Plan(_cli_live.checked_config(_device()), argv, int(task.params["limit_mib"]), SWAP_MIB)
    with tempfile.TemporaryDirectory(prefix="nandstack-live-vs-model-") as d, live.stop_signals():
        summary = _cli_live.run_live(plan, Path(d))
        figures = _cli_live.kernel_side(Path(d))
    k = summary["kernel"]
    return {
        **figures,
        "exit_status": summary["command"]["exit_status"],
        "written_over_pswpout": k["written_over_pswpout"],
        "queue": {q: k[q] for q in LOOP_QUEUE},
        "wall_seconds": summary["command"]["wall_seconds"],
    }


def analyze(task_list: list[Task], results: Sequence[Result | None]) -> Analysis:
    import polars as pl

    from .. import live
    from .kernel_swap import model_figures

    live.preflight()
    rows, failed, notes = [], [], []
    for task, result in zip(task_list, results):
        if result is None:
            failed.append(task.params["program"])
            continue
        model, kernel = model_figures(result.summary), live_figures(task)
        if kernel["queue"] != LOOP_QUEUE:
            notes.append(f"{task.params['program']}: the live loop device was {kernel['queue']}, the model "
                         f"assumed {LOOP_QUEUE}")  # fmt: skip
        for figure, tol in TOLERANCE.items():
            ratio = model[figure] / kernel[figure] if kernel[figure] else float("nan")
            rows.append(
                {
                    "program": task.params["program"],
                    "figure": figure,
                    "live": kernel[figure],
                    "model": model[figure],
                    "model_over_live": ratio,
                    "within": abs(ratio - 1) <= tol,
                    "device_written_over_pswpout": kernel["written_over_pswpout"],
                    "live_wall_seconds": kernel["wall_seconds"],
                }
            )
    frame = pl.DataFrame(rows)
    ok = int(frame["within"].sum()) if rows else 0
    verdict = "agrees" if rows and ok == len(rows) and not failed else "partly agrees" if ok else "differs"
    measured = (
        f"{ok} of {len(rows)} checks within tolerance over {len(rows) // len(TOLERANCE)} program(s)"
        + (f"; model runs failed: {', '.join(failed)}" if failed else "")
        + "; the device saw every page the kernel swapped out (device written / pswpout "
        + ", ".join(_ratio(r["device_written_over_pswpout"]) for r in rows[:: len(TOLERANCE)])
        + ")."
    )
    table = Table(
        "live_vs_model",
        "Live kernel vs the host model, same programs, same drive",
        frame,
        caption="Volumes within 15%, mean pages per request within 25%.",
    )
    return Analysis(measured=measured, verdict=verdict, tables=[table], notes=notes, data={"checks": rows})


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def setup(quick: bool) -> dict[str, str]:
    shown = [p for p in PROGRAMS if not quick or p[0] in QUICK]
    return {
        "programs": ", ".join(f"{p[0]} ({p[1]} pages, {p[4]} MiB)" for p in shown)
        + f"; {QUICK_OPS if quick else OPS} accesses, seed {SEED}",
        "drive": f"the preset {PRESET}; swap {SWAP_MIB} MiB at the drive's start",
        "live": "nandstack live: the machine's kernel, swap on a loop device (direct I/O) over the daemon's "
        "FUSE file, the program in a new memory cgroup; needs root (docs/live.md)",
        "model": "the host model with the same program, limit and swap; the loop device's queue as the "
        "kernel sets it up (non-rotational, requests up to 1280 KiB); the kernel-swap captures' reclaim "
        "costs",
    }


EXPERIMENT = Experiment(
    name="live-vs-model",
    title="The host model against the live kernel on the same drive",
    paper="No paper: the machine's own kernel, swapping onto the simulated drive in real time "
    "(nandstack live, docs/live.md).",
    claim="The same memtouch program, run live under the kernel and through the host model on the same "
    "drive, swaps the same: pages out and in within 15%, mean pages per read and write request within 25%.",
    method="Each program of the kernel-swap captures' shapes (quick: two of them, 50k accesses) runs "
    "through the host model (the tasks) and live on this machine (in the analysis, one at a time, each "
    "tearing its swap down); the kernel's figures come from the live run's trace and vmstat, as for the "
    "captures.",
    tasks=tasks,
    analyze=analyze,
    setup=setup,
    produces=("live_vs_model.csv",),
)
