"""DISS's claims (issue #35, D1a–D4): the paper's evaluation platform as one set of settings, each from a
source (docs/platforms/swap-on-flash-sources.md, section 2), the runs that measure every claim on it and
with each difference switched on alone from today's platform, and the claim entries (`_claims.Claim`).

Today's platform is the `host-swap-diss` preset (Linux 6.18 host, next-fit slots, aged data rewritten at
random, a DFTL mapping cache, a Table-2 minute per simulated second). The paper platform switches on every
difference in `DIFFERENCES` that `in_paper` marks; SSDSim's stock aging (aged pages invalid) is an
ablation row only, because §4.1 says the aged data is valid. Nothing here is fitted to a paper number:
each setting is what its source says, and where the paper is silent, what SSDSim or Linux 4.4 does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._claims import Ablation, Claim


@dataclass(frozen=True)
class Difference:
    """One way the paper's platform differs from today's: `overrides` (dotted config keys) and, for the
    time scale, `real_time` (Table-2 minutes become real minutes)."""

    key: str
    change: str
    source: str
    overrides: dict[str, Any] = field(default_factory=dict)
    real_time: bool = False
    in_paper: bool = True


DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        "reuse_swap_page",
        "Linux 4.4 fault path: a read swap-in is mapped read-only; the first write frees its slot",
        "D-K1: Linux 4.4 mm/memory.c do_swap_page / do_wp_page → reuse_swap_page (mm/swapfile.c)",
        {"host.fault.swapin_write": "reuse_swap_page"},
    ),
    Difference(
        "cluster_alloc",
        "Linux 4.4 slot allocator: per-CPU clusters of 256 slots, one global scan base, no slot cache",
        "D-K2: per-CPU cluster allocation since 3.12 (ebc2a1a69111); SWAPFILE_CLUSTER 256 in 4.x "
        "mm/swapfile.c; one si->cluster_next for every CPU before 5.8 (490705888107 made it per CPU), "
        "no trunk re-draw (5.8+ set_cluster_next); the slot cache (mm/swap_slots.c) came later",
        {
            "host.swap.allocator": "cluster_v5",
            "host.swap.cluster_slots": 256,
            "host.swap.slot_cache": 0,
            "host.swap.cluster_v5.global_scan_base": True,
        },
    ),
    Difference(
        "valid_aging",
        "§4.1 aging: 75% of the logical space filled sequentially with valid data, no random rewrite",
        "D-K5: DISS §4.1 and Table 1 (aged ratio 75%, valid data; no warm-up is mentioned)",
        {"precondition.fill_order": "sequential", "precondition.warmup_capacity_multiples": 0.0},
    ),
    Difference(
        "full_map",
        "the whole mapping table in DRAM (no mapping cache)",
        "D-K6: stock SSDSim keeps the page map in ssd->dram->map (pagemap.c pre_process_page)",
        {"device.ftl.mapping_cache.entries": 0},
    ),
    Difference(
        "real_time",
        "Table 2's minutes in real time: the same references per minute over 60 s minutes",
        "D-K8: DISS Table 2 (65 minutes per workload), traces replayed at their timestamps by SSDSim",
        real_time=True,
    ),
    Difference(
        "ssdsim_aging",
        "SSDSim's stock aging instead: 75% of the logical space programmed and invalid (files valid)",
        "D-K5: SSDSim ssd.c make_aged (aged pages marked invalid) and pagemap.c pre_process_page "
        "(what the trace reads is written valid)",
        {
            "precondition.fill_order": "sequential",
            "precondition.warmup_capacity_multiples": 0.0,
            "precondition.aged_data": "invalid",
        },
        in_paper=False,
    ),
)

#: Real minutes: simulated ms per Table-2 minute on the paper platform.
REAL_MINUTE_MS = 60_000.0

#: How a metric is named and printed in a claim (its text and its `why`).
_METRIC_TEXT = {
    "waf": ("WAF", "{:.3f}"),
    "read_latency_mean_us": ("mean read latency", "{:.0f} µs"),
    "write_latency_mean_us": ("mean write latency", "{:.0f} µs"),
}


def _vs_itrim(
    claim_id: str, scheme: str, label: str, metric: str, where: str, paper: float
) -> tuple[Claim, str, str]:
    """The claim that `scheme` (named `label`) changes `metric` against iTRIM by `paper` %."""
    return Claim(claim_id, f"{label} vs iTRIM: {_METRIC_TEXT[metric][0]}", where, "%", paper), scheme, metric


#: (claim, scheme, metric) — `paper` exactly as printed in issue #35's table.
CLAIMS: tuple[tuple[Claim, str, str], ...] = (
    _vs_itrim("D1a", "strim", "STRIM", "waf", "§4.2.1, Fig. 10a", -25.7),
    _vs_itrim("D1b", "cl_sdi", "CL-SDI", "waf", "§4.2.1, Fig. 10a", -55.6),
    _vs_itrim("D1c", "diss", "DISS", "waf", "§4.2.1, Fig. 10a", -58.3),
    _vs_itrim("D2a", "strim", "STRIM", "read_latency_mean_us", "Fig. 10b", -28.1),
    _vs_itrim("D2b", "cl_sdi", "CL-SDI", "read_latency_mean_us", "Fig. 10b", -59.5),
    _vs_itrim("D2c", "diss", "DISS", "read_latency_mean_us", "Fig. 10b", -65.0),
    _vs_itrim("D3", "diss", "DISS", "write_latency_mean_us", "Fig. 10c", -21.4),
    (Claim("D4", "share of normal swap-ins (iTRIM)", "Fig. 4", "%", 94.5, kind="level"), "itrim", "normal"),
)


def platform_overrides(keys: Sequence[str]) -> tuple[dict[str, Any], bool]:
    """The overrides of the named differences together, and whether the time scale is real."""
    over: dict[str, Any] = {}
    real = False
    for d in DIFFERENCES:
        if d.key in keys:
            over.update(d.overrides)
            real = real or d.real_time
    return over, real


def real_time(mobile: dict[str, Any], default_fg: float, default_bg: float) -> dict[str, Any]:
    """The mobile workload keys with Table-2 minutes of `REAL_MINUTE_MS` and every rate divided by the
    same factor: each minute keeps its references and lasts a real minute."""
    minute = float(mobile.get("minute_ms", 1000.0))
    k = REAL_MINUTE_MS / minute
    return {
        **mobile,
        "minute_ms": REAL_MINUTE_MS,
        "foreground_refs_per_ms": float(mobile.get("foreground_refs_per_ms", default_fg)) / k,
        "background_refs_per_ms": float(mobile.get("background_refs_per_ms", default_bg)) / k,
    }


#: Platform names: the paper platform, and `+key` for one difference alone.
PAPER = "paper"
PAPER_KEYS = tuple(d.key for d in DIFFERENCES if d.in_paper)


def platforms(ablations: bool) -> list[tuple[str, tuple[str, ...]]]:
    """(name, difference keys) of the platform runs: the paper platform, then one per difference."""
    out = [(PAPER, PAPER_KEYS)]
    if ablations:
        out += [(f"+{d.key}", (d.key,)) for d in DIFFERENCES]
    return out


def vs_itrim(cell: dict[tuple[str, str], dict[str, float]], scheme: str, metric: str) -> float | None:
    """The claim's number from one platform's cells (scheme, scenario) → metrics: the change against
    iTRIM per scenario, averaged, in percent (as the paper averages its normalised bars); for `normal`,
    the share of normal swap-ins under iTRIM, averaged over the scenarios, in percent."""
    scenarios = sorted({sc for s, sc in cell if s == "itrim"})
    values = []
    for sc in scenarios:
        base, got = cell.get(("itrim", sc)), cell.get((scheme, sc))
        if not base or not got:
            continue
        if metric == "normal":
            all_ins = base["normal_swap_ins"] + base["swap_ins_and_in"]
            if all_ins:
                values.append(100.0 * base["normal_swap_ins"] / all_ins)
        elif base[metric]:
            values.append(100.0 * (got[metric] / base[metric] - 1.0))
    return sum(values) / len(values) if values else None


def claim_entries(
    today: dict[tuple[str, str], dict[str, float]],
    cells: dict[str, dict[tuple[str, str], dict[str, float]]],
    ablation_scenario: str,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The claim entries and the ablation table. `today`: today's cells; `cells`: each platform run's
    cells by platform name (`paper`, `+key`). Ablations run on `ablation_scenario` only, so the table
    also gives today's number on that scenario, the baseline each row moved from."""
    today_one = {k: v for k, v in today.items() if k[1] == ablation_scenario}
    entries, rows = [], []
    for claim, scheme, metric in CLAIMS:
        now = vs_itrim(today, scheme, metric)
        paper = vs_itrim(cells.get(PAPER, {}), scheme, metric)
        base = vs_itrim(today_one, scheme, metric)
        measured = [
            (d, vs_itrim(cells[f"+{d.key}"], scheme, metric)) for d in DIFFERENCES if f"+{d.key}" in cells
        ]
        ablations = [Ablation(f"{d.change} ({ablation_scenario})", d.source, v) for d, v in measured]
        rows.append(claim.row("today's platform (all scenarios)", "", now, digits=2))
        if ablations:
            rows.append(claim.row(f"today's platform ({ablation_scenario})", "", base, digits=2))
        rows += [claim.row(f"+ {a.change}", a.source, a.value, digits=2) for a in ablations]
        rows.append(claim.row("paper platform (all scenarios)", ", ".join(PAPER_KEYS), paper, digits=2))
        why = _why(claim, paper, base, [(d.key, v) for d, v in measured])
        why += _facts(cells.get(PAPER, {}), scheme, metric)
        why += mechanisms(claim.id, scheme, today, cells.get(PAPER, {}))
        entries.append(claim.entry(now, paper, ablations, why))
    return entries, rows


def _why(
    claim: Claim, paper: float | None, base: float | None, moved: Sequence[tuple[str, float | None]]
) -> str:
    """Where the paper platform lands, and how far each difference alone moves the number from today's
    on the ablation scenario — every row measured, none chosen."""
    if paper is None:
        return "the paper-platform runs are not in this report (they failed or were not run)"
    text = f"paper platform {paper:+.1f} against the paper's {claim.paper:+.1f}."
    shifts = [f"{key} {value - base:+.1f}" for key, value in moved if value is not None and base is not None]
    if base is not None and shifts:
        text += f" Each difference alone moves today's {base:+.1f} by: " + "; ".join(shifts) + "."
    return text


def _facts(cell: dict[tuple[str, str], dict[str, float]], scheme: str, metric: str) -> str:
    """The paper platform's absolute figures behind a claim (means over its scenarios): the metric
    under iTRIM and the scheme, and the pages GC moved under each."""
    if metric not in _METRIC_TEXT or not cell:
        return ""
    name, fmt = _METRIC_TEXT[metric]
    a, b = _mean_of(cell, "itrim", metric), _mean_of(cell, scheme, metric)
    ga, gb = _mean_of(cell, "itrim", "gc_migrated_pages"), _mean_of(cell, scheme, "gc_migrated_pages")
    if None in (a, b, ga, gb):
        return ""
    return (
        f" On the paper platform (mean over its scenarios) {name} is {fmt.format(a)} under iTRIM and "
        f"{fmt.format(b)} under {scheme}; GC moved {ga:.0f} and {gb:.0f} pages."
    )


def _mean_of(cell: dict[tuple[str, str], dict[str, float]], scheme: str, metric: str) -> float | None:
    vals = [v[metric] for (k, _), v in cell.items() if k == scheme and metric in v and v[metric] == v[metric]]
    return sum(vals) / len(vals) if vals else None


def mechanisms(
    claim_id: str,
    scheme: str,
    today: dict[tuple[str, str], dict[str, float]],
    paper: dict[tuple[str, str], dict[str, float]],
) -> str:
    """The measured mechanisms behind a claim, from this report's runs (means over each platform's
    scenarios; nothing quoted from elsewhere): where GC's moves go, what CDH adds, whether iTRIM
    trimmed, and (write latency) how many write requests of what size."""
    out = []

    def pct(a: float | None, b: float | None) -> str | None:
        return None if a is None or not b else f"{100.0 * a / b:.1f}%"

    if claim_id[:2] in ("D1", "D2"):
        for name, cell in (("today's platform", today), ("the paper platform", paper)):
            if not cell:
                continue
            gc, swap = (
                _mean_of(cell, scheme, "gc_migrated_pages"),
                _mean_of(cell, scheme, "gc_migrated_swap_pages"),
            )
            share = pct(swap, gc)
            # STRIM registers no range, so the device cannot tell its swap data from the rest.
            if scheme != "strim" and share is not None:
                out.append(f"on {name} {share} of the pages GC moved under {scheme} were swap data")
            rew, host = _mean_of(cell, scheme, "cdh_rewrites"), _mean_of(cell, scheme, "host_write_pages")
            if rew is not None and host:
                out.append(
                    f"CDH rewrote {rew:.0f} pages under {scheme} on {name} ({pct(rew, host)} of host writes)"
                )
            idle = _mean_of(cell, "itrim", "idle_trim_commands")
            if idle is not None:
                out.append(f"iTRIM issued {idle:.0f} idle-time TRIMs on {name}")
    if claim_id == "D3":
        for name, cell in (("today's platform", today), ("the paper platform", paper)):
            w0, k0 = _mean_of(cell, "itrim", "writes"), _mean_of(cell, "itrim", "avg_write_kib")
            w1, k1 = _mean_of(cell, scheme, "writes"), _mean_of(cell, scheme, "avg_write_kib")
            if None not in (w0, k0, w1, k1):
                out.append(
                    f"on {name} iTRIM issued {w0:.0f} write requests of {k0:.1f} KiB on average, {scheme} "
                    f"{w1:.0f} of {k1:.1f} KiB (the claim is a mean per request)"
                )
    return (" Measured: " + "; ".join(out) + ".") if out else ""
