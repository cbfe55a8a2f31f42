"""diss: Yu et al., "DISS: A Novel Data Invalidation Scheme for Swap-Data on Flash Storage Systems"
(ASP-DAC 2025), Figs. 4, 10 and 11 and Table 3: iTRIM (deferred TRIM of freed swap slots in idle time),
STRIM (the host TRIMs swapped-in slots in 2 MiB batches, with the clean-data handler), CL-SDI (the device
invalidates swap data when it is read, the host registers its swap range and marks swapped-in pages
dirty) and DISS (CL-SDI + swap/file data separation) on the paper's device (Table 1), under the four
app-switching scenarios of Table 2 on a 2 GiB host, plus the real-kernel swap captures replayed as block
traces with the swap range registered.

Every scheme is a configuration of the one stack (docs/diss.md): `host.swap.discard.mode` (`itrim`,
`strim`), `host.swap.clean_data_handler`, `host.swap.register_range`, `device.ftl.swap.invalidate_on_read`
and `device.ftl.placement.policy` (`swap_file` = SDS), on the `host-swap-diss` preset. Full run: the
paper's 32 GiB device, 2 GiB of RAM, 65 Table-2 minutes of one simulated second each; SDS without CL-SDI
on the Video scenario; the paper platform (`_diss_claims`) on the four scenarios and each of its
differences alone on Video, every scheme; six kernel captures of `shared/traces/kernel-swap`, one per
program shape (docs/diss.md, "Run plan and where the time goes"). Quick run: the same device shape with 96
blocks per plane, 256 MiB of RAM and apps an eighth the size, minutes of 0.25 s, two captures, the paper
platform on Video only.
"""

from __future__ import annotations

import functools
import gzip
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import data
from ..sweep.spec import Task
from . import _captures, _diss_claims
from .base import Analysis, Experiment, Figure, Series, Table, make_preset_task

if TYPE_CHECKING:
    from .._api import Result

PRESET = "host-swap-diss"
SCENARIOS = ("video", "game", "social", "office")
SCHEMES = ("itrim", "strim", "cl_sdi", "diss")
LABEL = {
    "itrim": "iTRIM",
    "strim": "STRIM",
    "cl_sdi": "CL-SDI",
    "diss": "DISS",
    "sdr": "SDR only",
    "sds": "SDS only",
}


def scheme(register: bool, cdh: bool, discard: str, invalidate: bool, sds: bool) -> dict[str, Any]:
    """The overrides of one scheme over the preset."""
    return {
        "host.swap.register_range": register,
        "host.swap.clean_data_handler": cdh,
        "host.swap.discard.mode": discard,
        "device.ftl.swap.invalidate_on_read": invalidate,
        "device.ftl.placement.policy": "swap_file" if sds else "single",
    }


OVERRIDES: dict[str, dict[str, Any]] = {
    "itrim": scheme(False, False, "itrim", False, False),
    "strim": scheme(False, True, "strim", False, False),
    "cl_sdi": scheme(True, True, "itrim", True, False),
    "diss": scheme(True, True, "itrim", True, True),
    # Ablations (full run, Video): registration alone, and SDS without CL-SDI.
    "sdr": scheme(True, False, "itrim", False, False),
    "sds": scheme(True, False, "itrim", False, True),
}
#: Replays of the kernel captures: no host, so no CDH and no STRIM; the device side only.
TRACE_SCHEMES = ("itrim", "cl_sdi", "diss")

#: Table 3 of the paper: reads, writes, average read / write size (KB), swap share of reads / writes.
PAPER_TABLE3 = {
    "video": (267192, 13320, 15.10, 265.92, 0.358, 0.828),
    "game": (273327, 14815, 14.40, 264.40, 0.396, 0.837),
    "office": (222869, 13979, 15.35, 222.90, 0.365, 0.830),
    "social": (310358, 17120, 14.54, 214.79, 0.341, 0.818),
}
#: The paper's headline: each scheme against iTRIM, mean over the four scenarios, in percent.
PAPER_VS_ITRIM = {
    "waf": {"strim": -25.7, "cl_sdi": -55.6, "diss": -58.3},
    "read_latency_mean_us": {"strim": -28.1, "cl_sdi": -59.5, "diss": -65.0},
    "write_latency_mean_us": {"diss": -21.4},
}
#: Fig. 4: about 94.5% of swap-ins are normal swap-ins in every scenario.
PAPER_NORMAL_SHARE = 0.945
#: The mobile workload's default foreground rate (workload config `foreground_refs_per_ms`).
MOBILE_FOREGROUND_DEFAULT = 2000
HEADLINE_METRICS = ("waf", "gc_writes_per_host_write", "read_latency_mean_us", "write_latency_mean_us")

KSWAP_ENV = "NANDSTACK_KSWAP_TRACES"  # an alias of data set `kernel-swap` (docs/data.md)

#: The runs of each mode (tests shrink QUICK). `overrides` scale the preset; `apps` replace its app
#: profiles (MiB anon/file of V, G, O, W); `mobile` are workload keys.
FULL: dict[str, Any] = {
    "overrides": {},
    "apps": None,
    "mobile": {},
    "scenarios": SCENARIOS,
    "seeds": (1,),
    # SDS without CL-SDI on the first scenario. (SDR alone, whose WAF must equal iTRIM's, is a check the
    # tests make: tests/test_diss.py.)
    "ablations": ("sds",),
    # One capture of each program shape the kernel-capture table discusses (sequential, uniform, hot,
    # read-only, with discard): the replays are a cross-check of CL-SDI's reads, not a claim.
    "traces": (
        "kswap_seq_w100",
        "kswap_seq_w50_r1",
        "kswap_uniform_w50",
        "kswap_uniform_r100",
        "kswap_hot_w30_r1",
        "kswap_normal_w70_discard_r1",
    ),
    # The paper platform (issue #35) on these scenarios, and each difference alone on the first one.
    "platform_scenarios": SCENARIOS,
    "platform_ablations": True,
}
QUICK: dict[str, Any] = {
    "overrides": {
        "device.geometry.blocks_per_plane": 96,
        "device.ftl.gc.start_free_blocks": 14,
        "device.ftl.gc.stop_free_blocks": 15,
        "device.ftl.mapping_cache.entries": 3072,
        "host.ram_mib": 256,
        "host.swap.size_mib": 512,
        "host.swap.offset_mib": 3712,
    },
    "apps": [(38, 25), (88, 50), (50, 31), (75, 19)],
    "mobile": {"minute_ms": 250.0, "foreground_refs_per_ms": 500, "background_refs_per_ms": 4},
    "scenarios": SCENARIOS,
    "seeds": (1,),
    "ablations": (),
    "traces": ("kswap_hot_w30_r1", "kswap_normal_w70_discard_r1"),
    "platform_scenarios": ("video",),
    "platform_ablations": False,
}


def kswap_dir() -> Path:
    """The kernel-swap captures (`DataError` naming what is missing when they are not whole)."""
    return data.require("kernel-swap").resolve()


def captures(plan: dict[str, Any]) -> list[str]:
    """The captures to replay: the plan's, or every capture's first repetition (those found)."""
    d = kswap_dir()
    if not d.is_dir():
        return []
    if plan["traces"] is not None:
        data.require("kernel-swap", [f"{n}.csv.gz" for n in plan["traces"]])
        return list(plan["traces"])
    names = sorted(p.name[: -len(".csv.gz")] for p in d.glob("*.csv.gz"))
    return [n for n in names if not (n.endswith("_r2") or n.endswith("_r3"))]


def host_task(
    plan: dict[str, Any],
    name: str,
    scenario: str,
    seed: int,
    platform: tuple[str, tuple[str, ...]] | None = None,
) -> Task:
    """One host run of scheme `name`; `platform` = (name, difference keys) switches on those paper-platform
    differences (`_diss_claims.DIFFERENCES`) and tags the run with the platform's name."""
    workload: dict[str, Any] = {
        "type": "mobile",
        "scenario": scenario,
        "zipf_theta": 1.1,
        "background_refs_per_ms": 15,
        "write_ratio": 0.3,
        "read_mostly_fraction": 0.4,
        "data_write_ratio": 0.05,
        **plan["mobile"],
    }
    if plan["apps"]:
        workload["apps"] = [{"anon_mib": a, "file_mib": f} for a, f in plan["apps"]]
    extra: dict[str, Any] = {}
    params: dict[str, Any] = {"scheme": name, "scenario": scenario, "seed": seed}
    if platform is not None:
        extra, real = _diss_claims.platform_overrides(platform[1])
        if real:
            workload = _diss_claims.real_time(workload, MOBILE_FOREGROUND_DEFAULT, 15)
        params["platform"] = platform[0]
    overrides = {
        **plan["overrides"],
        **OVERRIDES[name],
        **extra,
        "workload.processes": [{"name": "phone", "workload": workload}],
    }
    return make_preset_task(PRESET, overrides, params)


def trace_task(plan: dict[str, Any], capture: str, name: str) -> Task:
    """A capture replayed on the device at its own times, the swap device at the device's start."""
    d = kswap_dir()
    trace: dict[str, Any] = {"path": str(d / f"{capture}.csv.gz"), "format": "kswap"}
    if OVERRIDES[name]["host.swap.register_range"]:
        # The capture's JSON read with the capture experiments' checks: a damaged one is a CaptureError
        # naming the file and key (docs/reliability.md, "Hostile files and databases").
        meta = _captures.read_json(d / f"{capture}.json")
        swap_mb = _captures.number(meta, f"{capture}.json", "swap_mb", whole=True)
        trace["swap_range"] = {"offset_mib": 0, "size_mib": int(swap_mb)}
    device = {k: v for k, v in {**plan["overrides"], **OVERRIDES[name]}.items() if k.startswith("device.")}
    overrides = {
        **device,
        "workload": {
            "kind": "trace",
            "footprint_fraction": 0.75,
            "trace": trace,
            "io": {"mode": "open_loop"},
        },
    }
    return make_preset_task(PRESET, overrides, {"scheme": name, "trace": capture, "seed": 1}, drop=("host",))


def tasks(quick: bool) -> list[Task]:
    plan = QUICK if quick else FULL
    out = [
        host_task(plan, s, sc, seed) for sc in plan["scenarios"] for s in SCHEMES for seed in plan["seeds"]
    ]
    out += [host_task(plan, a, plan["scenarios"][0], plan["seeds"][0]) for a in plan["ablations"]]
    out += platform_tasks(plan)
    out += [trace_task(plan, c, s) for c in captures(plan) for s in TRACE_SCHEMES]
    return out


def platform_tasks(plan: dict[str, Any]) -> list[Task]:
    """The paper platform: every scheme on `platform_scenarios`; with `platform_ablations`, each
    difference alone, every scheme, on the first of them (the first seed)."""
    seed = plan["seeds"][0]
    scenarios = plan["platform_scenarios"]
    out = []
    for i, platform in enumerate(_diss_claims.platforms(plan["platform_ablations"])):
        for sc in scenarios if i == 0 else scenarios[:1]:
            out += [host_task(plan, s, sc, seed, platform) for s in SCHEMES]
    return out


# ---------------------------------------------------------------------------------------------------
# Analysis
# ---------------------------------------------------------------------------------------------------


def run_metrics(summary: dict[str, Any]) -> dict[str, float]:
    """The figures of one run (host program or trace replay)."""
    s = summary
    host_pages = s["host_write_bytes"] / 4096
    m = {
        "waf": s["waf"],
        "gc_writes_per_host_write": s["gc_migrated_pages"] / host_pages if host_pages else float("nan"),
        "read_latency_mean_us": s["read_latency_us"]["mean"],
        "read_latency_p99_us": s["read_latency_us"]["p99"],
        "write_latency_mean_us": s["write_latency_us"]["mean"],
        "write_latency_p99_us": s["write_latency_us"]["p99"],
        "host_write_pages": host_pages,
        "gc_migrated_pages": s["gc_migrated_pages"],
        "gc_migrated_swap_pages": s.get("gc_migrated_swap_pages", 0),
        "translation_program_pages": (s.get("flash_program_pages_by_cause") or {}).get("translation", 0),
        "swap_invalidated_pages": s.get("swap_invalidated_pages", 0),
        "unmapped_read_pages": s.get("unmapped_read_pages", 0),
        "trim_commands": s.get("host_trim_requests", 0),
    }
    h = s.get("host")
    if not h:
        return m
    sw, f = h["swap"], h["file"]
    reads = sw["read_requests"] + f["read_requests"]
    writes = sw["write_requests"] + f["write_requests"]
    disc = sw["discard"]
    m.update(
        {
            "pswpin": sw["pswpin"],
            "pswpout": sw["pswpout"],
            "normal_swap_ins": sw["swap_ins"]["normal"],
            "swap_ins_and_in": sw["swap_ins"]["in_and_in"],
            "cdh_rewrites": sw["swap_ins"]["cdh_rewrites"],
            "trimmed_pages": sw["discard_pages"],
            "idle_trim_commands": disc.get("idle_trim_commands", 0),
            "strim_trim_commands": disc.get("strim_trim_commands", 0),
            "strim_trimmed_slots": disc.get("strim_trimmed_slots", 0),
            "reads": reads,
            "writes": writes,
            "avg_read_kib": 4.0 * (sw["read_pages"] + f["read_pages"]) / max(reads, 1),
            "avg_write_kib": 4.0 * (sw["write_pages"] + f["write_pages"]) / max(writes, 1),
            "swap_read_ratio": sw["read_requests"] / max(reads, 1),
            "swap_write_ratio": sw["write_requests"] / max(writes, 1),
            "read_gib": (sw["read_pages"] + f["read_pages"]) / 262144,
            "write_gib": (sw["write_pages"] + f["write_pages"]) / 262144,
        }
    )
    return m


def _mean(values: Sequence[float]) -> float:
    vals = [v for v in values if v == v]
    return sum(vals) / len(vals) if vals else float("nan")


def _pct(new: float, base: float) -> float | None:
    if not base or base != base or new != new:
        return None
    return round(100.0 * (new - base) / base, 1)


def swap_in_kinds(path: Path) -> tuple[int, int]:
    """Fig. 4 on a capture: pages read that were written since their last read (normal swap-ins) and
    pages read again without a write between (swap-ins-and-in); a discard ends a page's history."""
    read_since_write = bytearray(1 << 18)
    normal = again = 0
    with gzip.open(path, "rt") as f:
        next(f)
        for line in f:
            _, op, sector, sectors, _ = line.split(",", 4)
            first, n = int(sector) // 8, int(sectors) // 8
            if first + n > len(read_since_write):
                read_since_write.extend(bytearray(first + n - len(read_since_write)))
            for p in range(first, first + n):
                if op == "R":
                    if read_since_write[p]:
                        again += 1
                    else:
                        normal += 1
                        read_since_write[p] = 1
                else:
                    read_since_write[p] = 0
    return normal, again


@functools.lru_cache(maxsize=64)
def _capture_kinds(path: str) -> tuple[int, int]:
    return swap_in_kinds(Path(path))


def analyze(task_list: list[Task], results: Sequence[Result | None]) -> Analysis:
    import polars as pl

    host_rows, trace_rows, platform_rows = [], [], []
    for task, result in zip(task_list, results):
        if result is None:
            continue
        row = {**task.params, **run_metrics(result.summary)}
        if "trace" in task.params:
            row["trace_normal"], row["trace_in_and_in"] = _capture_kinds(
                task.config["workload"]["trace"]["path"]
            )
            trace_rows.append(row)
        elif "platform" in task.params:
            platform_rows.append(row)
        else:
            host_rows.append(row)
    if not host_rows:
        return Analysis("No host run finished.", "not comparable")
    runs = pl.DataFrame(host_rows, infer_schema_length=None)
    metrics = [c for c in runs.columns if c not in ("scheme", "scenario", "seed")]
    means = runs.group_by(["scheme", "scenario"], maintain_order=True).agg(pl.col(metrics).mean())
    cell = {(r["scheme"], r["scenario"]): r for r in means.to_dicts()}
    scenarios = [sc for sc in SCENARIOS if ("itrim", sc) in cell]
    schemes = [s for s in SCHEMES if any((s, sc) in cell for sc in scenarios)]

    def norm(s: str, sc: str, metric: str) -> float | None:
        base, got = cell.get(("itrim", sc)), cell.get((s, sc))
        if not base or not got or not base[metric]:
            return None
        return got[metric] / base[metric]

    headline = _headline(cell, schemes, scenarios, norm)
    figures = _figures(cell, schemes, scenarios, norm, trace_rows)
    tables = _tables(pl, runs, cell, schemes, scenarios, headline, trace_rows)
    notes = _explain(cell, scenarios, trace_rows)
    measured = _measured(headline, cell, scenarios)
    claims, ablation_rows = _claims_of(cell, platform_rows, scenarios[0] if scenarios else "video")
    if ablation_rows:
        tables.append(
            Table(
                "claims_ablations",
                "Each claim on today's platform, with one paper-platform difference switched on, and on the "
                "paper platform",
                pl.DataFrame(ablation_rows, infer_schema_length=None),
                "value: the claim's number (percent change against iTRIM, or the share of normal swap-ins in "
                "percent); one-difference rows run on one scenario, against today's number on that scenario.",
            )
        )
    return Analysis(measured, _verdict(headline), figures, tables, notes, headline, claims=claims)


def _claims_of(today: dict, platform_rows: list[dict[str, Any]], scenario: str) -> tuple[list, list]:
    """The claim entries and ablation rows from today's cells and the platform runs (mean over seeds)."""
    groups: dict[str, dict[tuple[str, str], list[dict[str, Any]]]] = {}
    for r in platform_rows:
        groups.setdefault(r["platform"], {}).setdefault((r["scheme"], r["scenario"]), []).append(r)
    cells = {
        p: {k: {m: _mean([r[m] for r in rs]) for m in _CLAIM_METRICS} for k, rs in by.items()}
        for p, by in groups.items()
    }
    return _diss_claims.claim_entries(today, cells, scenario)


_CLAIM_METRICS = (
    "gc_migrated_pages",
    "waf",
    "read_latency_mean_us",
    "write_latency_mean_us",
    "normal_swap_ins",
    "swap_ins_and_in",
    # What the claims' `why` quotes (`_diss_claims.mechanisms`).
    "gc_migrated_swap_pages",
    "host_write_pages",
    "cdh_rewrites",
    "idle_trim_commands",
    "trimmed_pages",
    "writes",
    "avg_write_kib",
    "translation_program_pages",
)


def _headline(cell, schemes, scenarios, norm) -> dict[str, Any]:
    """Per scheme: the mean over the scenarios of each headline metric, its mean change against iTRIM
    (per scenario, then averaged, as the paper averages its normalised bars), and the paper's."""
    out: dict[str, Any] = {}
    for s in schemes:
        entry: dict[str, Any] = {
            m: _mean([cell[(s, sc)][m] for sc in scenarios if (s, sc) in cell]) for m in HEADLINE_METRICS
        }
        ratios = {m: [norm(s, sc, m) for sc in scenarios] for m in HEADLINE_METRICS}
        entry["vs_itrim_pct"] = {
            m: round(100.0 * (_mean([r for r in v if r is not None]) - 1.0), 1) for m, v in ratios.items()
        }
        entry["paper_vs_itrim_pct"] = {m: PAPER_VS_ITRIM[m].get(s) for m in PAPER_VS_ITRIM}
        if s == "itrim":
            entry["paper_vs_itrim_pct"] = {m: 0.0 for m in PAPER_VS_ITRIM}
        out[s] = entry
    return out


def _bars(name, title, ylabel, cell, schemes, scenarios, value, caption="") -> Figure:
    xs = [*scenarios, "mean"]
    series = []
    for s in schemes:
        ys = [value(s, sc) for sc in scenarios]
        known = [y for y in ys if y is not None]
        series.append(Series(LABEL[s], xs, [*ys, _mean(known) if known else None], style="bar"))
    return Figure(name, title, "scenario", ylabel, series, caption=caption, kind="bar")


def _figures(cell, schemes, scenarios, norm, trace_rows) -> list[Figure]:
    figs = [
        _bars(
            "fig10a_waf",
            "Fig. 10(a): WAF normalised to iTRIM",
            "WAF / iTRIM",
            cell,
            schemes,
            scenarios,
            lambda s, sc: norm(s, sc, "waf"),
            "Paper, mean over the scenarios: STRIM 0.743, CL-SDI 0.444, DISS 0.417.",
        ),
        _bars(
            "fig10b_read_latency",
            "Fig. 10(b): mean read latency normalised to iTRIM",
            "read latency / iTRIM",
            cell,
            schemes,
            scenarios,
            lambda s, sc: norm(s, sc, "read_latency_mean_us"),
            "Paper: STRIM 0.719, CL-SDI 0.405, DISS 0.35.",
        ),
        _bars(
            "fig10c_write_latency",
            "Fig. 10(c): mean write latency normalised to iTRIM",
            "write latency / iTRIM",
            cell,
            schemes,
            scenarios,
            lambda s, sc: norm(s, sc, "write_latency_mean_us"),
            "Paper: DISS 0.786.",
        ),
        _bars(
            "fig11_gc_writes",
            "Fig. 11: GC writes per host write",
            "GC-migrated pages / host-written pages",
            cell,
            schemes,
            scenarios,
            lambda s, sc: cell[(s, sc)]["gc_writes_per_host_write"] if (s, sc) in cell else None,
        ),
    ]
    kinds = [(sc, cell[("itrim", sc)]) for sc in scenarios]
    xs = [sc for sc, _ in kinds]
    ys = [c["normal_swap_ins"] / max(c["normal_swap_ins"] + c["swap_ins_and_in"], 1) for _, c in kinds]
    paper = [PAPER_NORMAL_SHARE] * len(xs)
    for r in trace_rows:
        if r["scheme"] == "itrim" and r.get("trace_normal") is not None:
            xs.append(r["trace"].replace("kswap_", ""))
            ys.append(r["trace_normal"] / max(r["trace_normal"] + r["trace_in_and_in"], 1))
            paper.append(None)
    figs.append(
        Figure(
            "fig4_swap_in_kinds",
            "Fig. 4: share of normal swap-ins (the rest are swap-ins-and-in)",
            "scenario (iTRIM) / kernel capture",
            "normal swap-ins / all swap-ins",
            [Series("ours", xs, ys, style="bar"), Series("paper (≈ 94.5%)", xs, paper, style="bar")],
            kind="bar",
        )
    )
    return figs


def _tables(pl, runs, cell, schemes, scenarios, headline, trace_rows) -> list[Table]:
    t3 = []
    for sc in scenarios:
        ours = cell[("itrim", sc)]
        p = PAPER_TABLE3[sc]
        t3.append(
            {
                "scenario": sc,
                "reads": round(ours["reads"]),
                "reads_paper": p[0],
                "writes": round(ours["writes"]),
                "writes_paper": p[1],
                "avg_read_kib": round(ours["avg_read_kib"], 2),
                "avg_read_kb_paper": p[2],
                "avg_write_kib": round(ours["avg_write_kib"], 2),
                "avg_write_kb_paper": p[3],
                "swap_read_ratio": round(ours["swap_read_ratio"], 3),
                "swap_read_ratio_paper": p[4],
                "swap_write_ratio": round(ours["swap_write_ratio"], 3),
                "swap_write_ratio_paper": p[5],
                "read_gib": round(ours["read_gib"], 2),
                "read_gib_paper": round(p[0] * p[2] / 2**20, 2),
                "write_gib": round(ours["write_gib"], 2),
                "write_gib_paper": round(p[1] * p[3] / 2**20, 2),
            }
        )
    head = [
        {
            "scheme": s,
            **{m: round(h[m], 4) for m in HEADLINE_METRICS},
            **{f"{m}_vs_itrim_pct": h["vs_itrim_pct"][m] for m in HEADLINE_METRICS},
            **{f"{m}_paper_pct": h["paper_vs_itrim_pct"][m] for m in PAPER_VS_ITRIM},
        }
        for s, h in headline.items()
    ]
    tables = [
        Table(
            "headline",
            "Each scheme, mean over the four scenarios, and its change against iTRIM beside the paper's",
            pl.DataFrame(head),
            "vs_itrim_pct: the scenario-by-scenario change against iTRIM, averaged (as the paper averages "
            "its normalised bars); paper_pct: the paper's average reductions.",
        ),
        Table(
            "table3",
            "Table 3: block requests of the four scenarios (our iTRIM runs) beside the paper's traces",
            pl.DataFrame(t3),
            "Counts and sizes of requests to the device (swap + file partitions); the paper's volumes are "
            "count × average size.",
        ),
        Table(
            "runs",
            "Every host run (mean over seeds)",
            pl.DataFrame(
                [cell[(s, sc)] for s in (*SCHEMES, "sdr", "sds") for sc in SCENARIOS if (s, sc) in cell]
            ),
        ),
    ]
    if trace_rows:
        tables.append(
            Table(
                "kernel_captures",
                "Kernel swap captures replayed on the aged device (swap range registered: CL-SDI, DISS)",
                pl.DataFrame(trace_rows, infer_schema_length=None).sort(["trace", "scheme"]),
                "trace_normal / trace_in_and_in: pages read as normal swap-ins / swap-ins-and-in (Fig. 4 on "
                "the capture); unmapped_read_pages under CL-SDI: reads that found data CL-SDI had "
                "invalidated — the pages a kernel without CDH would have lost.",
            )
        )
    return tables


def _explain(cell, scenarios, trace_rows) -> list[str]:
    """Where our result and the paper's part, with the figures that say why."""
    notes = []
    sc = scenarios[0]
    base, diss, cl = cell.get(("itrim", sc)), cell.get(("diss", sc)), cell.get(("cl_sdi", sc))
    sdr, sds = cell.get(("sdr", sc)), cell.get(("sds", sc))

    def swap_share(c: dict[str, Any]) -> float:
        return 100 * c["gc_migrated_swap_pages"] / max(c["gc_migrated_pages"], 1)

    if cl and base and not sdr:
        notes.append(
            f"Where GC's work goes ({sc}): under CL-SDI (the swap range registered, so the device counts "
            f"GC's moves of swap data) {swap_share(cl):.1f}% of the {cl['gc_migrated_pages']:.0f} pages GC "
            "moved were swap data. In one write stream the victims are blocks of aged data, whose survivors "
            "also fill the blocks swap writes land in, so invalidating swap data sooner (CL-SDI, STRIM) "
            "leaves those blocks no emptier than the aged ones and saves GC nothing."
        )
    if sdr and base:
        notes.append(
            f"Where GC's work goes ({sc}): with the swap range registered and nothing else changed (SDR "
            f"only: WAF {sdr['waf']:.3f}, iTRIM {base['waf']:.3f}), {swap_share(sdr):.1f}% of the "
            f"{sdr['gc_migrated_pages']:.0f} pages GC moved were swap data"
            + (f" ({swap_share(cl):.1f}% under CL-SDI)" if cl else "")
            + ". In one write stream the victims are blocks of aged data, whose survivors also fill the "
            "blocks swap writes land in, so invalidating swap data sooner (CL-SDI, STRIM) leaves those "
            "blocks no emptier than the aged ones and saves GC nothing."
        )
    if diss and base:
        notes.append(
            f"With SDS the swap blocks hold swap data only: CL-SDI empties them and GC takes them first — "
            f"{swap_share(diss):.1f}% of DISS's GC moves are swap pages, and GC moves "
            f"{diss['gc_writes_per_host_write']:.3f} pages per host page against iTRIM's "
            f"{base['gc_writes_per_host_write']:.3f}"
            + (f" (SDS without CL-SDI: {sds['gc_writes_per_host_write']:.3f})." if sds else ".")
        )
    if cl and base:
        notes.append(
            f"The price of CDH ({sc}): CL-SDI wrote {cl['cdh_rewrites']:.0f} swapped-in pages again, "
            f"{100 * cl['cdh_rewrites'] / max(cl['host_write_pages'], 1):.1f}% of its host writes, though "
            f"only {100 * base['swap_ins_and_in'] / max(base['pswpin'], 1):.1f}% of iTRIM's swap-ins were "
            "swap-ins-and-in: CDH rewrites every page read from swap that is evicted clean — read-ahead "
            "pages never used and pages never read again included — while Linux drops them. CL-SDI's "
            "invalidations "
            f"also dirty the mapping entries the reads loaded: {cl['translation_program_pages']:.0f} "
            f"translation-page writes against iTRIM's {base['translation_program_pages']:.0f} (the paper "
            "counts that update as free)."
        )
        notes.append(
            f"Mean write latency is per request: CDH's rewrites go to the slots the pages still hold, "
            f"scattered, so CL-SDI issues {cl['writes']:.0f} write requests of {cl['avg_write_kib']:.1f} KiB "
            f"on average against iTRIM's {base['writes']:.0f} of {base['avg_write_kib']:.1f} KiB, and "
            "small requests queue behind less — the mean per request falls although more is written."
        )
    st = cell.get(("strim", sc))
    if st and base:
        per = st["strim_trim_commands"] / max(st["strim_trimmed_slots"], 1)
        notes.append(
            f"STRIM ({sc}) issued {st['strim_trim_commands']:.0f} TRIM commands for "
            f"{st['strim_trimmed_slots']:.0f} swapped-in slots ({per:.2f} per slot): swapped-in slots are "
            "scattered (pages leave in LRU order, not slot order), so merging LBA-contiguous slots rarely "
            "helps, and each command costs its overhead and a mapping-cache load per entry."
        )
    if base:
        notes.append(
            f"iTRIM issued {base['idle_trim_commands']:.0f} idle-time TRIMs ({sc}) — none when the device "
            "is never idle for 100 ms while the apps run; freed slots then stay valid until rewritten."
        )
    by = {(r["trace"], r["scheme"]): r for r in trace_rows}
    names = sorted({r["trace"] for r in trace_rows})
    pairs = [
        (by[(n, "itrim")], by.get((n, "cl_sdi")), by.get((n, "diss"))) for n in names if (n, "itrim") in by
    ]
    if pairs:
        cl_waf = _mean([c["waf"] / b["waf"] - 1 for b, c, _ in pairs if c])
        d_waf = _mean([d["waf"] / b["waf"] - 1 for b, _, d in pairs if d])
        exact = all(c["unmapped_read_pages"] == c["trace_in_and_in"] for _, c, _ in pairs if c)
        notes.append(
            f"Kernel captures ({len(pairs)}), where swap data is all the device holds besides the aged data: "
            f"CL-SDI changes WAF by {100 * cl_waf:+.1f}% and DISS by {100 * d_waf:+.1f}% on average against "
            "the plain replay; under CL-SDI the reads that found invalidated data "
            + ("equal" if exact else "do not all equal")
            + " each capture's swap-ins-and-in counted from its CSV — every one a page a kernel without CDH "
            "would have lost ("
            + ", ".join(
                f"{c['trace'].replace('kswap_', '')} {c['unmapped_read_pages']:.0f}" for _, c, _ in pairs if c
            )
            + ")."
        )
    return notes


def _measured(headline, cell, scenarios) -> str:
    def pcts(metric: str) -> str:
        return ", ".join(
            f"{LABEL[s]} {headline[s]['vs_itrim_pct'][metric]:+.1f}%"
            for s in SCHEMES
            if s in headline and s != "itrim"
        )

    shares = [
        cell[("itrim", sc)]["normal_swap_ins"]
        / max(cell[("itrim", sc)]["normal_swap_ins"] + cell[("itrim", sc)]["swap_ins_and_in"], 1)
        for sc in scenarios
    ]
    return (
        f"Mean over {len(scenarios)} scenario(s), against iTRIM — WAF: {pcts('waf')} (paper −25.7 / −55.6 / "
        f"−58.3%); GC writes per host write: {pcts('gc_writes_per_host_write')}; mean read latency: "
        f"{pcts('read_latency_mean_us')} (paper −28.1 / −59.5 / −65%); mean write latency: "
        f"{pcts('write_latency_mean_us')} (paper DISS −21.4%). Normal swap-ins: "
        f"{100 * _mean(shares):.1f}% of all swap-ins (paper ≈ 94.5%)."
    )


def _verdict(headline: dict[str, Any]) -> str:
    """`agrees` when every paper figure has our sign and at least half its size; `partly agrees` when
    DISS lowers WAF and mean read latency as the paper says; else `differs`."""
    pairs = [
        (headline[s]["vs_itrim_pct"][m], p)
        for m, by in PAPER_VS_ITRIM.items()
        for s, p in by.items()
        if s in headline
    ]
    if not pairs or "diss" not in headline:
        return "not comparable"
    if all(o is not None and o < 0 and o <= 0.5 * p for o, p in pairs):
        return "agrees"
    d = headline["diss"]["vs_itrim_pct"]
    if d["waf"] < 0 and d["read_latency_mean_us"] < 0:
        return "partly agrees"
    return "differs"


def setup(quick: bool) -> dict[str, str]:
    plan = QUICK if quick else FULL
    blocks = plan["overrides"].get("device.geometry.blocks_per_plane", 512)
    ram = plan["overrides"].get("host.ram_mib", 2048)
    minute = plan["mobile"].get("minute_ms", 1000.0)
    return {
        "device": f"DISS Table 1: 8 ch × 2 chips × 2 dies × 4 planes × {blocks} blocks × 128 pages × 4 KiB, "
        "tR 4 µs, tPROG 75 µs, OP 25%, GC when a plane's free blocks fall below 15%, 128 KiB write cache + "
        "16 K-entry mapping cache per 32 GiB (256 KB DRAM), TRIM 20 µs + 100 ns per entry; 75% of the "
        "logical space holds aged data rewritten at random for half the capacity before the run",
        "host": f"{ram} MiB RAM, 4 CPUs, split-LRU reclaim, cluster swap readahead, next-fit slot "
        "allocation; swap partition after the aged data, the apps' files inside it",
        "workload": f"mobile app switching, Table 2 scenarios {', '.join(plan['scenarios'])}, "
        f"{minute / 1000:g} s per Table-2 minute; seeds {', '.join(map(str, plan['seeds']))}",
        "schemes": "iTRIM (idle-time TRIM of freed slots: 100 ms idle, 8 commands per round, rounds 50 ms "
        "apart), STRIM (+ CDH, swapped-in slots TRIMmed per 512), CL-SDI (+ SDR, CDH, device invalidation "
        "on read), DISS (CL-SDI + SDS)"
        + (
            f"; ablations on {plan['scenarios'][0]}: {', '.join(LABEL[a] for a in plan['ablations'])}"
            if plan["ablations"]
            else ""
        ),
        "paper platform": _platform_setup(plan),
        "captures": "kernel-swap captures replayed open loop on the same aged device (iTRIM = plain replay, "
        "CL-SDI/DISS with the swap range registered): "
        + (", ".join(plan["traces"]) if plan["traces"] else "every capture's first repetition"),
    }


def _platform_setup(plan: dict[str, Any]) -> str:
    """The paper platform's settings, each with its source, and where the ablations run."""
    parts = [
        f"{d.change} [{d.source}]" + ("" if d.in_paper else " — ablation row only")
        for d in _diss_claims.DIFFERENCES
    ]
    where = ", ".join(plan["platform_scenarios"])
    abl = (
        f"; each difference alone from today's platform on {plan['platform_scenarios'][0]} (one seed)"
        if plan["platform_ablations"]
        else "; no one-difference ablations in this mode"
    )
    return (
        "; ".join(parts)
        + f". Kept as today: readahead, discard, greedy plane-scoped GC, iTRIM's idle parameters, the "
        f"device geometry and OP (the paper is silent). Runs on {where}{abl}."
    )


EXPERIMENT = Experiment(
    name="diss",
    title="DISS: swap-data invalidation on read and swap/file separation vs iTRIM and STRIM",
    paper="diss-swap-data-invalidation.md (Yu et al., ASP-DAC 2025)",
    claim="Against iTRIM, STRIM, CL-SDI and DISS reduce WAF by 25.7%, 55.6% and 58.3% and mean read "
    "latency by 28.1%, 59.5% and 65% on average over four app-switching workloads; DISS reduces write "
    "latency by 21.4%; about 94.5% of swap-ins are normal swap-ins (Fig. 4).",
    method="The four schemes as configurations of the host model over the paper's device (host-swap-diss), "
    "the four Table 2 scenarios on a 2 GiB host; WAF, GC writes per host write and device read/write latency "
    "normalised to iTRIM; Table 3 and Fig. 4 from the same runs; kernel swap captures replayed with the swap "
    "range registered.",
    tasks=tasks,
    analyze=analyze,
    setup=setup,
    produces=(
        "fig4_swap_in_kinds",
        "fig10a_waf",
        "fig10b_read_latency",
        "fig10c_write_latency",
        "fig11_gc_writes",
        "headline",
        "table3",
        "runs",
        "kernel_captures",
        "claims_ablations",
    ),
)
