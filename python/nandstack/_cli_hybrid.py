"""`nandstack run --model hybrid`: one run of the hybrid SLC/QLC SSD (docs/hybrid.md).

Writes `summary.json` (the report), `config.json` (the effective config, `"model": "hybrid"`) and
`series.csv` (one row per `report.sample_every_bytes` of host writes: SLC blocks, θ, utilisation, WAF,
interval throughput) to `--out`, prints the headline figures and records the run in the results database.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from . import _toml
from ._core import ConfigError
from ._term import flatten, format_table, progress_bar
from .config import apply_overrides
from .models import HYBRID_SERIES, hybrid_config, hybrid_result, normalize_hybrid_config, run_hybrid

__all__ = ["cmd_run_hybrid", "load_hybrid_config"]

#: Shown first in the summary table, in this order.
SUMMARY_KEYS = (
    "manager",
    "write_throughput_mib_per_s",
    "waf",
    "cost_fraction.host_to_slc",
    "cost_fraction.host_to_qlc",
    "cost_fraction.slc_to_qlc",
    "cost_fraction.qlc_to_qlc",
    "cost_fraction.slc_to_slc",
    "slc.mean_blocks",
    "slc.final_blocks",
    "slc.final_theta_bytes",
    "erases.max_wear_fraction",
    "workload.name",
    "workload.write_bytes",
    "seed",
    "wall_seconds",
)


def load_hybrid_config(path: Path | None, overrides: list[str]) -> dict[str, Any]:
    """The hybrid config from a JSON or TOML file (default: the built-in one) with `key=value` overrides."""
    if path is None:
        data = hybrid_config()
    else:
        text = Path(path).read_text(encoding="utf-8")
        try:
            data = json.loads(text) if path.suffix == ".json" else _toml.loads(text)
        except (json.JSONDecodeError, _toml.TOMLDecodeError) as e:
            raise ConfigError(
                f"{path}: not a valid {'JSON' if path.suffix == '.json' else 'TOML'} config: {e}"
            ) from None
        data.setdefault("model", "hybrid")
    return apply_overrides(data, overrides)


def cmd_run_hybrid(args: argparse.Namespace, trace: list[str]) -> int:
    """`nandstack run --model hybrid`; `trace` holds the `--trace/--format/--lba` overrides."""
    effective = load_hybrid_config(args.config, [*args.overrides, *trace])
    if trace:
        effective.setdefault("workload", {})["standin"] = None
    if args.seed is not None:
        effective["seed"] = args.seed
    effective = normalize_hybrid_config(effective)  # a bad key fails here, before any output
    with progress_bar(args.quiet) as bar:
        report = run_hybrid(effective, verify=args.verify, progress=bar)
    result = hybrid_result(report, effective)
    if not args.no_record:
        from .results import ResultsDB

        ResultsDB(args.db).record(result, source="cli", tags=args.tags, label=args.label, verify=args.verify)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (out / "config.json").write_text(json.dumps(effective, indent=2) + "\n", encoding="utf-8")
    lines = [",".join(HYBRID_SERIES)]
    for sample in report.get("series", []):
        lines.append(",".join("" if sample.get(c) is None else str(sample[c]) for c in HYBRID_SERIES))
    (out / "series.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if not args.quiet:
        flat = flatten({k: v for k, v in report.items() if k not in ("series", "q_table", "pretraining")})
        print(format_table([(k, flat[k]) for k in SUMMARY_KEYS if k in flat]))
        written = ", ".join(str(out / n) for n in ("summary.json", "config.json", "series.csv"))
        print(f"wrote {written}", file=sys.stderr)
        if result.run_id:
            print(
                f"recorded as run {result.run_id} (nandstack results show {result.run_id})", file=sys.stderr
            )
    return 0
