"""The other simulation models behind the same engine: the host memory/swap model (`run_host`,
docs/model-host.md) and the hybrid SLC/QLC SSD with its SLC-cache managers (`run_hybrid`, docs/hybrid.md).
Both take a config dict (their own schemas; unknown keys are errors naming the key) and return the report
as a dict. The GIL is released while they run; Ctrl-C raises `KeyboardInterrupt`.

A config may carry `"model": "hybrid"` at its top level: that is how sweeps, experiments and the results
database tell a hybrid config from a block-SSD one (`model_of`); `run_hybrid` accepts and drops it.
`hybrid_result` wraps a hybrid report as a `nandstack.Result` (its `series` as the `timeseries` frame), so
hybrid runs are recorded, resumed and queried like any other run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable

from . import _core
from ._core import ConfigError

if TYPE_CHECKING:
    from ._api import Result

__all__ = [
    "MODELS",
    "host_stack_config",
    "hybrid_config",
    "hybrid_default_config",
    "hybrid_result",
    "model_of",
    "normalize_hybrid_config",
    "run_host",
    "run_hybrid",
]

#: The models a config's top-level `model` key may name (`block` when absent).
MODELS = ("block", "hybrid")
#: The hybrid report's `series` columns that become the result's time series, in this order.
HYBRID_SERIES = (
    "host_write_bytes",
    "slc_blocks",
    "slc_used_blocks",
    "theta_bytes",
    "utilization",
    "waf_cumulative",
    "throughput_interval_mib_per_s",
)

Progress = Callable[[str, int, int], None]


def run_host(
    config: Mapping[str, Any],
    *,
    seed: int | None = None,
    verify: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run host programs (`processes`) on the host memory/swap model and a device: an alias of
    `nandstack.run` for configs shaped `{seed, host, processes, device, run}` (see `host_stack_config`).
    Returns the summary (the host's figures under `host`, e.g. `summary["host"]["swap"]["pswpout"]`).
    Not recorded in the results database."""
    from ._api import run

    stack = host_stack_config(config)
    return run(stack, seed=seed, verify=verify, progress=progress, record=False).summary


def host_stack_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """A host-program config in the one schema: `processes` become `[[workload.processes]]` (with
    `workload.kind = "host"`); `host`, `device` and `seed` stay; `run.series_interval_ms` becomes
    `run.interval_sim_seconds` and `run.verify_every_refs` `run.verify_every`."""
    data = json.loads(json.dumps(dict(config)))
    out: dict[str, Any] = {
        "workload": {"kind": "host", "processes": data.pop("processes", [])},
    }
    run_keys = dict(data.pop("run", {}) or {})
    if "series_interval_ms" in run_keys:
        run_keys["interval_sim_seconds"] = run_keys.pop("series_interval_ms") / 1000.0
    if "verify_every_refs" in run_keys:
        run_keys["verify_every"] = run_keys.pop("verify_every_refs")
    if run_keys:
        out["run"] = run_keys
    out.update(data)
    return out


def run_hybrid(
    config: Mapping[str, Any],
    *,
    seed: int | None = None,
    verify: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run the hybrid SLC/QLC SSD with the SLC-cache manager named in `config["manager"]["kind"]`."""
    return json.loads(_core.run_hybrid(json.dumps(_engine_form(config)), seed, verify, progress))


def hybrid_default_config() -> dict[str, Any]:
    """The hybrid simulation's default config with every key filled in."""
    return json.loads(_core.hybrid_default_config_json())


def model_of(config: Mapping[str, Any]) -> str:
    """Which model a config is for: its top-level `model` key (`block` when absent)."""
    model = config.get("model", "block")
    if model not in MODELS:
        raise ConfigError(f"model: `{model}` is not a model: one of {', '.join(MODELS)}")
    return str(model)


def hybrid_config(overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The hybrid default config (marked `"model": "hybrid"`) with dotted `overrides` applied
    (`{"manager.kind": "rl", "workload.standin.name": "tpcc"}`); a value `None` deletes the key."""
    from .config import _without_none, set_path, split_key

    # Unset options (null in the defaults) are left out, so an override can set a table under them.
    config: dict[str, Any] = {"model": "hybrid", **_without_none(hybrid_default_config())}
    for key, value in (overrides or {}).items():
        path = split_key(key)
        if value is None:
            parent = config
            for part in path[:-1]:
                parent = parent.get(part) or {}
            if isinstance(parent, dict):
                parent.pop(path[-1], None)
        else:
            set_path(config, path, value)
    return config


def normalize_hybrid_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The engine's effective form of a hybrid config (every default filled in, `"model": "hybrid"`);
    raises `ConfigError` naming the bad key."""
    return {"model": "hybrid", **json.loads(_core.validate_hybrid_config(json.dumps(_engine_form(config))))}


def hybrid_result(report: Mapping[str, Any], config: Mapping[str, Any]) -> Result:
    """A hybrid report as a `nandstack.Result`: `summary` is the report plus `model` and a `timeseries`
    (`series` as columns/rows), `config` the hybrid config marked with `"model": "hybrid"`."""
    from ._api import Result

    summary = {"model": "hybrid", **report}
    series = report.get("series") or []
    if series:
        summary["timeseries"] = {
            "columns": list(HYBRID_SERIES),
            "rows": [[s.get(c) for c in HYBRID_SERIES] for s in series],
        }
    return Result(summary, {"model": "hybrid", **_engine_form(config)})


def _engine_form(config: Mapping[str, Any]) -> dict[str, Any]:
    """`config` without the `model` marker (checked: only `hybrid` is accepted here)."""
    data = dict(config)
    model = data.pop("model", "hybrid")
    if model != "hybrid":
        raise ConfigError(f"model: this is a `{model}` config, not a hybrid one")
    return data
