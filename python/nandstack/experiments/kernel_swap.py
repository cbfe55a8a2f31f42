"""kernel-swap: the host model against the real Linux kernel. Every capture in ../shared/traces/kernel-swap
(what Linux 6.18 sent to its swap device while `memtouch` ran in a memory-limited cgroup; repetitions
`NAME_r1..` grouped as one program) is run through the host model on the captures' setup, and the model is
compared with the kernel's range over the repetitions: page volumes, discards, the distributions of read
and write request sizes (mean, p50, p90) and the share of sequential requests."""

from __future__ import annotations

import gzip
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _core, data
from ..sweep.spec import Task
from . import _captures
from ._phases import (
    FLUSH_PHASES_MS,
    STATS_FLUSH_MS,
    first_finished,
    median_figures,
    phase_note,
    phase_params,
    phases_text,
)
from .base import Analysis, Experiment, Figure, Series, Table, make_task

if TYPE_CHECKING:
    from .._api import Result

#: Environment variable naming the capture directory (default: ../shared/traces/kernel-swap).
CAPTURES_ENV = "NANDSTACK_KERNEL_SWAP"
#: The programs of `--quick` (one per kind: fill-heavy reads, random writes, sequential, discard).
QUICK = ("kswap_uniform_r100", "kswap_normal_w100", "kswap_seq_w100", "kswap_uniform_w100_discard")
#: Figures compared, and how far outside the kernel's range the acceptance allows (None: reported only).
FIGURES: tuple[tuple[str, str, float | None], ...] = (
    ("pswpin", "pages swapped in", 0.10),
    ("pswpout", "pages swapped out", 0.10),
    ("discard_pages", "pages discarded while the program ran", None),
    ("read_pages_mean", "pages per read request, mean", 0.25),
    ("read_pages_p50", "pages per read request, p50", None),
    ("read_pages_p90", "pages per read request, p90", None),
    ("read_sequential_share", "share of sequential read requests", None),
    ("write_pages_mean", "pages per write request, mean", 0.25),
    ("write_pages_p50", "pages per write request, p50", None),
    ("write_pages_p90", "pages per write request, p90", None),
    ("write_sequential_share", "share of sequential write requests", None),
)


def capture_dir() -> Path:
    """The captures (data set `kernel-swap`, or `--captures DIR`; `DataError` when missing)."""
    return data.require("kernel-swap")


@dataclass(frozen=True)
class Capture:
    name: str
    meta: dict[str, Any]

    @property
    def command(self) -> list[str]:
        return [str(x) for x in self.meta["command"]]


def _stem(name: str) -> str | None:
    m = re.fullmatch(r"(.+)_r\d{1,2}", name)
    return m.group(1) if m else None


def programs(folder: Path | None = None) -> dict[str, list[Capture]]:
    """Program name → its captures (`NAME_rK` grouped when there are at least two), sorted."""
    folder = folder or capture_dir()
    if not folder.is_dir():
        return {}
    names = sorted(
        p.name[: -len(".json")] for p in folder.glob("*.json") if (folder / f"{p.stem}.csv.gz").exists()
    )
    stems = [_stem(n) or n for n in names]
    out: dict[str, list[Capture]] = {}
    for name, stem in zip(names, stems):
        program = stem if stems.count(stem) >= 2 else name
        try:
            c = _checked(folder, name)
        except _captures.CaptureError as e:
            _captures.skip(folder, f"{name}.json", str(e))
            continue
        out.setdefault(program, []).append(c)
    if names and not out:
        raise _captures.no_usable(folder)
    return out


#: Longest request line read from a capture's CSV (real ones are about 40 characters).
MAX_CSV_LINE = 4096
#: Figures of each capture read so far, by CSV path (each file is read once per process).
_FIGURES: dict[str, dict[str, float]] = {}


def _checked(folder: Path, name: str) -> Capture:
    """A capture whose JSON and requests are usable (`CaptureError` naming the file otherwise)."""
    file = f"{name}.json"
    meta = _captures.read_json(folder / file)
    args = _captures.memtouch_args(meta, file)
    if len(args) != 5:
        raise _captures.CaptureError(f"{file}: memtouch takes PAGES OPS PATTERN WRITE_PCT SEED here")
    for key in ("pswpin", "pswpout"):
        _captures.number(meta, file, "vmstat_delta_system_wide", key)
    c = Capture(name, meta)
    kernel_figures(c, folder)
    return c


def memtouch_workload(pages: str, ops: str, pattern: str, write_pct: str, seed: str) -> dict[str, Any]:
    """The host model's memtouch workload for the program `memtouch PAGES OPS PATTERN WRITE_PCT SEED`
    (arguments as the command line gives them; `ValueError` when a number is not one)."""
    return {
        "type": "memtouch",
        "pages": int(pages),
        "ops": int(ops),
        "pattern": pattern,
        "write_pct": int(write_pct),
        "seed": int(seed),
    }


def capture_overrides(c: Capture) -> dict[str, Any]:
    """The config that runs the capture's program on the captures' setup — the same as the Rust test's
    `kswap::config` (crates/nandstack-kernel/src/kswap.rs explains each value): a cgroup-v1 limit, swap on a
    loop device over a tmpfs file (rotational: cluster readahead, one global cluster; its idle worker
    woken in 10 µs, the captures' swap-in round trip, plus the VM's traced wake-up tail, and packed onto
    memtouch's CPU as the VM's scheduler does — backend and seed come from Rust, `kswap_setup_json`), the
    VM's reclaim costs."""
    _, pages, ops, pattern, write_pct, seed = c.command
    discard = c.meta.get("discard") == "pages"
    setup = json.loads(_core.kswap_setup_json())
    return {
        "seed": setup["seed"],
        "workload": {
            "kind": "host",
            "processes": [
                {
                    "name": "memtouch",
                    "cgroup": "capswap",
                    "workload": memtouch_workload(pages, ops, pattern, write_pct, seed),
                }
            ],
        },
        "host": {
            "ram_mib": 2048,
            "cpus": 2,
            "swap": {
                "size_mib": int(c.meta["swap_mb"]),
                "solid_state": False,
                "discard": {"mode": "cluster" if discard else "off"},
                "backend": setup["backend"],
            },
            "readahead": {"policy": "cluster"},
            "costs": {"reclaim_scan_ns": 1000, "reclaim_write_ns": 3300},
            "reclaim": {"stats_flush_ms": STATS_FLUSH_MS},
            "cgroups": [{"name": "capswap", "limit_mib": int(c.meta["memory_limit_mb"])}],
        },
        "device.geometry.blocks_per_plane": 128,
        "device.geometry.cell_mode": "slc",
    }


def phase_task(c: Capture, program: str, phase_ms: int) -> Task:
    """The run of `c`'s program with the first statistics flush at `phase_ms` (may run out of memory)."""
    overrides = capture_overrides(c)
    overrides["host"]["reclaim"]["stats_flush_first_ms"] = phase_ms
    return make_task(overrides, phase_params(program, phase_ms))


def _chosen(found: dict[str, list[Capture]], quick: bool) -> list[str]:
    """The programs a run compares: all, or with `quick` those of `QUICK` (a folder without them: its
    first two)."""
    return [p for p in found if not quick or p in QUICK] or list(found)[:2]


def tasks(quick: bool) -> list[Task]:
    found = programs()
    return [phase_task(found[p][0], p, phase) for p in _chosen(found, quick) for phase in FLUSH_PHASES_MS]


def setup(quick: bool) -> dict[str, str]:
    found = programs()
    shown = _chosen(found, quick)
    caps = sum(len(found[p]) for p in shown)
    skipped = _captures.skipped_note(capture_dir())
    return {
        **({"skipped captures": skipped} if skipped else {}),
        "captures": f"{caps} capture(s) of {len(shown)} program(s) in {capture_dir()}"
        + (" (quick: one program of each kind)" if quick else "")
        + "; Linux 6.18, cgroup v1 memory limit, swap on a loop device over a tmpfs file, zswap off",
        "model": "the host model with the captures' setup (kswap::config): memtouch reproduced reference for "
        "reference, the loop swap backend (5 µs + 1 µs per page, 10 µs to wake its idle worker plus the VM's "
        "traced wake-up tail, completions on the worker's CPU; the worker packed onto memtouch's CPU at the "
        "VM scheduler's traced rates, running when memtouch sleeps or at the next tick), cluster readahead "
        "(page-cluster 3), reclaim costs 1 µs per page scanned + 3.3 µs per page written; one "
        "seed (the model is deterministic; the kernel's repetitions give its range)",
        "acceptance": "page volumes within 10% of the kernel's range, mean pages per read and per write "
        "request within 25%",
        "statistics flush": f"every {STATS_FLUSH_MS} ms (Linux 6.18's FLUSH_TIME); each program at "
        "first-flush "
        f"phases {phases_text()} ms; per figure the median over the phases that finish is compared (a "
        "capture holds a run that finished, started at some point of the flusher's period)",
    }


# ---- the kernel's side ----------------------------------------------------------------------------


def _quantile(hist: dict[int, int], q: float) -> float:
    """Nearest rank: the smallest size with at least ceil(q·n) requests at or below it."""
    n = sum(hist.values())
    if n == 0:
        return 0.0
    rank = min(max(math.ceil(q * n), 1), n)
    seen = 0
    for size in sorted(hist):
        seen += hist[size]
        if seen >= rank:
            return float(size)
    return float(max(hist))


def _figures(
    pswpin: float, pswpout: float, sizes: dict[str, dict[int, int]], seq: dict[str, int], discard: float
) -> dict[str, float]:
    out = {"pswpin": pswpin, "pswpout": pswpout, "discard_pages": discard}
    for kind in ("read", "write"):
        hist = sizes[kind]
        n = sum(hist.values())
        out[f"{kind}_pages_mean"] = sum(s * c for s, c in hist.items()) / n if n else 0.0
        out[f"{kind}_pages_p50"] = _quantile(hist, 0.5)
        out[f"{kind}_pages_p90"] = _quantile(hist, 0.9)
        out[f"{kind}_sequential_share"] = seq[kind] / n if n else 0.0
        out[f"{kind}_requests"] = float(n)
    return out


def kernel_figures(c: Capture, folder: Path | None = None) -> dict[str, float]:
    """The figures of one capture, from its requests (`time_s,op,sector,sectors,comm`) and its JSON."""
    folder = folder or capture_dir()
    path = folder / f"{c.name}.csv.gz"
    if str(path) not in _FIGURES:
        try:
            _FIGURES[str(path)] = _read_figures(c, path)
        except (OSError, EOFError, UnicodeDecodeError) as e:
            raise _captures.CaptureError(f"{path.name}: cannot be read ({e})") from None
    return _FIGURES[str(path)]


def _read_figures(c: Capture, path: Path) -> dict[str, float]:
    """The capture's figures: its requests counted in Rust (`nandstack_kernel::requests`, one pass),
    or, where that reader refuses a file it might read otherwise, by :func:`_count_requests`, the
    reference (which also words every error)."""
    try:
        counts = json.loads(_core.kswap_request_counts(str(path)))
    except _core.NandstackError:
        sizes, seq, discard = _count_requests(path)
    else:
        sizes = {k: {int(p): int(n) for p, n in counts[k]} for k in ("read", "write")}
        seq = {"read": int(counts["sequential"][0]), "write": int(counts["sequential"][1])}
        discard = int(counts["discard_pages"])
    vm = c.meta["vmstat_delta_system_wide"]
    return _figures(float(vm["pswpin"]), float(vm["pswpout"]), sizes, seq, float(discard))


def _count_requests(path: Path) -> tuple[dict[str, dict[int, int]], dict[str, int], int]:
    """Request sizes in pages, sequential requests by direction and the pages discarded before the
    last read or write, read line by line in Python: the reference for the Rust reader."""
    sizes: dict[str, dict[int, int]] = {"read": {}, "write": {}}
    seq = {"read": 0, "write": 0}
    nxt: dict[str, int | None] = {"read": None, "write": None}
    discards: list[tuple[float, int]] = []
    last_rw = -math.inf
    with gzip.open(path, "rt", encoding="utf-8") as f:
        f.readline(MAX_CSV_LINE)
        for n, line in enumerate(iter(lambda: f.readline(MAX_CSV_LINE), ""), start=2):
            if len(line) == MAX_CSV_LINE and not line.endswith("\n"):
                raise _captures.CaptureError(f"{path.name}: line {n} is longer than {MAX_CSV_LINE} chars")
            try:
                t, op, sector, sectors, _ = line.rstrip("\n").split(",", 4)
                start, length = int(sector), int(sectors)
                float(t)
            except ValueError:
                raise _captures.CaptureError(
                    f"{path.name}: line {n}: `{line.strip()[:80]}` is not time_s,op,sector,sectors,comm"
                ) from None
            if op in ("R", "W"):
                kind = "read" if op == "R" else "write"
                last_rw = max(last_rw, float(t))
                seq[kind] += nxt[kind] == start
                nxt[kind] = start + length
                pages = length // 8
                sizes[kind][pages] = sizes[kind].get(pages, 0) + 1
            elif op == "D":
                discards.append((float(t), length // 8))
    return sizes, seq, sum(p for t, p in discards if t <= last_rw)


def model_figures(summary: dict[str, Any]) -> dict[str, float]:
    """The same figures from a host run's summary (`host.swap`)."""
    swap = summary["host"]["swap"]
    sizes = {
        kind: {int(k.rstrip("+")): int(v) for k, v in swap[f"{kind}_request_sizes"].items()}
        for kind in ("read", "write")
    }
    seq = {"read": int(swap["read_requests_sequential"]), "write": int(swap["write_requests_sequential"])}
    return _figures(float(swap["pswpin"]), float(swap["pswpout"]), sizes, seq, float(swap["discard_pages"]))


def outside(value: float, lo: float, hi: float) -> float:
    """How far `value` lies outside [lo, hi], relative to the nearer end (0 inside)."""
    if value > hi:
        return (value - hi) / hi if hi else math.inf
    if value < lo:
        return (value - lo) / lo if lo else -math.inf
    return 0.0


# ---- analysis -------------------------------------------------------------------------------------


def analyze(task_list: list[Task], results: Sequence[Result | None]) -> Analysis:
    import polars as pl

    found = programs()
    rows: list[dict[str, Any]] = []
    headline: dict[str, Any] = {"programs": {}}
    chosen = first_finished(task_list, results)
    attempted = {t.params["program"] for t in task_list}
    never = sorted(p for p in attempted if p not in chosen and p in found)
    for program, (_, phase, done, oom) in sorted(chosen.items()):
        if program not in found:
            continue
        others = [model_figures(r.summary) for r in done]
        model = median_figures(others)
        kernel = [kernel_figures(c) for c in found[program]]
        entry: dict[str, Any] = {
            "captures": [c.name for c in found[program]],
            "flush_phase_ms": phase,
            "out_of_memory_phases_ms": oom,
            "phases_finished": len(done),
        }
        for name, label, tol in FIGURES:
            lo = min(k[name] for k in kernel)
            hi = max(k[name] for k in kernel)
            dev = outside(model[name], lo, hi)
            within = None if tol is None else abs(dev) <= tol
            entry[name] = {
                "model": model[name],
                "kernel_min": lo,
                "kernel_max": hi,
                "outside": dev,
                "model_phase_min": min(o[name] for o in others),
                "model_phase_max": max(o[name] for o in others),
            }
            if tol is not None:
                entry[name]["tolerance"] = tol
                entry[name]["within"] = within
            rows.append(
                {
                    "program": program,
                    "figure": name,
                    "description": label,
                    "model": model[name],
                    "kernel_min": lo,
                    "kernel_max": hi,
                    "outside_pct": 100 * dev,
                    "tolerance_pct": None if tol is None else 100 * tol,
                    "within": within,
                    "flush_phase_ms": phase,
                    "model_phase_min": entry[name]["model_phase_min"],
                    "model_phase_max": entry[name]["model_phase_max"],
                }
            )
        headline["programs"][program] = entry
    if not rows and never:
        return Analysis(
            "Every program ran out of memory at every statistics-flush phase: " + ", ".join(never) + ".",
            "differs",
            headline={**headline, "out_of_memory_at_every_phase": never},
        )
    if not rows:
        return Analysis(
            f"No capture compared (none found in {data.locate('kernel-swap').path}; give the folder with "
            f"--captures DIR or {CAPTURES_ENV}).",
            "not comparable",
        )
    frame = pl.DataFrame(rows, infer_schema_length=None)
    checked = frame.filter(pl.col("within").is_not_null())
    failing = checked.filter(~pl.col("within"))
    n_prog = frame["program"].n_unique()
    headline.update(
        {
            "programs_compared": n_prog,
            "checks": checked.height,
            "checks_within": checked.height - failing.height,
            "outside": [f"{r['program']} {r['figure']} {r['outside_pct']:+.1f}%" for r in failing.to_dicts()],
        }
    )
    summary = _summary_table(frame)
    measured = (
        f"{n_prog} programs compared with the kernel's range over their repetitions: "
        f"{checked.height - failing.height} of {checked.height} checks within tolerance (page volumes 10%, "
        "mean request sizes 25%)."
    )
    if failing.height:
        measured += " Outside: " + "; ".join(headline["outside"]) + "."
    moved = {
        _short(p): e["out_of_memory_phases_ms"]
        for p, e in headline["programs"].items()
        if e["out_of_memory_phases_ms"]
    }
    measured += phase_note(moved, never)
    headline["out_of_memory_at_every_phase"] = never
    verdict = (
        "agrees"
        if failing.height == 0 and not never
        else ("partly agrees" if failing.height + 4 * len(never) < checked.height / 4 else "differs")
    )
    figures = [_deviation_figure(frame), *(_figure(frame, f, title) for f, title in _PLOTS)]
    tables = [
        Table("kernel_swap", "Model vs the kernel's range, per program and figure", frame),
        Table("summary", "Per program: model / kernel range of the checked figures", summary),
    ]
    return Analysis(measured, verdict, figures, tables, headline=headline)


_PLOTS = (
    ("pswpin", "Pages swapped in: model (point) over the kernel's range (bar)"),
    ("pswpout", "Pages swapped out: model (point) over the kernel's range (bar)"),
    ("write_pages_mean", "Pages per write request (mean): model over the kernel's range"),
    ("read_pages_mean", "Pages per read request (mean): model over the kernel's range"),
)


def _short(program: str) -> str:
    return program.removeprefix("kswap_")


def _ranges(lo: list[float], hi: list[float]) -> tuple[list[float], list[float]]:
    """Ranges as points with error bars: their middles and half-widths."""
    return [(a + b) / 2 for a, b in zip(lo, hi)], [max((b - a) / 2, 1e-9) for a, b in zip(lo, hi)]


def _figure(frame: Any, figure: str, title: str) -> Figure:
    import polars as pl

    sub = frame.filter(pl.col("figure") == figure).sort("program")
    names = [_short(p) for p in sub["program"].to_list()]
    mid, half = _ranges(sub["kernel_min"].to_list(), sub["kernel_max"].to_list())
    pmid, phalf = _ranges(sub["model_phase_min"].to_list(), sub["model_phase_max"].to_list())
    model = sub["model"].to_list()
    return Figure(
        f"{figure}_vs_kernel",
        title,
        "program",
        figure,
        [
            Series("kernel (min..max over repetitions)", names, mid, yerr=half, style="points"),
            Series("model", names, model, style="points"),
            Series(
                "model over the flush phases that finished (min..max)",
                names,
                pmid,
                yerr=phalf,
                style="points",
            ),
        ],
        logy=figure.startswith("write_pages") or figure.startswith("psw"),
        kind="line",
    )


def _deviation_figure(frame: Any) -> Figure:
    """Per program, how far each checked figure lies outside the kernel's range, with the tolerances."""
    import polars as pl

    names = sorted(set(frame["program"].to_list()))
    series = []
    for figure, label, tol in FIGURES:
        if tol is None:
            continue
        sub = {r["program"]: r["outside_pct"] for r in frame.filter(pl.col("figure") == figure).to_dicts()}
        series.append(Series(label, [_short(n) for n in names], [sub.get(n) for n in names], style="points"))
    for tol in sorted({t for _, _, t in FIGURES if t is not None}):
        for sign in (1, -1):
            series.append(
                Series(
                    f"±{100 * tol:.0f}%" if sign > 0 else "",
                    [_short(n) for n in names],
                    [sign * 100 * tol] * len(names),
                    style="dashed",
                )
            )
    return Figure(
        "deviation_from_kernel",
        "Model outside the kernel's range (0 = inside), per program",
        "program",
        "% outside the kernel's min..max",
        series,
        caption="Page volumes must stay within ±10%, mean request sizes within ±25% (dashed).",
    )


def _summary_table(frame: Any) -> Any:
    import polars as pl

    def cell(r: dict[str, Any]) -> str:
        fmt = "{:.0f}" if r["figure"].startswith("psw") else "{:.2f}"
        rng = fmt.format(r["kernel_min"]) + (
            "" if r["kernel_min"] == r["kernel_max"] else "–" + fmt.format(r["kernel_max"])
        )
        flag = "" if r["within"] is not False else " ✗"
        return f"{fmt.format(r['model'])} / {rng}{flag}"

    checked = [f for f, _, tol in FIGURES if tol is not None]
    rows = []
    for program in sorted(set(frame["program"].to_list())):
        sub = {r["figure"]: r for r in frame.filter(pl.col("program") == program).to_dicts()}
        rows.append({"program": program, **{f: cell(sub[f]) for f in checked if f in sub}})
    return pl.DataFrame(rows)


EXPERIMENT = Experiment(
    name="kernel-swap",
    title="Host model vs the real kernel's swap I/O",
    paper="No paper: ground truth from the real kernel — Linux 6.18 swap captures "
    "(../shared/traces/kernel-swap, recorded with tools/capture-swap.sh: tracefs block_rq_issue on a "
    "loop swap device while memtouch runs in a cgroup-v1 memory limit).",
    claim="The host model swaps what the kernel swaps and issues I/O the way the kernel does: for every "
    "captured program, pages swapped in and out within 10% of the kernel's range over repeated runs, and "
    "the mean size of read and write requests within 25%.",
    method="Each program is run through the host model (at four phases of the 2 s statistics flush; "
    "per figure the median over the phases that finish is compared, as a capture holds a run that "
    "finished, started at some point of the flusher's period) with the "
    "capture's parameters on the captures' setup (memtouch reproduced reference for reference; the "
    "loop swap device; Linux 6.18 reclaim, block plug, cluster allocator and readahead) and compared "
    "with the min..max of the kernel's repetitions: volumes, discards while the program runs, "
    "request-size distributions (mean, p50, p90) and the share of requests that continue the "
    "previous one.",
    tasks=tasks,
    analyze=analyze,
    setup=setup,
    produces=(
        "deviation_from_kernel.png/.svg",
        "pswpin_vs_kernel.png/.svg",
        "pswpout_vs_kernel.png/.svg",
        "write_pages_mean_vs_kernel.png/.svg",
        "read_pages_mean_vs_kernel.png/.svg",
        "kernel_swap.csv",
        "summary.csv",
    ),
)
