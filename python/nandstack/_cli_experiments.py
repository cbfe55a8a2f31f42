"""`nandstack sweep` and `nandstack reproduce`."""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

from ._cli_results import add_db_option
from ._term import format_frame, progress_bar


def _backend_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("execution")
    group.add_argument(
        "--backend",
        choices=("local", "serial", "ray"),
        default="local",
        help="local: a process pool on this machine (default); serial: one run at a time in this process; "
        "ray: submit the runs to a Ray cluster (pip install 'nandstack[ray]')",
    )
    group.add_argument(
        "--workers", "-j", type=_positive, metavar="N", help="parallel runs (default: the CPU count)"
    )
    group.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="Ray cluster to join, e.g. ray://head:10001 or auto (default: start a local Ray)",
    )
    group.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    add_db_option(parser)


def add_parsers(commands: Any) -> None:
    sweep = commands.add_parser(
        "sweep",
        help="run a parameter sweep from a TOML spec",
        description="Run every point of a sweep spec (grid and/or points × workloads × seeds) and record "
        "each run in the results database. Resumable: runs whose config hash is already recorded (by this "
        "nandstack version) are skipped, so re-running an interrupted sweep finishes it.",
        epilog="Spec format: docs/experiments.md; example: examples/sweeps/op-vs-policy.toml. "
        "Results: nandstack results --sweep NAME",
    )
    sweep.add_argument("spec", type=Path, help="sweep spec TOML file")
    sweep.add_argument(
        "--no-resume", action="store_true", help="run every point, even those already recorded"
    )
    sweep.add_argument(
        "--dry-run", action="store_true", help="list the runs (and which are recorded); run none"
    )
    sweep.add_argument("--verify", action="store_true", help="check read-after-write versions and invariants")
    _backend_options(sweep)
    sweep.set_defaults(func=cmd_sweep)

    reproduce = commands.add_parser(
        "reproduce",
        help="run a registered experiment and write its report",
        description="Run an experiment end to end and write a report folder: index.html (self-contained: "
        "setup, the paper's claim and our measured result side by side, figures, tables), PNG and SVG "
        "figures, CSV tables and report.json. Runs are recorded in the results database.",
        epilog="nandstack reproduce --list shows the experiments.",
    )
    reproduce.add_argument(
        "name",
        nargs="*",
        help="experiment name (see --list); several: run them as --all runs every one",
    )
    reproduce.add_argument("--list", action="store_true", help="list the experiments and exit")
    reproduce.add_argument(
        "--all",
        action="store_true",
        help="run every experiment in --list order (with --out DIR: each report in DIR/NAME[-quick])",
    )
    reproduce.add_argument(
        "--timing",
        action="store_true",
        help="print where the time goes: per experiment, its runs, wall seconds and CPU seconds (this "
        "process and its finished local workers; the runs' own measured-phase CPU seconds beside)",
    )
    reproduce.add_argument("--quick", action="store_true", help="the smoke-test version (about a minute)")
    reproduce.add_argument(
        "--out", type=Path, metavar="DIR", help="report folder (default: results/reproduce/NAME[-quick])"
    )
    reproduce.add_argument("--no-record", action="store_true", help="do not record the runs in the database")
    reproduce.add_argument(
        "--resume", action="store_true", help="reuse recorded runs of the same configs instead of re-running"
    )
    reproduce.add_argument(
        "--captures",
        type=Path,
        metavar="DIR",
        help="folder of real-kernel captures for kernel-swap / kernel-zswap / kernel-zram (default: data "
        "set kernel-swap, kernel-zswap or kernel-zram under --data DIR / $NANDSTACK_DATA, else "
        "../shared/traces; `nandstack data`)",
    )
    reproduce.add_argument(
        "--seed",
        type=_seed_shift,
        default=0,
        metavar="N",
        help="shift every seed of every run by N (default 0: the experiment's own seeds), to check that a "
        "result or a claim's verdict is not one draw",
    )
    _backend_options(reproduce)
    reproduce.set_defaults(func=cmd_reproduce)


def _whole(text: str, minimum: int, what: str) -> int:
    """An option's whole-number value, at least `minimum` (refused, never clamped: `-j -3` is an error)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what} takes a whole number, got `{text}`") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"{what} takes a whole number >= {minimum}, got {value}")
    return value


def _seed_shift(text: str) -> int:
    return _whole(text, 0, "--seed")


def _positive(text: str) -> int:
    """`-j N`: a whole number of workers, at least 1."""
    return _whole(text, 1, "-j/--workers")


def _backend(args: argparse.Namespace) -> Any:
    from .sweep import make_backend

    return make_backend(args.backend, workers=args.workers, address=args.ray_address)


def cmd_sweep(args: argparse.Namespace) -> int:
    from .results import ResultsDB
    from .sweep import load_spec, run_sweep

    spec = load_spec(args.spec)
    db = ResultsDB(args.db)
    if args.dry_run:
        return _dry_run(spec, db, resume=not args.no_resume)
    backend = _backend(args)
    print(f"sweep {spec.name}: {spec.size()} runs on {backend.name}, recording in {db.path}", file=sys.stderr)
    try:
        with progress_bar(args.quiet) as bar:
            outcome = run_sweep(
                spec, backend=backend, db=db, resume=not args.no_resume, verify=args.verify, progress=bar
            )
    except KeyboardInterrupt:
        print("finished runs are recorded; run the same command again to resume", file=sys.stderr)
        raise
    print(outcome.summary_line(), file=sys.stderr)
    for i, message in sorted(outcome.errors.items()):
        print(f"failed: {outcome.tasks[i].label}: {message}", file=sys.stderr)
    print(f"results: nandstack results --sweep {spec.name}", file=sys.stderr)
    return 1 if outcome.errors else 0


def _dry_run(spec: Any, db: Any, resume: bool) -> int:
    tasks = spec.tasks()
    from ._core import __version__

    done = db.finished([t.config_hash for t in tasks], version=__version__) if resume else set()
    rows = [(t.config_hash, "recorded" if t.config_hash in done else "to run", t.label) for t in tasks]
    print(format_frame(["config_hash", "status", "parameters"], rows, max_width=100))
    todo = sum(1 for r in rows if r[1] == "to run")
    print(f"{len(tasks)} runs, {todo} to run, {len(tasks) - todo} already recorded", file=sys.stderr)
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from . import experiments

    names = args.name if isinstance(args.name, list) else [args.name] if args.name else []
    if args.all and names:
        print(f"error: give experiment names or --all, not both (got `{' '.join(names)}`)", file=sys.stderr)
        return 2
    if not args.list and (args.all or len(names) > 1):
        return _reproduce_all(args, [experiments.get(n).name for n in names] or experiments.names())
    args.name = names[0] if names else None
    if args.list or not args.name:
        if not args.list:
            print("error: give an experiment name, --all, or --list to see them\n", file=sys.stderr)
        for experiment in experiments.all_experiments():
            print(f"{experiment.name}\n  {experiment.title}")
            print(textwrap.fill(experiment.claim, 100, initial_indent="  claim: ", subsequent_indent="    "))
            if experiment.produces:
                print(f"  produces: {', '.join(experiment.produces)}")
        return 0 if args.list else 2
    from .report.reproduce import run_experiment, write_report
    from .results import ResultsDB

    set_captures(args)
    backend = _backend(args)
    clock = _Clock()
    with progress_bar(args.quiet) as bar:
        ran = run_experiment(args.name, progress=bar, **reproduce_options(args, backend, ResultsDB(args.db)))
        report = write_report(ran)
    print_report(args, report)
    args.outcome = report.outcome  # for `--all`'s timing table
    if args.timing:
        print("\n" + format_frame(TIMING_COLUMNS, [clock.row(args.name, report.outcome)]))
    return 1 if report.outcome.failures() else 0


def set_captures(args: argparse.Namespace) -> None:
    """`--captures DIR`: where kernel-swap (and kernel-zswap, kernel-zram) read their captures."""
    if args.captures is None:
        return
    from .experiments import _captures, kernel_swap

    if args.name == "kernel-swap":
        envs = [kernel_swap.CAPTURES_ENV]
    else:  # kernel-zswap and kernel-zram; `--all`: all three
        envs = [_captures.CAPTURES_ENV] + ([kernel_swap.CAPTURES_ENV] if args.name is None else [])
    for env in envs:
        os.environ[env] = str(args.captures.resolve())


def reproduce_options(
    args: argparse.Namespace, backend: Any, db: Any, name: str | None = None
) -> dict[str, Any]:
    """`run_experiment`'s options from the command line (`name`: one experiment of `--all`)."""
    out = args.out
    if name is not None and out is not None:
        out = out / (f"{name}-quick" if args.quick else name)
    return {
        "quick": args.quick,
        "out": out,
        "backend": backend,
        "db": db,
        "record": not args.no_record,
        "resume": args.resume,
        "seed": args.seed,
    }


def print_report(args: argparse.Namespace, report: Any) -> None:
    """The verdict, the measured result and the claims table on stdout; the runs and the folder on stderr."""
    analysis = report.analysis
    name = report.experiment.name
    print(f"{report.experiment.title}: {analysis.verdict}")
    print(textwrap.fill(analysis.measured, 100))
    if analysis.claims:
        from .experiments._claims import claims_markdown

        quick = " --quick" if args.quick else ""
        print(f"\nClaims (nandstack reproduce {name}{quick} --seed {args.seed}):")
        print(claims_markdown(analysis.claims))
    print(report.outcome.summary_line(), file=sys.stderr)
    print(f"report: {report.index}", file=sys.stderr)


def _reproduce_all(args: argparse.Namespace, names: list[str]) -> int:
    """`reproduce --all`: every experiment (each its own report folder); a failing experiment is reported
    and the others still run. On the local backend two experiments' runs share one pool while the
    reports are written (`_cli_suite`); on the others they run in turn. With --timing, the table of
    where the time went."""
    from .sweep.backends import LocalBackend

    backend = _backend(args)
    if isinstance(backend, LocalBackend):
        from ._cli_suite import run_suite

        return run_suite(args, names, backend)
    rows, failed = [], []
    total = _Clock()
    for name in names:
        sub = argparse.Namespace(**vars(args))
        sub.name, sub.all, sub.timing = name, False, False
        if args.out is not None:
            sub.out = args.out / (f"{name}-quick" if args.quick else name)
        print(f"== reproduce {name}{' --quick' if args.quick else ''}", file=sys.stderr)
        clock = _Clock()
        try:
            code = cmd_reproduce(sub)
        except Exception as e:  # one experiment's failure (e.g. missing captures) does not stop the suite
            print(f"error: {name}: {type(e).__name__}: {e}", file=sys.stderr)
            code = 1
        rows.append(clock.row(name, getattr(sub, "outcome", None)))
        if args.timing:  # as it goes, so that an interrupted suite still says where its time went
            print("timing: " + "  ".join(str(v) for v in rows[-1]), file=sys.stderr)
        if code:
            failed.append(name)
    return finish_suite(args, rows, failed, total)


def finish_suite(args: argparse.Namespace, rows: list[list[Any]], failed: list[str], total: Any) -> int:
    """The end of `--all`: the timing table (with --timing) and the experiments that failed."""
    if args.timing:
        rows.append(total.row("total", None, runs=sum(r[1] for r in rows if r[1] is not None)))
        from . import _core

        print(f"\ntiming of nandstack {_core.__version__} ({_core.__build__} build):")
        print(format_frame(TIMING_COLUMNS, rows))
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


TIMING_COLUMNS = ["experiment", "runs", "wall_s", "cpu_s", "runs_cpu_s"]


class _Clock:
    """Wall and CPU time since it was made. CPU: this process plus its children that have ended (the
    local backend's pool is shut down after each experiment, so its workers are counted; Ray's workers
    are not children — then only the runs' own `wall_cpu_seconds` column covers them)."""

    def __init__(self) -> None:
        import time

        self._time = time
        self.wall0 = time.monotonic()
        self.cpu0 = self._cpu()

    @staticmethod
    def _cpu() -> float:
        t = os.times()
        return t.user + t.system + t.children_user + t.children_system

    def row(self, name: str, outcome: Any, runs: int | None = None) -> list[Any]:
        """[name, runs, wall s, CPU s, the runs' measured-phase CPU s summed] (the last from each run's
        summary, `None` where no run reports it)."""
        wall = self._time.monotonic() - self.wall0
        cpu = self._cpu() - self.cpu0
        if outcome is not None:
            return self.runs_row(name, outcome, wall, cpu)
        return [name, runs, round(wall, 1), round(cpu, 1), None]

    @staticmethod
    def runs_row(name: str, outcome: Any, wall: float, cpu: float) -> list[Any]:
        """`row` of an experiment's `outcome` with the given wall and CPU seconds."""
        cpus = [
            r.summary.get("wall_cpu_seconds")
            for r in outcome.results
            if r is not None and isinstance(r.summary, dict)
        ]
        known = [c for c in cpus if isinstance(c, (int, float))]
        runs_cpu = round(sum(known), 1) if known else None
        return [name, len(outcome.tasks), round(wall, 1), round(cpu, 1), runs_cpu]
