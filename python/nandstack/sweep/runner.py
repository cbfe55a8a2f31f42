"""Run a list of tasks on a backend, record each finished run in the results database, skip the ones
already recorded (resume), and show progress. Shared by `nandstack sweep` and `nandstack reproduce`."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from .._core import __version__
from .backends import Backend, LocalBackend
from .spec import SweepSpec, Task

if TYPE_CHECKING:
    from .._api import Result
    from ..results import ResultsDB

__all__ = ["TaskOutcome", "run_sweep", "run_tasks"]

Progress = Callable[[str, int, int], None]


@dataclass
class TaskOutcome:
    """What happened to each task: `results[i]` is the `Result` of `tasks[i]` (run now or, when
    resuming, the newest recorded run of the same config hash), or `None` if it failed (`errors[i]`)."""

    tasks: list[Task]
    results: list[Result | None]
    errors: dict[int, str] = field(default_factory=dict)
    skipped: int = 0
    ran: int = 0
    wall_seconds: float = 0.0
    #: CPU seconds of each task run now (its worker's process time; none for recorded or shared runs).
    cpu_seconds: dict[int, float] = field(default_factory=dict)

    @property
    def total_cpu_seconds(self) -> float:
        """CPU seconds summed over the tasks run now: the machine time the runs cost, whatever the load."""
        return sum(self.cpu_seconds.values())

    @property
    def ok(self) -> bool:
        return not self.failures()

    def expected(self, i: int) -> bool:
        """Whether task `i` ended with the error its parameters say it may end with
        (`params["may_end_with"]`, a substring of the message: e.g. a kernel-capture program that runs
        out of memory at some statistics-flush phase, as the kernel's did) — an outcome, not a failure."""
        message = self.errors.get(i)
        may = self.tasks[i].params.get("may_end_with")
        return message is not None and isinstance(may, str) and bool(may) and may in message

    def failures(self) -> dict[int, str]:
        """The errors that are failures (not `expected`)."""
        return {i: m for i, m in self.errors.items() if not self.expected(i)}

    def summary_line(self) -> str:
        parts = [f"{self.ran} run", f"{self.skipped} already recorded"]
        failed = len(self.failures())
        if failed:
            parts.append(f"{failed} failed")
        if len(self.errors) > failed:
            parts.append(f"{len(self.errors) - failed} ended as their experiment allows (e.g. out of memory)")
        return (
            f"{len(self.tasks)} tasks: "
            + ", ".join(parts)
            + f" in {self.wall_seconds:.1f}s ({self.total_cpu_seconds:.1f} CPU s)"
        )


def run_tasks(
    tasks: Sequence[Task],
    *,
    backend: Backend | None = None,
    db: ResultsDB | None = None,
    record: bool = True,
    resume: bool = True,
    source: str = "sweep",
    experiment: str | None = None,
    sweep: str | None = None,
    tags: Iterable[str] = (),
    verify: bool = False,
    progress: Progress | None = None,
    phase: str = "runs",
) -> TaskOutcome:
    """Run `tasks` on `backend` (default: a local process pool), recording each run as it finishes.

    With `resume`, tasks whose config hash already has a run by this nandstack version in `db` are not
    run again; their recorded result is returned instead. Ctrl-C stops the workers and propagates
    `KeyboardInterrupt`; every run recorded before it stays in the database, whole.
    """
    from ..results import ResultsDB

    start = time.monotonic()
    tasks = list(tasks)
    store = db if db is not None else (ResultsDB() if record or resume else None)
    outcome = TaskOutcome(tasks=tasks, results=[None] * len(tasks))
    todo = list(range(len(tasks)))
    if resume and store is not None:
        recorded = store.latest([t.config_hash for t in tasks], version=__version__)
        todo = []
        for i, task in enumerate(tasks):
            if task.config_hash in recorded:
                outcome.results[i] = recorded[task.config_hash]
                outcome.skipped += 1
            else:
                todo.append(i)
    # The same config twice in one list (e.g. a grid value equal to the base) runs once.
    first: dict[str, int] = {}
    unique = [i for i in todo if first.setdefault(tasks[i].config_hash, i) == i]
    done = outcome.skipped + len(todo) - len(unique)
    if progress:
        progress(phase, done, len(tasks))
    runner = backend if backend is not None else LocalBackend()
    units = _units([tasks[i].config for i in unique], getattr(runner, "workers", None) or os.cpu_count() or 1)
    hints = _aging_hints([tasks[i].config for i in unique], units)
    payloads = [
        _unit_payload(
            [tasks[unique[k]].payload(verify) for k in unit],
            lockstep=_lockstep([tasks[unique[k]].config for k in unit]),
            aging=hint,
        )
        for unit, hint in zip(units, hints)
    ]
    tag_list = list(tags)
    # One recording process per database file: a second sweep or reproduction on it is refused by name.
    what = f"{source} {experiment or sweep or ''}".strip()
    with store.writer(what) if record and store is not None and unique else contextlib.nullcontext():
        for u, unit_data in runner.run(payloads):
            members = unit_data.get("group", [unit_data])
            for k, result_data in zip(units[u], members):
                i = unique[k]
                if isinstance(result_data.get("cpu_seconds"), (int, float)):
                    outcome.cpu_seconds[i] = float(result_data["cpu_seconds"])
                if "error" in result_data:
                    outcome.errors[i] = str(result_data["error"])
                else:
                    result = _result(result_data)
                    if record and store is not None:
                        store.record(
                            result,
                            source=source,
                            experiment=experiment,
                            sweep=sweep,
                            label=tasks[i].label,
                            tags=tag_list,
                            params=_plain(tasks[i].params),
                            verify=verify,
                        )
                    outcome.results[i] = result
                    outcome.ran += 1
                done += 1
                if progress:
                    progress(phase, done, len(tasks))
    for i in todo:  # duplicates share the result of their first occurrence
        j = first[tasks[i].config_hash]
        if i != j:
            outcome.results[i] = outcome.results[j]
            if j in outcome.errors:
                outcome.errors[i] = outcome.errors[j]
    outcome.wall_seconds = time.monotonic() - start
    return outcome


def run_sweep(
    spec: SweepSpec,
    *,
    backend: Backend | None = None,
    db: ResultsDB | None = None,
    resume: bool = True,
    verify: bool = False,
    progress: Progress | None = None,
) -> TaskOutcome:
    """Expand `spec` into tasks (validating every config first) and run them; see `run_tasks`."""
    return run_tasks(
        spec.tasks(),
        backend=backend,
        db=db,
        resume=resume,
        source="sweep",
        sweep=spec.name,
        tags=spec.tags,
        verify=verify,
        progress=progress,
        phase=spec.name,
    )


def _share_key(config: dict[str, Any]) -> str | None:
    """Configs with the same key run one after another in one worker: hybrid RL runs after the same
    `[[pretrain]]` chain (the same config but for the measured workload), whose second run takes the
    chain's result from the engine's per-process memo (`nandstack_sim::pretrain`) instead of learning
    again. Only a hint: the engine's own key decides what is reused."""
    if not config.get("pretrain"):
        return None
    return json.dumps({k: v for k, v in config.items() if k != "workload"}, sort_keys=True, default=str)


def _aging_key(config: dict[str, Any]) -> str | None:
    """Configs with the same key age the same device (`nandstack_sim::aged`: the engine keeps the last
    aged block or hybrid device of a process and a run with the same aging starts from a copy of it).
    `None` when the run ages nothing or its device cannot be copied. Only a hint, like `_share_key`."""
    device = config.get("device") or {}
    rl = (device.get("manager") or {}).get("rl") or {}
    # Copyable kinds; a pre-trained or loaded RL agent is not part of the aging (the engine keeps none).
    copyable = device.get("kind", "block") in ("block", "hybrid")
    if not copyable or config.get("pretrain") or rl.get("load_q_table"):
        return None
    pre = config.get("precondition") or {}
    workload = config.get("workload") or {}
    host = workload.get("kind") == "host"
    fractions = (pre.get("fill_fraction"), pre.get("warmup_capacity_multiples"))
    # Host programs age only when asked; block workloads by the device kind's defaults unless both are 0.
    if (host and not any(fractions)) or (not host and fractions == (0, 0)):
        return None
    if host:
        synthetic = None
    elif workload.get("kind") == "standin":  # the warm-up draws from `[workload.synthetic]` alone
        synthetic = workload.get("synthetic")
    else:
        synthetic = {k: v for k, v in workload.items() if k != "trace"}
    facts = {"device": device, "precondition": pre, "seed": config.get("seed"), "synthetic": synthetic}
    return json.dumps(facts, sort_keys=True, default=str)


def _stream_key(config: dict[str, Any]) -> str | None:
    """Host programs with the same key read the same reference streams (their processes' workloads, the
    seed and the data folder decide them): a group of them runs side by side in one engine call, each
    stream generated once (`nandstack_sim::hostrun::lockstep`). `None` for other runs and for runs that
    write their references out. Only a hint: the engine compares the workloads it built."""
    workload = config.get("workload") or {}
    run = config.get("run") or {}
    if workload.get("kind") != "host" or run.get("refs_out") or config.get("pretrain"):
        return None
    facts = {"processes": workload.get("processes"), "seed": config.get("seed"), "data": run.get("data_dir")}
    return json.dumps(facts, sort_keys=True, default=str)


def _lockstep(configs: Sequence[dict[str, Any]]) -> bool:
    """Whether a group's members all read the same streams (`_stream_key`)."""
    keys = {_stream_key(c) for c in configs}
    return len(configs) > 1 and len(keys) == 1 and None not in keys


# Runs side by side in one worker at most (each holds its whole host and device in memory).
LOCKSTEP_MAX = 8


def _units(configs: Sequence[dict[str, Any]], workers: int = 2) -> list[list[int]]:
    """The configs (by position) grouped into what one payload runs, in order of first appearance:
    configs after the same pre-training chain in one group; host programs that read the same streams
    in groups of at most min(⌈n / (2 · workers)⌉, `LOCKSTEP_MAX`), their members that age the same
    device next to each other; other configs that age the same device in groups of at most
    ⌈n / (2 · workers)⌉ (so that one aging shared by a whole experiment still spreads over the
    workers)."""
    units: list[list[int]] = []
    unit_of: dict[str, int] = {}
    cap = max(1, -(-len(configs) // (2 * max(1, workers))))
    for k, config in enumerate(configs):
        key, limit = _share_key(config), None
        if key is None and (stream := _stream_key(config)) is not None:
            key, limit = "stream " + stream, min(cap, LOCKSTEP_MAX)
        elif key is None and (aging := _aging_key(config)) is not None:
            key, limit = "aging " + aging, cap
        if key is not None and key in unit_of and not (limit and len(units[unit_of[key]]) >= limit):
            units[unit_of[key]].append(k)
            continue
        if key is not None:
            unit_of[key] = len(units)
        units.append([k])
    # A kept aged device serves the next run with the same aging: those runs go next to each other.
    for unit in units:
        first: dict[str | None, int] = {}
        unit.sort(key=lambda k: first.setdefault(_aging_key(configs[k]), len(first)))
    return units


def _aging_hints(configs: Sequence[dict[str, Any]], units: Sequence[Sequence[int]]) -> list[dict[str, bool]]:
    """Per unit, what its worker does with the aged devices it keeps (`nandstack_sim::aged`, a few per
    process): `forget` them first when no aging of an earlier unit comes back in this one or a later
    one (a new experiment, say), and `keep_last` — the last member keeps its aged device too — when an
    aging of this unit comes back in a later one (DISS's schemes age the same three ways for every
    scenario; the worker that runs the next scenario may be this one). Hints only, like `_aging_key`:
    a worker that guesses wrong ages again, with the same results."""
    keys = [{k for i in unit if (k := _aging_key(configs[i])) is not None} for unit in units]
    later: list[set[str]] = [set() for _ in units]
    for u in range(len(units) - 2, -1, -1):
        later[u] = later[u + 1] | keys[u + 1]
    hints, earlier = [], set()
    for u in range(len(units)):
        hints.append({"forget": not (earlier & (keys[u] | later[u])), "keep_last": bool(keys[u] & later[u])})
        earlier |= keys[u]
    return hints


def _unit_payload(
    payloads: list[dict[str, Any]], lockstep: bool = False, aging: dict[str, bool] | None = None
) -> dict[str, Any]:
    """A unit's payload: a group, even of one task, so that it carries its aging hint (`execute_task`
    runs the members in order, or side by side when they read the same streams); `aging`:
    `_aging_hints`' entry for it (none: forget, keep nothing after the last member)."""
    group: dict[str, Any] = {"group": payloads}
    if lockstep:
        group["lockstep"] = True
    if aging is not None:
        group["aging"] = aging
    return group


def _result(data: dict[str, Any]) -> Result:
    from .._api import Result

    return Result(data["summary"], data["config"])


def _plain(params: Any) -> Any:
    """Params as JSON-able data (workload objects become their names)."""
    if isinstance(params, dict):
        return {str(k): _plain(v) for k, v in params.items()}
    if isinstance(params, (list, tuple)):
        return [_plain(v) for v in params]
    if isinstance(params, (str, int, float, bool)) or params is None:
        return params
    return str(params)
