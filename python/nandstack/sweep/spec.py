"""Sweep specs: a TOML file naming a base config, fixed overrides, a parameter grid and/or a list of
points, workloads and seeds. `load_spec` reads one; `SweepSpec.tasks()` expands it into `Task`s.

    name = "op-vs-policy"              # recorded as the runs' `sweep`
    config = "base.toml"               # optional, relative to the spec; default: the built-in config
    preset = "host-swap-block"         # or a preset (`nandstack run --list-presets`) as the base
    seeds = [1, 2]                     # or a count: seeds = 3 means 1, 2, 3
    tags = ["example"]

    [set]                              # overrides applied to every run
    "workload.requests" = 100000

    [grid]                             # the cartesian product of these values
    "device.ftl.over_provisioning" = [0.07, 0.14, 0.28]
    "device.ftl.gc.victim.policy" = ["greedy", "fifo"]

    [[points]]                         # extra points, each a table of overrides
    "device.ftl.gc.victim" = { policy = "d_choices", d = 4 }

    [workloads]                        # named workloads: a name (uniform, zipf:0.99, hot_cold:90/10)
    uniform = "uniform"                # or a table of [workload] keys
    zipf = { pattern = "zipf", zipf_theta = 0.99 }

Runs = (grid product + points) × workloads × seeds, in that nesting order. Keys may be quoted dotted
paths (`"device.ftl.over_provisioning"`) or nested tables (`[grid.ftl] over_provisioning = [...]`).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import _toml
from .._config_obj import canonical_json, config_hash
from .._core import ConfigError
from ..config import apply_overrides, check_depth, load_config, loads_toml, read_text
from ..workloads import Workload
from ..workloads import parse as parse_workload

__all__ = ["SweepSpec", "Task", "load_spec"]

SPEC_KEYS = frozenset(
    {"name", "description", "config", "preset", "seeds", "tags", "set", "grid", "points", "workloads"}
)
MAX_TASKS = 100_000


@dataclass(frozen=True)
class Task:
    """One run of a sweep or an experiment: a full config plus the parameters that identify it."""

    config: Mapping[str, Any]
    params: Mapping[str, Any]
    config_hash: str
    label: str = ""

    def payload(self, verify: bool = False) -> dict[str, Any]:
        """What a worker needs (plain, picklable data)."""
        return {"config": dict(self.config), "verify": verify}


@dataclass
class SweepSpec:
    """A parsed sweep spec (see the module doc for the TOML form)."""

    name: str
    base: dict[str, Any]
    set: dict[str, Any] = field(default_factory=dict)
    grid: dict[str, list[Any]] = field(default_factory=dict)
    points: list[dict[str, Any]] = field(default_factory=list)
    workloads: list[Workload] = field(default_factory=list)
    seeds: list[int] = field(default_factory=lambda: [1])
    tags: list[str] = field(default_factory=list)
    description: str = ""

    def size(self) -> int:
        combos = (_product_size(self.grid) if self.grid else 0) + len(self.points)
        return max(combos, 1) * max(len(self.workloads), 1) * len(self.seeds)

    def tasks(self) -> list[Task]:
        """Every run of the sweep, each config validated by the engine (a bad key or value raises
        `ConfigError` naming it and the point it came from)."""
        if self.size() > MAX_TASKS:
            raise ConfigError(f"sweep `{self.name}` has {self.size():,} runs: more than {MAX_TASKS:,}")
        combos = [dict(zip(self.grid, values)) for values in itertools.product(*self.grid.values())]
        if not self.grid:
            combos = []
        combos += [dict(p) for p in self.points]
        combos = combos or [{}]
        workloads: list[Workload | None] = list(self.workloads) or [None]
        tasks = []
        for combo, workload, seed in itertools.product(combos, workloads, self.seeds):
            config = apply_overrides(_copy(self.base), self.set)
            if workload is not None:
                apply_overrides(config, dict(workload.overrides))
            apply_overrides(config, combo)
            config["seed"] = seed
            params = {**combo, **({"workload": workload.name} if workload else {}), "seed": seed}
            label = ", ".join(f"{k}={_short(v)}" for k, v in params.items())
            try:
                digest = config_hash(config)
            except ConfigError as e:
                raise _located(e, f"sweep `{self.name}`, run {label}") from None
            tasks.append(Task(config=config, params=params, config_hash=digest, label=label))
        return tasks


def load_spec(path: str | os.PathLike[str]) -> SweepSpec:
    """Read a sweep spec TOML file (`config` is resolved relative to it)."""
    path = Path(path)
    data = loads_toml(read_text(path), str(path))
    return spec_from_dict(data, name=path.stem, root=path.parent)


def spec_from_dict(data: Mapping[str, Any], name: str = "sweep", root: Path | None = None) -> SweepSpec:
    """A `SweepSpec` from the parsed TOML form (or the same structure from JSON or Python): every key of
    the wrong type is a `ConfigError` naming it."""
    if not isinstance(data, Mapping):
        raise _error(f"a sweep spec is a table of keys, not a {type(data).__name__}", "")
    check_depth(data, "sweep spec")
    unknown = sorted(str(k) for k in set(data) - SPEC_KEYS)
    if unknown:
        raise _error(
            f"unknown sweep spec key `{unknown[0]}` (expected one of {sorted(SPEC_KEYS)})", unknown[0]
        )
    base_path = data.get("config")
    if base_path is not None and data.get("preset") is not None:
        raise _error("give `config` or `preset`, not both", "preset")
    for key in ("name", "description", "config", "preset"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise _error(f"`{key}` must be text, not {_kind(data[key])}", key)
    if data.get("preset") is not None:
        from .. import _core

        base = _toml.loads(_core.preset_toml(str(data["preset"])))
    else:
        if base_path is not None:
            base_path = Path(base_path) if root is None else root / base_path
        base = load_config(base_path)
    grid = _dotted(_table(data, "grid"), "grid")
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise _error(f"grid value `{key}` must be a non-empty list of values", f"grid.{key}")
    points = data.get("points", [])
    if not isinstance(points, list) or not all(isinstance(p, Mapping) for p in points):
        raise _error("`points` must be an array of tables ([[points]])", "points")
    return SweepSpec(
        name=str(data.get("name", name)),
        description=str(data.get("description", "")),
        base=base,
        set=_dotted(_table(data, "set"), "set"),
        grid=grid,
        points=[_dotted(p, "points") for p in points],
        workloads=_workloads(data.get("workloads")),
        seeds=_seeds(data.get("seeds", [1])),
        tags=_tags(data.get("tags", [])),
    )


def _tags(value: Any) -> list[str]:
    """`tags = "a"` is one tag (never its letters); `tags = ["a", "b"]` two."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(t, (str, int, float)) for t in value):
        return [str(t) for t in value]
    raise _error("`tags` must be a string or an array of strings", "tags")


def _workloads(value: Any) -> list[Workload]:
    if value is None:
        return []
    if isinstance(value, Mapping):
        named = value.items()
        return [Workload(str(n), _workload(spec, f"workloads.{n}").overrides) for n, spec in named]
    if isinstance(value, list):
        return [_workload(v, f"workloads[{i}]") for i, v in enumerate(value)]
    raise _error("`workloads` must be a table of named workloads or an array of names", "workloads")


def _workload(spec: Any, key: str) -> Workload:
    """One workload of the spec: a name or a table of `[workload]` keys; `ConfigError` naming `key`."""
    if not isinstance(spec, (str, Mapping)):
        raise _error(
            f"`{key}` is {_kind(spec)}: a workload is a name (`zipf:0.99`) or a table of [workload] keys", key
        )
    if isinstance(spec, Mapping) and not all(isinstance(k, str) for k in spec):
        raise _error(f"`{key}`: workload keys must be text", key)
    if isinstance(spec, Mapping) and "trace" in spec and not isinstance(spec["trace"], Mapping):
        raise _error(f"`{key}.trace` must be a table of [workload.trace] keys", f"{key}.trace")
    try:
        return parse_workload(spec)
    except (ValueError, TypeError) as e:
        raise _error(f"`{key}`: {e}", key) from None


def _kind(value: Any) -> str:
    return f"{type(value).__name__} `{str(value)[:40]}`"


def _seeds(value: Any) -> list[int]:
    if isinstance(value, bool):
        raise _error("`seeds` must be a count or an array of integers", "seeds")
    if isinstance(value, int):
        if not 1 <= value <= MAX_TASKS:
            raise _error(f"`seeds` is {value}: must be at least 1 and at most {MAX_TASKS:,}", "seeds")
        return list(range(1, value + 1))
    if (
        isinstance(value, list)
        and value
        and all(isinstance(s, int) and not isinstance(s, bool) for s in value)
    ):
        return list(dict.fromkeys(value))
    raise _error("`seeds` must be a count or a non-empty array of integers", "seeds")


def _table(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise _error(f"`{key}` must be a table", key)
    return value


def _dotted(table: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Nested tables flattened to dotted keys; a leaf is any non-table value (lists included). Outside
    `grid`, a table with a `policy` key is a whole tagged value (`{ policy = "d_choices", d = 4 }`) and
    replaces the config's table rather than merging into it."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        if not isinstance(key, str):
            raise _error(f"`{where}` key {key!r} is a {type(key).__name__}: keys are text", where)
        if isinstance(value, Mapping) and (where == "grid" or "policy" not in value):
            for sub, leaf in _dotted(value, where).items():
                out[f"{key}.{sub}"] = leaf
        else:
            out[str(key)] = value
    return out


def _product_size(grid: Mapping[str, Sequence[Any]]) -> int:
    size = 1
    for values in grid.values():
        size *= len(values)
    return size


def _copy(config: Mapping[str, Any]) -> dict[str, Any]:
    import json

    return json.loads(canonical_json(dict(config)))


def _short(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{k}={_short(v)}" for k, v in value.items()) + "}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _error(msg: str, key: str) -> ConfigError:
    err = ConfigError(msg)
    err.key = key
    return err


def _located(err: ConfigError, where: str) -> ConfigError:
    located = ConfigError(f"{where}: {err}")
    located.key = getattr(err, "key", "")
    return located
