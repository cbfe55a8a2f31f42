"""`nandstack.run`: one simulation from Python, returning a `Result`."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Union

from . import _core
from ._config_obj import Config, canonical_json, config_hash
from ._summary import Device, Latency, flatten_metrics, timeseries_frame
from .config import Overrides, apply_overrides, load_config
from .workloads import WorkloadLike
from .workloads import parse as parse_workload

if TYPE_CHECKING:
    import polars as pl

    from .results import ResultsDB

__all__ = ["Interrupted", "ProgressCallback", "Result", "run"]

#: Called as `progress(phase, done, total)`; raise to stop the run (the exception propagates).
ProgressCallback = Callable[[str, int, int], None]
ConfigLike = Union[Config, Mapping[str, Any], str, os.PathLike, None]


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _reported(key: str, convert: Callable[[Any], Any], default: Any = None, doc: str | None = None) -> Any:
    """A `Result` property: the summary's `key` through `convert` (`default` when the key is absent); the
    class annotates it with the type `convert` gives."""
    return property(lambda self: convert(self.summary.get(key, default)), doc=doc)


class Result:
    """The report of one run.

    `summary` is the engine's report dict (keys in docs/metrics.md; `result["waf"]` indexes it), `config`
    the effective config dict that reproduces the run. Typed views: `waf`, `iops`, `write_latency` (a
    `Latency`), `device` (a `Device`), ...; `metrics` is the flat numeric summary (the columns of the
    results database); `timeseries` is the interval time series as a polars DataFrame. `run_id` is set
    when the run was recorded in the results database.
    """

    __slots__ = ("_timeseries", "config", "run_id", "summary")

    def __init__(self, summary: dict[str, Any], config: dict[str, Any], run_id: str | None = None) -> None:
        self.summary = summary
        self.config = config
        self.run_id = run_id
        self._timeseries: pl.DataFrame | None = None

    # --- dict-like access to the report -------------------------------------------------------------
    def __getitem__(self, key: str) -> Any:
        return self.summary[key]

    def __contains__(self, key: object) -> bool:
        return key in self.summary

    def __iter__(self) -> Iterator[str]:
        return iter(self.summary)

    def get(self, key: str, default: Any = None) -> Any:
        return self.summary.get(key, default)

    # --- typed views --------------------------------------------------------------------------------
    waf: float | None = _reported(
        "waf",
        _float,
        doc="Write amplification (flash page programs ÷ host pages written); `None` if nothing was written.",
    )
    iops: float | None = _reported(
        "iops", _float, doc="Requests per simulated second (`None` with timing off)."
    )
    throughput_mb_per_s: float | None = _reported("throughput_mb_per_s", _float)
    sim_seconds: float | None = _reported("sim_seconds", _float)

    @property
    def wall_seconds(self) -> float:
        return float(self.summary.get("wall_seconds", 0.0)) + float(
            self.summary.get("wall_seconds_precondition", 0.0)
        )

    @property
    def seed(self) -> int:
        return int(self.summary.get("seed", self.config.get("seed", 0)))

    requests: int = _reported("requests", int, 0)
    host_write_bytes: int = _reported("host_write_bytes", int, 0)
    flash_program_pages: int = _reported("flash_program_pages", int, 0)
    gc_migrated_pages: int = _reported("gc_migrated_pages", int, 0)
    flash_erases: int = _reported("flash_erases", int, 0)

    @property
    def write_latency(self) -> Latency | None:
        """Write latency percentiles in µs (`None` with timing off or without writes)."""
        return Latency.from_report(self.summary.get("write_latency_us"))

    @property
    def read_latency(self) -> Latency | None:
        return Latency.from_report(self.summary.get("read_latency_us"))

    @property
    def device(self) -> Device:
        """The device as built (capacity, geometry, effective over-provisioning, ...)."""
        return Device.from_report(self.summary.get("device", {}))

    @property
    def metrics(self) -> dict[str, float]:
        """Every numeric report value, flattened with `_` (`write_latency_us_p99`, `device_blocks`)."""
        return flatten_metrics(self.summary)

    @property
    def timeseries(self) -> pl.DataFrame:
        """The interval time series (one row per interval; columns in docs/model-timing.md). A series the
        engine streamed to a CSV file is read from there."""
        if self._timeseries is None:
            series = self.summary.get("timeseries") or {}
            if not series.get("rows") and series.get("path") and os.path.exists(series["path"]):
                import polars as pl

                self._timeseries = pl.read_csv(
                    series["path"], schema={c: pl.Float64 for c in series["columns"]}
                )
            else:
                self._timeseries = timeseries_frame(series)
        return self._timeseries

    @property
    def interrupted(self) -> bool:
        """The run was stopped (Ctrl-C) during its measured phase: the figures cover what ran."""
        return bool(self.summary.get("interrupted", False))

    @property
    def config_hash(self) -> str:
        """The stable hash of the effective config with the seed (see `nandstack.Config.hash`)."""
        return config_hash(self.summary.get("config") or self.config)

    def to_json(self, indent: int | None = 2) -> str:
        """The report as JSON (keys in the engine's order)."""
        return json.dumps(self.summary, indent=indent)

    def __repr__(self) -> str:
        run = f", run_id={self.run_id!r}" if self.run_id else ""
        return f"Result(waf={self.summary.get('waf')!r}, keys={len(self.summary)}{run})"


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or a `KeyboardInterrupt` from a progress callback) during a run's measured phase. A
    `KeyboardInterrupt`, so it stops programs as Ctrl-C does; `result` is the partial run (its summary
    says `"interrupted": true`), or `None` when the run was stopped before measuring."""

    def __init__(self, result: Result | None = None) -> None:
        super().__init__("interrupted")
        self.result = result


def run(
    config: ConfigLike = None,
    *,
    workload: WorkloadLike | None = None,
    seed: int | None = None,
    verify: bool = False,
    set: Overrides = (),
    progress: ProgressCallback | None = None,
    record: bool = True,
    db: str | os.PathLike[str] | ResultsDB | None = None,
    tags: Iterable[str] = (),
    label: str | None = None,
    experiment: str | None = None,
    series_csv: str | os.PathLike[str] | None = None,
) -> Result:
    """Run one simulation.

    `config` is a `Config`, a config dict, a path to a TOML file, or `None` for the default config.
    `workload` (a `nandstack.workloads.Workload`, a dict of `[workload]` keys or a name such as
    `"zipf:0.99"`) is applied next, then `set` (`["workload.read_fraction=0.3"]` or
    `{"workload.read_fraction": 0.3}`); `seed` overrides the config's seed; `verify` checks
    read-after-write versions and FTL invariants during the run.

    The run is recorded in the results database (`db`, else `$NANDSTACK_DB`, else the user data dir)
    with its `tags`, `label` and `experiment` unless `record=False`. `series_csv` streams the time
    series to that CSV file as it is produced (memory stays bounded) instead of keeping it in the result.
    The GIL is released while the engine runs; Ctrl-C raises `Interrupted` (a `KeyboardInterrupt`) whose
    `result` is the partial run when the measured phase had begun; nothing is recorded then.
    """
    effective = resolve_config(config, set, workload)
    _check_seed(seed)
    if seed is not None:
        effective["seed"] = seed  # the effective config, and the report's copy of it, name the seed used
    series_path = None if series_csv is None else os.fspath(series_csv)
    try:
        report = _core.run(canonical_json(effective), seed, verify, progress, series_path)
    except KeyboardInterrupt as e:
        partial = getattr(e, "partial_report", None)
        if partial is None:
            raise Interrupted(None) from None
        raise Interrupted(Result(json.loads(partial), effective)) from None
    result = result_of(report, effective)
    if record:
        from .results import ResultsDB

        store = db if isinstance(db, ResultsDB) else ResultsDB(db)
        store.record(result, source="api", tags=tags, label=label, experiment=experiment, verify=verify)
    return result


def result_of(report: str, effective: dict[str, Any]) -> Result:
    """The `Result` of the engine's report (JSON) for the config `effective` (which takes the seed the
    run used, so that `config` alone reproduces it)."""
    summary = json.loads(report)
    if "seed" in summary:
        effective["seed"] = summary["seed"]
    return Result(summary, effective)


def resolve_config(
    config: ConfigLike, overrides: Overrides = (), workload: WorkloadLike | None = None
) -> dict[str, Any]:
    """The effective config dict for `config` (Config, dict, TOML path or None) with `workload` and
    `overrides` applied (in that order)."""
    if isinstance(config, Config):
        effective = config.to_dict()
    elif config is None or isinstance(config, (str, Path, os.PathLike)):
        effective = load_config(config)
    elif isinstance(config, Mapping):
        effective = json.loads(canonical_json(dict(config)))  # deep copy, JSON-able check
    else:
        raise TypeError(f"config must be a Config, dict, path or None, not {type(config).__name__}")
    if workload is not None:
        apply_overrides(effective, dict(parse_workload(workload).overrides))
    return apply_overrides(effective, overrides)


def _check_seed(seed: Any) -> None:
    """`seed` is None or an integer the engine can hold (0 to 2**64 - 1): a `ConfigError` naming `seed`."""
    if seed is None:
        return
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 1 << 64:
        err = _core.ConfigError(f"seed must be an integer from 0 to 2**64 - 1, not {seed!r}")
        err.key = "seed"
        raise err
