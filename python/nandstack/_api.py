"""`nandstack.run`: one simulation from Python, returning a `Result`."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Callable, Union

from . import _core
from ._core import ConfigError
from .config import Overrides, apply_overrides, load_config

__all__ = ["ProgressCallback", "Result", "run"]

#: Called as `progress(phase, done, total)`; raise to stop the run (the exception propagates).
ProgressCallback = Callable[[str, int, int], None]
ConfigLike = Union[Mapping[str, Any], str, os.PathLike, None]


class Result:
    """The report of one run: `summary` is the report dict, `config` the effective config that produced it."""

    __slots__ = ("config", "summary")

    def __init__(self, summary: dict[str, Any], config: dict[str, Any]) -> None:
        self.summary = summary
        self.config = config

    def __getitem__(self, key: str) -> Any:
        return self.summary[key]

    def __contains__(self, key: object) -> bool:
        return key in self.summary

    def __iter__(self) -> Iterator[str]:
        return iter(self.summary)

    def get(self, key: str, default: Any = None) -> Any:
        return self.summary.get(key, default)

    def to_json(self, indent: int | None = 2) -> str:
        """The report as JSON (keys in the engine's order)."""
        return json.dumps(self.summary, indent=indent)

    def __repr__(self) -> str:
        waf = self.summary.get("waf")
        return f"Result(waf={waf!r}, keys={len(self.summary)})"


def run(
    config: ConfigLike = None,
    *,
    seed: int | None = None,
    verify: bool = False,
    set: Overrides = (),
    progress: ProgressCallback | None = None,
) -> Result:
    """Run one simulation.

    `config` is a config dict, a path to a TOML file, or `None` for the default config. `set` applies
    overrides (`["workload.read_fraction=0.3"]` or `{"workload.read_fraction": 0.3}`); `seed` overrides
    the config's seed; `verify` checks read-after-write versions and FTL invariants during the run.
    The GIL is released while the engine runs; Ctrl-C raises `KeyboardInterrupt`.
    """
    effective = resolve_config(config, set)
    if seed is not None:
        effective["seed"] = seed  # the effective config, and the report's copy of it, name the seed used
    try:
        config_json = json.dumps(effective, allow_nan=False)
    except ValueError as e:  # nan/inf have no JSON form
        raise ConfigError(f"config value cannot be passed to the engine: {e}") from None
    report = _core.run(config_json, seed, verify, progress)
    summary = json.loads(report)
    if "seed" in summary:
        effective["seed"] = summary["seed"]  # so that `config` alone reproduces the run
    return Result(summary, effective)


def resolve_config(config: ConfigLike, overrides: Overrides = ()) -> dict[str, Any]:
    """The effective config dict for `config` (dict, TOML path or None) with `overrides` applied."""
    if config is None or isinstance(config, (str, Path, os.PathLike)):
        return load_config(config, overrides)
    if isinstance(config, Mapping):
        return apply_overrides(json.loads(json.dumps(config)), overrides)  # deep copy, JSON-able check
    raise TypeError(f"config must be a dict, a path or None, not {type(config).__name__}")
