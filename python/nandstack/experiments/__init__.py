"""The experiment registry: one module per experiment in this package, each defining `EXPERIMENT`.

To add one, create `nandstack/experiments/<name>.py` (module name with underscores, experiment name with
hyphens) defining `EXPERIMENT = Experiment(...)`; it is found automatically. See docs/experiments.md.

    >>> from nandstack import experiments
    >>> names = [e.name for e in experiments.all_experiments()]
    >>> names[:5]
    ['diss', 'ezswap', 'gc-policies-vs-op', 'hot-cold-skew', 'kernel-swap']
    >>> names[5:10]
    ['kernel-zram', 'kernel-zswap', 'live-vs-model', 'rl-slc-cache', 'sup-gc']
    >>> names[10:]
    ['tail-latency', 'trace-replay', 'znswap']
"""

from __future__ import annotations

import importlib
import pkgutil

from .._core import NandstackError
from .base import (
    Analysis,
    Experiment,
    Figure,
    Series,
    Table,
    config_task,
    fifo_waf,
    make_hybrid_task,
    make_task,
    results_frame,
    summarize,
)

__all__ = [
    "Analysis",
    "Experiment",
    "Figure",
    "Series",
    "Table",
    "all_experiments",
    "config_task",
    "fifo_waf",
    "get",
    "make_hybrid_task",
    "make_task",
    "names",
    "results_frame",
    "summarize",
]

_NOT_EXPERIMENTS = frozenset({"base"})


def all_experiments() -> list[Experiment]:
    """Every registered experiment, sorted by name."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_") or info.name in _NOT_EXPERIMENTS:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        experiment = getattr(module, "EXPERIMENT", None)
        if isinstance(experiment, Experiment):
            found.append(experiment)
    return sorted(found, key=lambda e: e.name)


def names() -> list[str]:
    return [e.name for e in all_experiments()]


def get(name: str) -> Experiment:
    """The experiment called `name` (hyphens or underscores)."""
    wanted = name.strip().lower().replace("_", "-")
    for experiment in all_experiments():
        if experiment.name == wanted:
            return experiment
    raise NandstackError(f"no experiment `{name}`: one of {', '.join(names())} (nandstack reproduce --list)")
