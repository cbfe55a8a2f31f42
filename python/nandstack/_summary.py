"""Typed views of a report: `Latency`, `Device`, the flat metric names and the time-series DataFrame."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

__all__ = ["Device", "Latency", "flatten_metrics", "metric_name", "timeseries_frame"]

#: Report keys that are not metrics: identity (stored in their own columns) and bulky payloads.
NOT_METRICS = frozenset({"config", "timeseries", "seed", "nandstack_version"})


@dataclass(frozen=True)
class Latency:
    """Latency figures in µs (`mean` and `max` exact, percentiles within 0.8%)."""

    count: int
    mean: float
    p50: float
    p90: float
    p99: float
    p999: float
    p9999: float
    max: float

    @classmethod
    def from_report(cls, data: Mapping[str, Any] | None) -> Latency | None:
        if not data or not data.get("count"):
            return None
        return cls(**{f.name: (int if f.name == "count" else float)(data[f.name]) for f in fields(cls)})


@dataclass(frozen=True)
class Device:
    """The device as built by the engine (see docs/metrics.md, `device`)."""

    preset: str = ""
    raw_bytes: int = 0
    logical_bytes: int = 0
    page_size_bytes: int = 0
    planes: int = 0
    blocks: int = 0
    pages_per_block: int = 0
    cell_mode: str = ""
    over_provisioning: float = 0.0
    effective_over_provisioning: float = 0.0
    streams: int = 1
    victim_policy: str = ""

    @classmethod
    def from_report(cls, data: Mapping[str, Any]) -> Device:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def metric_name(dotted: str) -> str:
    """`write_latency_us.p99` -> `write_latency_us_p99`: a plain SQL identifier."""
    return re.sub(r"[^0-9a-zA-Z_]", "_", dotted).lower()


def flatten_metrics(report: Mapping[str, Any]) -> dict[str, float]:
    """Every numeric (not boolean) report value, nested keys joined with `_`, in report order."""
    out: dict[str, float] = {}

    def walk(value: Any, name: str) -> None:
        if isinstance(value, Mapping):
            for key, child in value.items():
                walk(child, f"{name}_{key}" if name else str(key))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[metric_name(name)] = float(value)

    for key, value in report.items():
        if key not in NOT_METRICS:
            walk(value, key)
    return out


def timeseries_frame(series: Mapping[str, Any] | None) -> pl.DataFrame:
    """The engine's `{columns, rows}` time series as a polars DataFrame of Float64 columns."""
    import polars as pl

    if not series:
        return pl.DataFrame()
    columns = list(series["columns"])
    rows = series["rows"]
    data = {c: [None if r[i] is None else float(r[i]) for r in rows] for i, c in enumerate(columns)}
    return pl.DataFrame(data, schema={c: pl.Float64 for c in columns})
