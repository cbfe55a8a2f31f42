"""`reproduce`: run an experiment end to end and write its report folder.

The folder holds `index.html` (self-contained), one PNG and one SVG per figure, one CSV per table and
`report.json` (the claim, the measured result, the verdict and every run's id and config hash), and
`manifest.json` (every file's SHA-256): the folder is written atomically (see `nandstack._output`).
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .. import experiments
from .._core import __version__
from .._output import atomic_output_dir, check_out_dir
from ..config import dumps
from ..experiments.base import shift_seeds
from ..results import git_commit
from ..sweep.runner import TaskOutcome, run_tasks
from .html import render_page
from .plots import import_pyplot, render_figure

if TYPE_CHECKING:
    from ..experiments.base import Analysis, Experiment
    from ..results import ResultsDB
    from ..sweep.backends import Backend

__all__ = ["Ran", "Report", "default_out_dir", "reproduce", "run_experiment", "write_report"]


@dataclass
class Report:
    """A written report: its folder, the analysis, the task outcome and every file written."""

    out_dir: Path
    experiment: Experiment
    analysis: Analysis
    outcome: TaskOutcome
    files: list[Path] = field(default_factory=list)

    @property
    def index(self) -> Path:
        return self.out_dir / "index.html"


def default_out_dir(name: str, quick: bool) -> Path:
    return Path("results") / "reproduce" / (f"{name}-quick" if quick else name)


@dataclass
class Ran:
    """An experiment whose runs are done and whose report is not written yet: `run_experiment` then
    `write_report` is `reproduce` in two steps (`reproduce --all` writes one report while the next
    experiment's runs go on)."""

    experiment: Experiment
    tasks: list[Any]
    outcome: TaskOutcome
    out_dir: Path
    quick: bool
    seed: int


def reproduce(
    name: str,
    *,
    quick: bool = False,
    out: Path | None = None,
    backend: Backend | None = None,
    db: ResultsDB | None = None,
    record: bool = True,
    resume: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
    seed: int = 0,
) -> Report:
    """Run experiment `name` (`quick`: the ~1 minute version) and write its report folder under `out`.
    Runs are recorded in the results database (tagged with the experiment) unless `record=False`;
    `resume` reuses recorded runs of the same configs instead of running them again. `seed` shifts
    every seed of every run by that much (`experiments.base.shift_seeds`; 0: the experiment's own)."""
    ran = run_experiment(
        name,
        quick=quick,
        out=out,
        backend=backend,
        db=db,
        record=record,
        resume=resume,
        progress=progress,
        seed=seed,
    )
    return write_report(ran)


def run_experiment(
    name: str,
    *,
    quick: bool = False,
    out: Path | None = None,
    backend: Backend | None = None,
    db: ResultsDB | None = None,
    record: bool = True,
    resume: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
    seed: int = 0,
) -> Ran:
    """The first step of `reproduce` (same arguments): check the report folder and run the tasks."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed shift must be a non-negative integer, got {seed!r}")
    experiment = experiments.get(name)
    import_pyplot()  # fail before the runs, not after, when matplotlib is missing
    out_dir = out if out is not None else default_out_dir(experiment.name, quick)
    out_dir = check_out_dir(out_dir, overwrite=True)  # refused now, not after the runs
    tasks = [shift_seeds(task, seed) for task in experiment.tasks(quick)]
    outcome = run_tasks(
        tasks,
        backend=backend,
        db=db,
        record=record,
        resume=resume,
        source="reproduce",
        experiment=experiment.name,
        tags=["quick"] if quick else ["full"],
        progress=progress,
        phase=experiment.name,
    )
    return Ran(experiment, tasks, outcome, out_dir, quick, seed)


def write_report(ran: Ran) -> Report:
    """The second step of `reproduce`: analyse the runs and write the report folder. The analysis may
    plot and run live programs (live-vs-model), so call it from the main thread."""
    experiment, tasks, outcome, out_dir = ran.experiment, ran.tasks, ran.outcome, ran.out_dir
    analysis = experiment.analyze(tasks, outcome.results)
    # The folder is written whole into a temporary sibling, with a manifest.json, and renamed into place
    # (replacing a previous report): a reader never sees half a report.
    about = {"nandstack_version": __version__, "command": "reproduce", "experiment": experiment.name}
    with atomic_output_dir(out_dir, overwrite=True, info=about) as (tmp, _):
        files = _write_report(tmp, experiment, analysis, outcome, tasks, ran.quick, ran.seed)
    files = [out_dir / p.relative_to(tmp) for p in files]
    return Report(out_dir, experiment, analysis, outcome, files)


def _kept_cpu(result: Any, now: float | None) -> float | None:
    """The CPU seconds a run's summary keeps (`wall_task_cpu_seconds`), else `now` (a failed run)."""
    kept = result.summary.get("wall_task_cpu_seconds") if result is not None else None
    return kept if isinstance(kept, (int, float)) else now


def _round_or_none(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _write_report(
    out_dir: Path,
    experiment: Any,
    analysis: Any,
    outcome: Any,
    tasks: list[Any],
    quick: bool,
    seed: int = 0,
) -> list[Path]:
    """Every file of the report folder, written under `out_dir`; returns their paths."""
    files: list[Path] = []
    figure_files = {}
    for figure in analysis.figures:
        figure_files[figure.name] = render_figure(figure, out_dir)
        files += figure_files[figure.name]
    table_files = {}
    for table in analysis.tables:
        path = out_dir / f"{table.name}.csv"
        table.frame.write_csv(path)
        table_files[table.name] = path
        files.append(path)
    runs = [
        {
            "run_id": result.run_id if result is not None else None,
            "config_hash": task.config_hash,
            "label": task.label,
            # What the run cost when it was made (now, or when recorded if the report reused it): the
            # figure its summary keeps whenever there is one, so that a report reusing the recorded run
            # shows the same number (rounding the raw time and the recorded one could differ by a digit).
            "wall_cpu_seconds": _round_or_none(_kept_cpu(result, outcome.cpu_seconds.get(i))),
            "status": "ok"
            if result is not None
            else ("ended: " if outcome.expected(i) else "") + outcome.errors.get(i, "failed"),
        }
        for i, (task, result) in enumerate(zip(tasks, outcome.results))
    ]
    info: dict[str, Any] = {
        "experiment": experiment.name,
        "quick": quick,
        "mode": "quick" if quick else "full",
        "seed_shift": seed,
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "version": __version__,
        "git_commit": git_commit(),
        "runs": len(tasks),
        "ran": outcome.ran,
        "skipped": outcome.skipped,
        "wall_seconds": round(outcome.wall_seconds, 2),
        "wall_cpu_seconds": round(outcome.total_cpu_seconds, 2),
        "setup": experiment.setup(quick),
    }
    errors = [f"{tasks[i].label}: {msg}" for i, msg in sorted(outcome.failures().items())]
    page = render_page(
        experiment,
        analysis,
        out_dir=out_dir,
        figures=figure_files,
        tables=table_files,
        info=info,
        runs=runs,
        errors=errors,
        example_config=dumps(tasks[0].config) if tasks else "",
    )
    index = out_dir / "index.html"
    index.write_text(page, encoding="utf-8")
    manifest = {
        **info,
        "title": experiment.title,
        "paper": experiment.paper,
        "claim": experiment.claim,
        "method": experiment.method_text(quick),
        "measured": analysis.measured,
        "verdict": analysis.verdict,
        "headline": analysis.headline,
        "claims": analysis.claims,
        "figures": {name: [p.name for p in paths] for name, paths in figure_files.items()},
        "tables": {name: path.name for name, path in table_files.items()},
        "errors": errors,
        "run_list": runs,
        **analysis.data,
    }
    (out_dir / "report.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    files += [index, out_dir / "report.json"]
    return files
