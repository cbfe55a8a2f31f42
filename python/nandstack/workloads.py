"""Named workloads: small typed builders of the `[workload]` / `[trace]` overrides a run needs.

    >>> nandstack.run(workload=workloads.zipf(1.2), set=TINY)
    >>> workloads.hot_cold(0.9, 0.1).overrides
    {'workload.pattern': 'hot_cold', 'workload.hot_ops_fraction': 0.9, 'workload.hot_space_fraction': 0.1}

A `Workload` is a name plus a mapping of dotted overrides; `run(workload=...)` and sweep specs accept one,
a plain dict of `[workload]` keys (`{"pattern": "zipf", "zipf_theta": 0.8}`) or a name understood by
`parse` (`"uniform"`, `"zipf:0.99"`, `"hot_cold:80/20"`, `"sequential"`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Union

from ._core import ConfigError

__all__ = [
    "Workload",
    "WorkloadLike",
    "hot_cold",
    "parse",
    "sequential",
    "trace",
    "trace_stats",
    "uniform",
    "zipf",
]


@dataclass(frozen=True)
class Workload:
    """A named set of dotted config overrides (`workload.*`, `trace.*`)."""

    name: str
    overrides: Mapping[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.name


WorkloadLike = Union[Workload, Mapping[str, Any], str]


def uniform(read_fraction: float | None = None, request_size_bytes: int | None = None) -> Workload:
    """Uniform random requests over the whole logical space. Only the arguments given are set; the
    rest keep the config's values (default: 4 KiB writes)."""
    overrides: dict[str, Any] = {"workload.pattern": "uniform"}
    name = "uniform"
    if read_fraction is not None:
        overrides["workload.read_fraction"] = read_fraction
        name += f"-r{read_fraction:g}"
    if request_size_bytes is not None:
        overrides["workload.request_size_bytes"] = request_size_bytes
        name += f"-{request_size_bytes}B"
    return Workload(name, overrides)


def sequential(request_size_bytes: int | None = None) -> Workload:
    """Sequential requests from the start of the space (wrapping around)."""
    overrides: dict[str, Any] = {"workload.pattern": "sequential"}
    if request_size_bytes is not None:
        overrides["workload.request_size_bytes"] = request_size_bytes
    return Workload("sequential", overrides)


def zipf(theta: float = 0.99, scramble: bool = True) -> Workload:
    """Zipf-distributed popularity with exponent `theta` (ranks scattered over the space by default)."""
    if not theta > 0:
        raise _error(f"zipf theta is {theta}: must be > 0", "workload.zipf_theta")
    return Workload(
        f"zipf-{theta:g}",
        {"workload.pattern": "zipf", "workload.zipf_theta": theta, "workload.scramble": scramble},
    )


def hot_cold(hot_ops_fraction: float = 0.8, hot_space_fraction: float = 0.2) -> Workload:
    """`hot_ops_fraction` of the requests go to `hot_space_fraction` of the space (80/20 by default)."""
    for key, value in (("hot_ops_fraction", hot_ops_fraction), ("hot_space_fraction", hot_space_fraction)):
        if not 0 < value < 1:
            raise _error(f"{key} is {value}: must be in (0, 1)", f"workload.{key}")
    ops, space = round(hot_ops_fraction * 100), round(hot_space_fraction * 100)
    return Workload(
        f"hot-cold-{ops}/{space}",
        {
            "workload.pattern": "hot_cold",
            "workload.hot_ops_fraction": hot_ops_fraction,
            "workload.hot_space_fraction": hot_space_fraction,
        },
    )


def trace(path: str | os.PathLike[str], format: str, lba: str = "scale") -> Workload:
    """Replay the block trace at `path` in the measured phase (`lba`: error, wrap or scale)."""
    name = os.path.basename(os.fspath(path))
    return Workload(
        f"trace:{name}",
        {
            "workload.kind": "trace",
            "workload.trace.path": os.fspath(path),
            "workload.trace.format": format,
            "workload.trace.lba": lba,
        },
    )


def trace_stats(path: str | os.PathLike[str], format: str) -> dict[str, Any]:
    """One pass over the block trace at `path`: `records`, `reads`, `writes`, `trims`, `read_bytes`,
    `write_bytes`, `trim_bytes`, `max_end_bytes` (the logical extent), `first_ns`/`last_ns` (None when the
    format has no times). Errors name the line."""
    import json

    from . import _core

    return json.loads(_core.trace_stats(os.fspath(path), format))


def parse(spec: WorkloadLike) -> Workload:
    """A `Workload` from a `Workload`, a dict of `[workload]` keys (an optional `name` key names it) or
    a short name: `uniform`, `sequential`, `zipf[:THETA]`, `hot_cold[:OPS/SPACE]` (percentages)."""
    if isinstance(spec, Workload):
        return spec
    if isinstance(spec, Mapping):
        keys = dict(spec)
        name = str(keys.pop("name", "")) or _name_of(keys)
        if "trace" in keys:
            trace_keys = keys.pop("trace")
            overrides = {"workload.kind": "trace"}
            overrides.update({f"workload.trace.{k}": v for k, v in dict(trace_keys).items()})
        else:
            overrides = {}
        overrides.update({k if "." in k else f"workload.{k}": v for k, v in keys.items()})
        return Workload(name, overrides)
    if isinstance(spec, str):
        return _parse_name(spec)
    raise TypeError(f"workload must be a Workload, dict or name, not {type(spec).__name__}")


def _name_of(keys: Mapping[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in keys.items()) or "default"


def _parse_name(text: str) -> Workload:
    kind, _, arg = text.strip().partition(":")
    kind = kind.replace("-", "_")
    try:
        if kind == "uniform" and not arg:
            return uniform()
        if kind == "sequential" and not arg:
            return sequential()
        if kind == "zipf":
            return zipf(float(arg)) if arg else zipf()
        if kind == "hot_cold":
            if not arg:
                return hot_cold()
            ops, _, space = arg.partition("/")
            return hot_cold(float(ops) / 100, float(space) / 100)
    except ValueError:
        pass
    raise _error(
        f"unknown workload `{text}`: use uniform, sequential, zipf[:THETA] or hot_cold[:OPS/SPACE] "
        "(e.g. zipf:1.2, hot_cold:90/10), or a table of [workload] keys",
        "workload",
    )


def _error(msg: str, key: str) -> ConfigError:
    err = ConfigError(msg)
    err.key = key
    return err
