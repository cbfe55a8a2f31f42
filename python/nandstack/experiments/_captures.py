"""Shared by `kernel-zswap` and `kernel-zram`: the real-kernel compressed-swap captures
(`../shared/traces/kernel-zswap/`, `kernel-zram/`), the host config that runs each program with the same
page contents, the figures named as the captures name them, and the comparison with the kernel's range
over repetitions (issue #22's acceptance: the distance to min..max, relative to the larger of the kernel's
mean and 1000 pages, within 10% — 20% for zswap's `pswpout`, `pswpin` and `zswpwb`).

The Rust side has the same loader for its test (`crates/nandstack-host/src/kcswap.rs`); this one builds
configs of the one schema for `nandstack.run`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _core, data
from .._core import NandstackError
from ..sweep.spec import Task
from ._phases import FLUSH_PHASES_MS, STATS_FLUSH_MS, first_finished, median_figures, phase_note, phase_params
from .base import Analysis, Experiment, Figure, Series, Table, config_task

if TYPE_CHECKING:
    from .._api import Result

#: Environment variable naming the captures folder (`nandstack reproduce … --captures DIR` sets it).
CAPTURES_ENV = "NANDSTACK_CAPTURES"

#: The figures compared per kind and those in bytes: written once, in Rust (`nandstack-kernel`'s `kcswap`).
_FIGURE_LISTS = json.loads(_core.kcswap_figures_json())
FIGURES = {kind: tuple(_FIGURE_LISTS[kind]) for kind in ("zswap", "zram")}
BYTE_FIGURES = frozenset(_FIGURE_LISTS["bytes"])
#: The programs of `--quick` (the fastest to run).
QUICK = {
    "zswap": ("kzswap_normal_w50_random_lzo", "kzswap_uniform_w50_sparse_lzo"),
    "zram": ("kzram_hot_w50_sparse_lzorle_pc3", "kzram_normal_w50_mix50osdb_lzorle"),
}
#: Array time of the block device standing in for the loop device over tmpfs, µs (as kcswap.rs).
LOOP_DEVICE_US = 5.0


@dataclass(frozen=True)
class Capture:
    """One repetition of a program: its setup and the kernel's figures."""

    name: str
    program: str
    kind: str
    args: tuple[str, ...]
    limit_mib: int
    swap_mib: int
    compressor: str
    max_pool_percent: int
    accept_threshold_percent: int
    shrinker_enabled: bool
    page_cluster: int
    total_ram_bytes: int
    kernel: dict[str, float]


def captures_dir(kind: str) -> Path:
    """Data set `kernel-KIND` (`--captures DIR` / $NANDSTACK_CAPTURES, else --data / $NANDSTACK_DATA, …;
    docs/data.md); `DataError` naming what is missing."""
    return data.require(f"kernel-{kind}")


def corpus_dir(captures: Path) -> Path:
    """The Silesia zips: data set `compress`, found as every data set is (`captures` is not used)."""
    return data.require("compress")


class CaptureError(NandstackError):
    """A kernel capture file cannot be used: names the file and what is wrong with it."""


#: Largest capture JSON read (real ones are a few KiB).
MAX_CAPTURE_JSON_BYTES = 4 << 20
#: Files skipped so far, by capture folder: (file name, reason). Each is warned about once and listed
#: in the report's setup (docs/reliability.md, "Hostile files and databases").
SKIPPED: dict[str, dict[str, str]] = {}


def read_json(path: Path) -> dict[str, Any]:
    """A capture's JSON object: `CaptureError` naming the file when it is too big, not UTF-8, not JSON
    or not an object."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_CAPTURE_JSON_BYTES + 1)
    except OSError as e:
        raise CaptureError(f"{path.name}: cannot be read ({e.strerror or e})") from None
    if len(raw) > MAX_CAPTURE_JSON_BYTES:
        raise CaptureError(f"{path.name}: larger than {MAX_CAPTURE_JSON_BYTES >> 20} MiB: not a capture")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise CaptureError(f"{path.name}: not UTF-8 text (byte {e.start})") from None
    except (ValueError, RecursionError) as e:
        raise CaptureError(f"{path.name}: not valid JSON ({str(e)[:200]})") from None
    if not isinstance(doc, dict):
        raise CaptureError(f"{path.name}: a capture is a JSON object, not a {type(doc).__name__}")
    return doc


def number(d: dict[str, Any], file: str, *keys: str, whole: bool = False) -> float:
    """The number at `keys` in `d`: `CaptureError` naming `file` and the key when it is missing or is
    not a (whole, if `whole`) non-negative number."""
    value: Any = d
    for i, k in enumerate(keys):
        if not isinstance(value, dict) or k not in value:
            raise CaptureError(f"{file}: `{'.'.join(keys[: i + 1])}` is missing")
        value = value[k]
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
    if not ok or (whole and value != int(value)):
        what = "a whole number" if whole else "a number"
        raise CaptureError(f"{file}: `{'.'.join(keys)}` is {json.dumps(value)[:60]}, not {what} >= 0")
    return float(value)


def memtouch_args(d: dict[str, Any], file: str) -> tuple[str, ...]:
    """The memtouch arguments of the capture's `command` (`memtouch PAGES OPS PATTERN WRITE_PCT SEED
    [CONTENT]`), checked: `CaptureError` naming `file` otherwise."""
    cmd = d.get("command")
    if not isinstance(cmd, list) or not all(isinstance(x, (str, int)) for x in cmd):
        raise CaptureError(f"{file}: `command` must be a list of words (memtouch PAGES OPS ...)")
    cmd = [str(x) for x in cmd]
    if not cmd or Path(cmd[0]).name != "memtouch":
        got = Path(cmd[0]).name if cmd else "nothing"
        raise CaptureError(
            f"{file}: the captured program is `{got[:60]}`; only memtouch captures are replayed"
        )
    if len(cmd) < 6:
        raise CaptureError(f"{file}: `command` has {len(cmd) - 1} arguments; memtouch takes PAGES OPS "
                           "PATTERN WRITE_PCT SEED [CONTENT]")  # fmt: skip
    for name, word in zip(("PAGES", "OPS", "WRITE_PCT", "SEED"), (cmd[1], cmd[2], cmd[4], cmd[5])):
        if not word.isdigit():
            raise CaptureError(f"{file}: memtouch {name} is `{word[:40]}`, not a whole number")
    if not 0 <= int(cmd[4]) <= 100:
        raise CaptureError(f"{file}: memtouch WRITE_PCT is {cmd[4]}, not a percentage")
    return tuple(cmd[1:])


def skip(folder: Path, file: str, reason: str) -> None:
    """Note a capture that is not used (warned about once on stderr)."""
    seen = SKIPPED.setdefault(str(folder), {})
    if file not in seen:
        seen[file] = reason
        print(f"warning: capture {folder / file} skipped: {reason}", file=sys.stderr)


def skipped_note(folder: Path | None) -> str:
    """The captures skipped in `folder`, for a report's setup ('' when none were)."""
    seen = SKIPPED.get(str(folder), {}) if folder else {}
    return "; ".join(f"{name} ({reason})" for name, reason in sorted(seen.items()))


def no_usable(folder: Path) -> CaptureError:
    """The error when a folder holds captures but none can be used."""
    return CaptureError(f"no usable capture in {folder}: {skipped_note(folder) or 'none found'}")


def load(path: Path) -> Capture:
    """One capture, checked: `CaptureError` naming the file and the key that is missing or wrong."""
    d = read_json(path)
    f = path.name
    name = path.stem
    head, _, rep = name.rpartition("_r")
    program = head if head and rep.isdigit() else name
    args = memtouch_args(d, f)
    vm = d.get("vmstat_delta_system_wide")
    if not isinstance(vm, dict):
        raise CaptureError(f"{f}: `vmstat_delta_system_wide` is missing or not an object")
    kernel = {
        k: number(d, f, "vmstat_delta_system_wide", k)
        for k in ("pswpin", "pswpout", "swpout_zero", "swpin_zero")
        if k in vm
    }
    common = [int(number(d, f, k, whole=True)) for k in ("memory_limit_mb", "page_cluster")]
    if "zswap" in d:
        kernel.update(
            {k: number(d, f, "vmstat_delta_system_wide", k) for k in ("zswpout", "zswpin", "zswpwb")}
        )
        at_end = ("stored_pages", "pool_total_size", "stored_incompressible_pages")
        kernel.update({k: number(d, f, "zswap_at_end", k) for k in at_end})
        kernel["pool_limit_hit"] = number(d, f, "zswap_counters_delta", "pool_limit_hit")
        kernel["pool_bytes_per_stored_page"] = kernel["pool_total_size"] / max(kernel["stored_pages"], 1.0)
        z = d["zswap"]
        if not isinstance(z, dict) or not isinstance(z.get("compressor"), str):
            raise CaptureError(f"{f}: `zswap.compressor` is missing or not text")
        return Capture(
            name, program, "zswap", args, common[0], int(number(d, f, "swap_mb", whole=True)),
            z["compressor"], int(number(d, f, "zswap", "max_pool_percent", whole=True)),
            int(number(d, f, "zswap", "accept_threshold_percent", whole=True)),
            bool(z.get("shrinker_enabled", False)), common[1],
            int(number(d, f, "zswap", "total_ram_bytes", whole=True)), kernel,
        )  # fmt: skip
    z = d.get("zram")
    if not isinstance(z, dict) or not isinstance(z.get("comp_algorithm"), str):
        raise CaptureError(f"{f}: neither `zswap` nor a `zram` object with `comp_algorithm` text")
    mm = ("orig_data_size", "compr_data_size", "mem_used_total", "huge_pages")
    kernel.update({k: number(d, f, "mm_stat_at_end", k) for k in mm})
    kernel["notify_free"] = number(d, f, "io_stat_delta", "notify_free")
    kernel["pool_bytes_per_stored_page"] = kernel["mem_used_total"] / max(
        kernel["orig_data_size"] / 4096, 1.0
    )
    return Capture(
        name, program, "zram", args, common[0], int(number(d, f, "zram", "disksize_mb", whole=True)),
        z["comp_algorithm"], 0, 0, False, common[1], int(number(d, f, "zram", "total_ram_bytes", whole=True)),
        kernel,
    )  # fmt: skip


def missing_message(kind: str) -> str:
    return (
        f"No captures (*.json) in {data.locate(f'kernel-{kind}').path}: give the folder with --captures DIR "
        f"(the shared captures are data set kernel-{kind}: `nandstack data`)."
    )


def programs(kind: str) -> dict[str, list[Capture]]:
    """The captures of `kind` by program (repetitions in name order); empty when the folder has none."""
    folder = data.locate(f"kernel-{kind}").path  # tasks() requires it; a report of no runs does not
    paths = sorted(folder.glob("*.json")) if folder else []
    out: dict[str, list[Capture]] = {}
    for p in paths:
        try:
            c = load(p)
        except CaptureError as e:
            skip(p.parent, p.name, str(e).removeprefix(f"{p.name}: "))
            continue
        if c.kind == kind:
            out.setdefault(c.program, []).append(c)
    if paths and not out and folder is not None and SKIPPED.get(str(folder)):
        raise no_usable(folder)
    return out


def config(c: Capture, corpus: Path) -> dict[str, Any]:
    """The one-schema config that runs capture `c`'s program under its setup (see kcswap.rs `config`)."""
    a = c.args
    memtouch: dict[str, Any] = {
        "type": "memtouch", "pages": int(a[0]), "ops": int(a[1]), "pattern": a[2],
        "write_pct": int(a[3]), "seed": int(a[4]), "corpus_dir": str(corpus),
    }  # fmt: skip
    if len(a) > 5:
        memtouch["content"] = a[5]
    swap: dict[str, Any] = {"size_mib": c.swap_mib, "discard": {"mode": "off"}}
    host: dict[str, Any] = {
        "ram_mib": c.total_ram_bytes >> 20,
        "cpus": 2,
        "readahead": {"page_cluster": c.page_cluster},
        "cgroups": [{"name": "capture", "limit_mib": c.limit_mib}],
        "swap": swap,
        "reclaim": {"stats_flush_ms": STATS_FLUSH_MS},
    }
    if c.kind == "zswap":
        host["zswap"] = {
            "enabled": True, "compressor": c.compressor, "zpool": "zsmalloc",
            "max_pool_percent": c.max_pool_percent,
            "accept_threshold_percent": c.accept_threshold_percent,
            "shrinker_enabled": c.shrinker_enabled,
        }  # fmt: skip
    else:
        swap["backend"] = {"kind": "zram", "comp_algorithm": c.compressor}
    return {
        "seed": 1,
        "workload": {
            "kind": "host",
            "processes": [{"name": "memtouch", "cgroup": "capture", "workload": memtouch}],
        },
        "host": host,
        "device": {
            "kind": "block",
            "geometry": {"blocks_per_plane": 256, "cell_mode": "slc"},
            "timing": {
                "read_us": LOOP_DEVICE_US,
                "program_us": LOOP_DEVICE_US,
                "channel_mb_per_s": 4000.0,
                "plane_parallelism": True,
            },
        },
        "run": {"interval_sim_seconds": 1.0},
    }


def model_figures(summary: dict[str, Any], kind: str) -> dict[str, float]:
    """The model's figures at the program's last access (the end of the run), named as the captures'."""
    host = summary["host"]
    swap = host["swap"]
    out = {k: float(swap[k]) for k in ("pswpin", "pswpout", "swpout_zero", "swpin_zero")}
    if kind == "zswap":
        z = host["zswap"]
        keys = ("zswpout", "zswpin", "zswpwb", "stored_pages", "pool_total_size")
        keys += ("stored_incompressible_pages", "pool_limit_hit")
        out.update({k: float(z[k]) for k in keys})
        out["pool_bytes_per_stored_page"] = out["pool_total_size"] / max(out["stored_pages"], 1.0)
    else:
        mm = swap["backend"]["mm_stat"]
        out.update(
            {k: float(mm[k]) for k in ("orig_data_size", "compr_data_size", "mem_used_total", "huge_pages")}
        )
        out["notify_free"] = float(swap["backend"]["io_stat"]["notify_free"])
        out["pool_bytes_per_stored_page"] = out["mem_used_total"] / max(out["orig_data_size"] / 4096, 1.0)
    return out


def kernel_range(reps: Sequence[Capture], figure: str) -> tuple[float, float, float] | None:
    values = [c.kernel[figure] for c in reps if figure in c.kernel]
    if not values:
        return None
    return min(values), max(values), sum(values) / len(values)


def distance(figure: str, model: float, rng: tuple[float, float, float]) -> float:
    lo, hi, mean = rng
    outside = max(lo - model, model - hi, 0.0)
    if figure == "pool_bytes_per_stored_page":
        floor = 0.0
    elif figure in BYTE_FIGURES:
        floor = 1000.0 * 4096
    else:
        floor = 1000.0
    return outside / max(mean, floor, 1e-9)


def tolerance(kind: str, figure: str) -> float:
    return 0.20 if kind == "zswap" and figure in ("pswpout", "pswpin", "zswpwb") else 0.10


def tasks(kind: str, quick: bool) -> list[Task]:
    progs = programs(kind)
    corpus = corpus_dir(captures_dir(kind))
    names = [n for n in progs if not quick or n in QUICK[kind]] or list(progs)[:2]
    out = []
    for n in names:
        for phase in FLUSH_PHASES_MS:
            cfg = config(progs[n][0], corpus)
            cfg["host"]["reclaim"]["stats_flush_first_ms"] = phase
            out.append(config_task(cfg, phase_params(n, phase)))
    return out


def setup(kind: str, quick: bool) -> dict[str, str]:
    folder = captures_dir(kind)
    common = {
        "captures": f"{folder} (Linux 6.18, three repetitions per program"
        + ("; --quick: two programs)" if quick else ")"),
        "program": "tools/memtouch.c replayed reference for reference with its CONTENT's page bytes "
        "(Silesia chunks from " + str(corpus_dir(folder)) + ")",
        "host": "the capture's cgroup-v1 memory limit, the machine's RAM, 2 CPUs, vm.page-cluster as "
        "recorded, Linux defaults otherwise (the 2 s memory-cgroup statistics flush of 6.18); one model run "
        "per program (seed 1) at four flush phases; per figure the median over those whose runs finish",
    }
    if kind == "zswap":
        common["zswap"] = (
            "zsmalloc, the recorded compressor, max_pool_percent and accept_threshold_percent; swap on "
            "a block device standing in for the loop device over tmpfs "
            f"({LOOP_DEVICE_US:g} µs reads and writes)"
        )
    else:
        common["zram"] = "the recorded disksize and comp_algorithm, zsmalloc, no backing device"
    if skipped_note(folder):
        common["skipped captures"] = skipped_note(folder)
    return common


def analyze(kind: str, task_list: list[Task], results: Sequence[Result | None]) -> Analysis:
    import polars as pl

    progs = programs(kind)
    if not progs:
        return Analysis(missing_message(kind), "not comparable", data={"programs": {}})
    rows: list[dict[str, Any]] = []
    report: dict[str, Any] = {}
    chosen = first_finished(task_list, results)
    failed = sorted({t.params["program"] for t in task_list} - set(chosen))
    oom: dict[str, list[int]] = {}
    for name, (_, phase, done, oom_phases) in sorted(chosen.items()):
        if oom_phases:
            oom[_short(name)] = oom_phases
        reps = progs[name]
        model = median_figures([model_figures(r.summary, kind) for r in done])
        entry: dict[str, Any] = {"model": {}, "kernel_min": {}, "kernel_max": {}}
        entry["flush_phase_ms"] = phase
        entry["out_of_memory_phases_ms"] = oom_phases
        for f in FIGURES[kind]:
            rng = kernel_range(reps, f)
            if rng is None:
                continue
            d = distance(f, model[f], rng)
            tol = tolerance(kind, f)
            entry["model"][f] = model[f]
            entry["kernel_min"][f], entry["kernel_max"][f] = rng[0], rng[1]
            rows.append(
                {
                    "program": name,
                    "figure": f,
                    "model": model[f],
                    "kernel_min": rng[0],
                    "kernel_max": rng[1],
                    "kernel_mean": rng[2],
                    "distance_pct": 100 * d,
                    "tolerance_pct": 100 * tol,
                    "within": d <= tol,
                }
            )
        report[name] = entry
    frame = pl.DataFrame(rows) if rows else pl.DataFrame()
    if frame.is_empty():
        return Analysis(
            f"No program ran ({', '.join(failed)} failed).", "not comparable", data={"programs": {}}
        )
    outside = frame.filter(~pl.col("within"))
    worst = frame.sort("distance_pct", descending=True).row(0, named=True)
    n_prog = frame["program"].n_unique()
    measured = (
        f"{n_prog} programs, {frame.height} figures: {frame.height - outside.height} within the issue's "
        f"tolerance of the kernel's range over repetitions; largest distance {worst['distance_pct']:.1f}% "
        f"({worst['program']}, {worst['figure']}, tolerance {worst['tolerance_pct']:.0f}%)."
    )
    if outside.height:
        measured += " Outside: " + "; ".join(
            f"{r['program']} {r['figure']} {r['distance_pct']:.1f}%" for r in outside.iter_rows(named=True)
        )
    measured += phase_note(oom, [])
    if failed:
        measured += f" Out of memory at every phase (counted as failed): {', '.join(failed)}."
    verdict = (
        "agrees" if outside.is_empty() and not failed else ("partly agrees" if n_prog > 1 else "differs")
    )
    return Analysis(
        measured,
        verdict,
        _figures(kind, frame),
        [
            Table("figures", f"Model vs the kernel's range, per program and figure ({kind})", frame),
            Table("programs", "Largest distance per program", _per_program(frame)),
        ],
        data={"programs": report},
    )


#: Short axis labels of the figures.
LABELS = {
    "swpout_zero": "swpout0",
    "swpin_zero": "swpin0",
    "stored_pages": "stored",
    "pool_total_size": "pool",
    "stored_incompressible_pages": "incompr.",
    "pool_limit_hit": "limit hit",
    "pool_bytes_per_stored_page": "B/page",
    "orig_data_size": "orig",
    "compr_data_size": "compr",
    "mem_used_total": "mem used",
    "huge_pages": "huge",
    "notify_free": "notify",
}


def _short(name: str) -> str:
    return name.removeprefix("kzswap_").removeprefix("kzram_")


def _figures(kind: str, frame: Any) -> list[Figure]:
    import polars as pl

    names = frame["program"].unique(maintain_order=True).to_list()
    figs = [f for f in FIGURES[kind] if f in frame["figure"].to_list()]
    series = []
    for n in names:
        sub = {r["figure"]: r for r in frame.filter(pl.col("program") == n).iter_rows(named=True)}
        y = [
            sub[f]["model"] / sub[f]["kernel_mean"] if f in sub and sub[f]["kernel_mean"] > 0 else None
            for f in figs
        ]
        series.append(Series(_short(n), [LABELS.get(f, f) for f in figs], y, style="points"))
    ratio = Figure(
        "model_vs_kernel",
        f"Model ÷ kernel mean, per figure ({kind} captures)",
        "figure",
        "model / kernel mean",
        series,
        caption="1 = the kernel's mean over repetitions; figures whose kernel mean is 0 are left out. "
        "swpout0/swpin0 = swpout_zero/swpin_zero, stored = stored_pages, pool = pool_total_size, "
        "incompr. = stored_incompressible_pages, B/page = pool bytes per stored page; zram: orig, compr, "
        "mem used = mm_stat's orig_data_size, compr_data_size, mem_used_total.",
    )
    per_page = frame.filter(pl.col("figure") == "pool_bytes_per_stored_page")
    pool = Figure(
        "pool_bytes_per_stored_page",
        "Pool bytes per stored page",
        "program",
        "bytes",
        [
            Series(
                "model", [_short(p) for p in per_page["program"]], per_page["model"].to_list(), style="bar"
            ),
            Series(
                "kernel (mean of repetitions)",
                [_short(p) for p in per_page["program"]],
                per_page["kernel_mean"].to_list(),
                style="bar",
            ),
        ],
        kind="bar",
    )
    return [ratio, pool]


def _per_program(frame: Any) -> Any:
    import polars as pl

    return (
        frame.group_by("program", maintain_order=True)
        .agg(
            pl.col("distance_pct").max().alias("max_distance_pct"),
            pl.col("within").sum().alias("figures_within"),
            pl.len().alias("figures"),
        )
        .sort("program")
    )


def experiment(kind: str, *, title: str, paper: str, claim: str, method: str) -> Experiment:
    """The `kernel-KIND` experiment over the captures of `kind` (`zswap` or `zram`)."""
    return Experiment(
        name=f"kernel-{kind}",
        title=title,
        paper=paper,
        claim=claim,
        method=method,
        tasks=lambda quick: tasks(kind, quick),
        analyze=lambda task_list, results: analyze(kind, task_list, results),
        setup=lambda quick: setup(kind, quick),
        produces=(
            "model_vs_kernel.png/.svg",
            "pool_bytes_per_stored_page.png/.svg",
            "figures.csv",
            "programs.csv",
        ),
    )
