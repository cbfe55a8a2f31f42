"""The parts an experiment module declares: its runs (`Task`s built from a base config and points),
and what it makes of their results (`Analysis`: the measured result, figures as data, tables).

Figures are plain data (`Figure` of `Series`) so an experiment never imports matplotlib; the report
renders them (PNG + SVG) and the HTML page shows them next to the paper's claim.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from .._config_obj import config_hash
from ..config import load_config
from ..sweep.spec import Task

if TYPE_CHECKING:
    import polars as pl

    from .._api import Result

__all__ = [
    "Analysis",
    "Experiment",
    "Figure",
    "Series",
    "Table",
    "config_task",
    "fifo_waf",
    "make_hybrid_task",
    "make_preset_task",
    "make_task",
    "plane_device",
    "random_waf",
    "results_frame",
    "shift_seeds",
    "steady_state",
    "summarize",
]


@dataclass(frozen=True)
class Series:
    """One line (or bar group) of a figure; `yerr` is drawn as error bars (e.g. the std over seeds)."""

    label: str
    x: Sequence[Any]
    y: Sequence[float | None]
    yerr: Sequence[float] | None = None
    style: str = "line"  # line (markers joined), dashed (a model curve, no markers), points, bar


@dataclass(frozen=True)
class Figure:
    """A figure as data: the report draws it with matplotlib and writes `<name>.png` and `<name>.svg`."""

    name: str
    title: str
    xlabel: str
    ylabel: str
    series: Sequence[Series]
    caption: str = ""
    logy: bool = False
    kind: str = "line"  # line; bar (x values are categories); stacked (bars, the series stacked in order)


@dataclass(frozen=True)
class Table:
    """A result table: written as `<name>.csv` and shown in the HTML page."""

    name: str
    title: str
    frame: pl.DataFrame
    caption: str = ""


@dataclass
class Analysis:
    """What an experiment measured: `measured` is the one-paragraph result shown beside the paper's
    claim; `verdict` is `agrees`, `partly agrees`, `differs` or `not comparable`; `headline` (optional)
    goes to `report.json` as is."""

    measured: str
    verdict: str
    figures: list[Figure] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: The result as data for machines, written to `report.json` as `headline` (JSON-serialisable).
    headline: dict[str, Any] = field(default_factory=dict)
    #: Extra keys of `report.json` (JSON-serialisable), e.g. a `headline` or per-program figures.
    data: dict[str, Any] = field(default_factory=dict)
    #: The paper's headline numbers against ours (`_claims.Claim.entry` dicts): `report.json` `claims`
    #: and the first table of `index.html`.
    claims: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Experiment:
    """A reproducible experiment (one module in `nandstack/experiments/`).

    `tasks(quick)` lists every run (`quick`: the ~1 minute smoke version); `analyze(tasks, results)`
    turns the results (aligned with the tasks; `None` for a failed run) into an `Analysis`;
    `setup(quick)` describes the device, workloads and seeds for the report (key → text). `method` is the
    report's one-paragraph method: a text, or `method(quick)` when what runs differs between the quick and
    the full version (the report must say what ran, not what the full run would have run).
    """

    name: str
    title: str
    paper: str
    claim: str
    method: str | Callable[[bool], str]
    tasks: Callable[[bool], list[Task]]
    analyze: Callable[[list[Task], list[Result | None]], Analysis]
    setup: Callable[[bool], dict[str, str]]
    produces: Sequence[str] = ()  # the figure and table names, for `reproduce --list`

    def method_text(self, quick: bool) -> str:
        """The method paragraph of the version that ran."""
        return self.method(quick) if callable(self.method) else self.method

    def __post_init__(self) -> None:
        if not self.name or self.name != self.name.strip().lower() or " " in self.name:
            raise ValueError(f"experiment name `{self.name}` must be lower-case with no spaces")


def make_preset_task(
    preset: str, overrides: Mapping[str, Any], params: Mapping[str, Any], drop: Sequence[str] = ()
) -> Task:
    """A `Task` for the named preset (`nandstack run --list-presets`) without its top-level sections
    `drop`, with dotted `overrides` applied (a table or array value replaces the whole value); `params`
    as for `make_task`."""
    import copy

    from .. import _toml
    from .._core import preset_toml
    from ..config import set_path, split_key

    config = _toml.loads(preset_toml(preset))
    for key in drop:
        config.pop(key, None)
    for key, value in overrides.items():
        set_path(config, split_key(key), copy.deepcopy(value))
    return _task(config, params)


def make_task(overrides: Mapping[str, Any], params: Mapping[str, Any]) -> Task:
    """A `Task` for the default config with dotted `overrides` applied; `params` identify the run in
    tables and the database (`{"policy": "fifo", "op": 0.1, "seed": 1}`; a `seed` param sets the seed)."""
    return _task(load_config(None, dict(overrides)), params)


#: The base of hybrid tasks: the paper's chip (`device.kind = "hybrid"`, the `paper` preset), the RL
#: manager, the PC stand-in at Table 4 scale issued one request at a time (as the paper's trace-driven
#: simulator does), a series row every 128 MiB written (Figs. 5-6).
HYBRID_BASE: dict[str, Any] = {
    "workload": {"kind": "standin", "standin": {"name": "pc", "scale": 1.0}, "io": {"queue_depth": 1}},
    "device": {"kind": "hybrid", "manager": {"kind": "rl"}},
    "run": {"interval_written_bytes": 128 << 20},
}


def make_hybrid_task(overrides: Mapping[str, Any], params: Mapping[str, Any]) -> Task:
    """A `Task` on the hybrid SLC/QLC SSD (docs/hybrid.md): `HYBRID_BASE` with dotted `overrides`
    applied (`{"device.manager.kind": "dwa", "workload.standin.name": "tpcc"}`; a table value replaces
    the table)."""
    import copy

    from ..config import set_path, split_key

    config = copy.deepcopy(HYBRID_BASE)
    for key, value in overrides.items():
        set_path(config, split_key(key), copy.deepcopy(value))
    return _task(config, params)


def config_task(config: dict[str, Any], params: Mapping[str, Any]) -> Task:
    """A `Task` for a whole config dict (the one schema, e.g. a host program's `workload`, `host` and
    `device` tables); `params` as for `make_task`."""
    return _task(config, params)


def _task(config: dict[str, Any], params: Mapping[str, Any]) -> Task:
    if "seed" in params:
        config["seed"] = int(params["seed"])
    label = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items())
    return Task(config=config, params=dict(params), config_hash=config_hash(config), label=label)


#: The run seed when a config sets none (docs/config-reference.md, `seed`).
DEFAULT_SEED = 42


def shift_seeds(task: Task, shift: int) -> Task:
    """`task` with every seed of its config moved by `shift`: the run seed (`seed`, 42 when unset) and
    every integer `seed` / `*_seed` key at any depth (e.g. a host program's generator seed). The params
    keep their values (analyses group by them); the label says the shift and the config hash changes.
    `shift = 0` returns the task unchanged."""
    import copy

    if shift == 0:
        return task
    config = copy.deepcopy(task.config)
    config.setdefault("seed", DEFAULT_SEED)
    _shift_seed_keys(config, shift)
    label = f"{task.label} (seeds +{shift})" if task.label else f"seeds +{shift}"
    return Task(config=config, params=dict(task.params), config_hash=config_hash(config), label=label)


def _shift_seed_keys(node: Any, shift: int) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if (
                (key == "seed" or key.endswith("_seed"))
                and isinstance(value, int)
                and not isinstance(value, bool)
            ):
                node[key] = value + shift
            else:
                _shift_seed_keys(value, shift)
    elif isinstance(node, list):
        for item in node:
            _shift_seed_keys(item, shift)


def plane_device(blocks: int, pages_per_block: int = 64, timing: bool = False) -> dict[str, Any]:
    """Overrides for a one-plane device of `blocks` × `pages_per_block` 4 KiB pages (GC sees one pool,
    as the analytic models assume); timing off unless asked (WAF does not depend on it)."""
    return {
        "device.geometry.channels": 1,
        "device.geometry.chips_per_channel": 1,
        "device.geometry.dies_per_chip": 1,
        "device.geometry.planes_per_die": 1,
        "device.geometry.blocks_per_plane": blocks,
        "device.geometry.pages_per_block": pages_per_block,
        "device.geometry.page_size_bytes": 4096,
        "device.timing.enabled": timing,
    }


def steady_state(
    blocks: int, over_provisioning: float, warmup: float, measure: float, pages_per_block: int = 64
) -> dict[str, Any]:
    """Overrides for a steady-state run on a one-plane device (`plane_device`) with `over_provisioning`:
    `warmup` capacity multiples written before measuring, then `measure` multiples of the logical space
    measured (in requests of one page)."""
    logical_units = blocks * pages_per_block / (1 + over_provisioning)
    return {
        **plane_device(blocks, pages_per_block),
        "device.ftl.over_provisioning": over_provisioning,
        "workload.requests": int(measure * logical_units),
        "precondition.warmup_capacity_multiples": warmup,
    }


def results_frame(
    tasks: Sequence[Task], results: Sequence[Result | None], metrics: Sequence[str]
) -> pl.DataFrame:
    """One row per successful run: its params, then the chosen metrics (from `Result.metrics`)."""
    import polars as pl

    rows = []
    for task, result in zip(tasks, results):
        if result is None:
            continue
        values = result.metrics
        rows.append({**task.params, **{m: values.get(m) for m in metrics}})
    if not rows:
        return pl.DataFrame()
    return pl.DataFrame(rows, infer_schema_length=None)


def summarize(frame: pl.DataFrame, by: Sequence[str], metric: str) -> pl.DataFrame:
    """Mean, std (0 for one seed) and run count of `metric` per group of `by`, sorted by `by`."""
    import polars as pl

    return (
        frame.group_by(list(by), maintain_order=True)
        .agg(
            pl.col(metric).mean().alias(f"{metric}_mean"),
            pl.col(metric).std().fill_null(0.0).alias(f"{metric}_std"),
            pl.len().alias("runs"),
        )
        .sort(list(by))
    )


def random_waf(alpha: float) -> float:
    """Uniformly random victims under uniform random writes (mean-field limit): a block's age at
    collection is geometric, so the victim's valid fraction is X = 1/(1 + α(1 − X)), i.e. X = 1/α and
    WAF = α/(α − 1) = (1 + OP)/OP — worse than FIFO's, whose age at collection is fixed."""
    return alpha / (alpha - 1.0) if alpha > 1 else math.inf


def fifo_waf(alpha: float) -> float:
    """The FIFO (and, asymptotically, uniform random) closed form: X = e^(−α(1−X)), WAF = 1/(1−X), where
    α = physical/logical = 1 + effective over-provisioning and X is the valid fraction of a victim."""
    if not alpha > 1:
        return math.inf
    x = 0.0
    for _ in range(10_000):  # a contraction for alpha > 1; converges to the root below 1
        nxt = math.exp(-alpha * (1.0 - x))
        if abs(nxt - x) < 1e-15:
            break
        x = nxt
    return 1.0 / (1.0 - x)
