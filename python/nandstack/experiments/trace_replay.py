"""trace-replay: every shared block trace (data set `block`, docs/data.md) replayed through
the timed engine with its address space scaled onto the device: IOPS, latency and WAF per trace."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .. import data
from ..sweep.spec import Task
from ..workloads import trace
from .base import Analysis, Experiment, Figure, Series, Table, make_task, results_frame

if TYPE_CHECKING:
    from .._api import Result

#: The older variable naming the trace directory (an alias: docs/data.md; default: data set `block`).
TRACES_ENV = "NANDSTACK_TRACES"
#: (file-name prefix, format); order matters (first match wins).
FORMATS = (
    ("msr_", "msr"),
    ("cloudphysics_vscsi", "cloudphysics"),
    ("cloudphysics_w106", "u32_blocks"),
    ("tencent_", "tencent"),
    ("systor17_", "systor17"),
    ("arc_", "arc"),
    ("disksim_", "disksim"),
    ("hpl_", "hp_srt"),
    ("mqsim_", "mqsim"),
    ("ssdsim_", "ssdsim"),
    ("wiscsee_", "wiscsee"),
    ("heimdall_", "heimdall"),
)
FORMATS_HELP = [f"{prefix}*" for prefix, _ in FORMATS]
UNTIMED = frozenset({"arc", "fio", "u32_blocks"})  # formats without arrival times: closed loop only
#: The slowest replays (millions of requests, or an overloaded open loop); left out of --quick.
SLOW = frozenset({"tencent_cbs_sample.csv.bz2", "cloudphysics_w106_blocks.u32le.xz"})
QUEUE_DEPTH = 32
METRICS = ("requests", "iops", "waf", "read_latency_us_mean", "read_latency_us_p99")
METRICS += ("write_latency_us_mean", "write_latency_us_p99", "sim_seconds")


def trace_dir() -> Path:
    """The block traces' folder (`DataError` naming what is missing when it is not whole)."""
    return data.require("block")


def format_of(name: str) -> str | None:
    return next((fmt for prefix, fmt in FORMATS if name.startswith(prefix)), None)


def traces(quick: bool) -> list[tuple[Path, str]]:
    """The shared traces with a known format, sorted by name (`DataError` if the data set is missing)."""
    folder = trace_dir()
    found = []
    for path in sorted(folder.iterdir()):
        fmt = format_of(path.name)
        if fmt is not None and path.is_file() and not (quick and path.name in SLOW):
            found.append((path, fmt))
    if not found:
        raise data.DataError(
            f"no block trace of a known format in {folder} (names: {', '.join(FORMATS_HELP)})"
        )
    return found


def tasks(quick: bool) -> list[Task]:
    out = []
    for path, fmt in traces(quick):
        modes = ["closed"] if fmt in UNTIMED else (["open"] if quick else ["open", "closed"])
        for mode in modes:
            host = (
                {"workload.io.mode": "open_loop"} if mode == "open" else {"workload.io.mode": "closed_loop"}
            )
            if mode == "closed":
                host["workload.io.queue_depth"] = QUEUE_DEPTH
            overrides = {
                "device.geometry.blocks_per_plane": 128,  # the default device at 4 GiB
                "precondition.fill_fraction": 0.5,
                "precondition.fill_order": "random",
                "precondition.warmup_capacity_multiples": 0.0,
                **trace(path, fmt, lba="scale").overrides,
                **host,
            }
            params = {"trace": path.name, "format": fmt, "mode": mode, "seed": 1}
            out.append(make_task(overrides, params))
    return out


def setup(quick: bool) -> dict[str, str]:
    found = traces(quick)
    return {
        "device": "the default TLC device (16 KiB pages, 16 planes) at 128 blocks per plane (4 GiB), "
        "half filled in random order so reads find data; timing on",
        "traces": f"{len(found)} trace(s) from {trace_dir()}" + (" (the slowest left out)" if quick else ""),
        "replay": "addresses scaled onto the device (workload.trace.lba = scale); open loop = the trace's "
        f"own arrival times; closed loop = queue depth {QUEUE_DEPTH}, as fast as the device allows"
        + ("" if not quick else " (quick: open loop only, closed loop for untimed formats)"),
    }


def analyze(task_list: list[Task], results: Sequence[Result | None]) -> Analysis:
    frame = results_frame(task_list, results, list(METRICS))
    if frame.is_empty():
        return Analysis(
            f"No trace replayed (none found in {data.locate('block').path}; see `nandstack data`).",
            "not comparable",
        )
    frame = frame.drop("seed").sort(["trace", "mode"])
    closed = frame.filter(frame["mode"] == "closed")
    figures = []
    if closed.height:
        figures.append(
            Figure(
                "iops_closed_loop",
                f"Device-bound IOPS per trace (closed loop, QD {QUEUE_DEPTH})",
                "trace",
                "IOPS",
                [Series("IOPS", _short(closed["trace"].to_list()), closed["iops"].to_list(), style="bar")],
                kind="bar",
                logy=True,
            )
        )
    wrote = frame.filter(frame["waf"].is_not_null())
    if wrote.height:
        first = wrote.unique(subset=["trace"], keep="first", maintain_order=True)
        figures.append(
            Figure(
                "waf_per_trace",
                "Write amplification per trace",
                "trace",
                "WAF",
                [Series("WAF", _short(first["trace"].to_list()), first["waf"].to_list(), style="bar")],
                kind="bar",
            )
        )
    failed = sum(1 for r in results if r is None)
    bad_waf = wrote.filter(wrote["waf"] < 1.0).height
    names = frame["trace"].n_unique()
    text = (
        f"{names} traces replayed ({frame.height} runs{f', {failed} failed' if failed else ''}). "
        f"WAF ranges from {wrote['waf'].min():.3f} to {wrote['waf'].max():.3f} over the traces that write"
        if wrote.height
        else f"{names} traces replayed; none writes"
    )
    text += "; read-only traces have no WAF." if wrote.height < frame.height else "."
    verdict = "agrees" if not failed and not bad_waf else "differs"
    table = Table("traces", "Per-trace results (latencies in µs)", frame)
    return Analysis(text, verdict, figures, [table])


def _short(names: list[str]) -> list[str]:
    return [n.split(".")[0][:28] for n in names]


EXPERIMENT = Experiment(
    name="trace-replay",
    title="Replay of the shared block traces",
    paper="No paper: a characterization of the shared block traces (MSR Cambridge, SYSTOR'17, Tencent CBS, "
    "CloudPhysics, ARC, DiskSim, MQSim, SSDsim, HP SRT, WiscSee, Heimdall samples).",
    claim="Every trace replays end to end with exact host accounting and a write amplification of at least "
    "1 wherever it writes; real traces are far kinder to the FTL than uniform random writes.",
    method="Each trace replayed on a half-filled 4 GiB device with its address space scaled onto the "
    "device: at its own arrival times (open loop) and, in the full run, as fast as the device allows "
    f"(closed loop, QD {QUEUE_DEPTH}). Untimed formats run closed loop only.",
    tasks=tasks,
    analyze=analyze,
    setup=setup,
    produces=("iops_closed_loop.png/.svg", "waf_per_trace.png/.svg", "traces.csv"),
)
