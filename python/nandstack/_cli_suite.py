"""`reproduce --all` (or several names) on the local backend: the experiments' runs overlap.

One process pool serves the whole suite. Two lanes (threads) each take the next experiment and run its
tasks on the pool; when an experiment's runs are done, this (the main) thread analyses them and writes
its report — plots and, for live-vs-model, live programs run here — while the lanes keep the workers
busy with the next experiments' runs. Run alone, an experiment leaves a worker idle while its last runs
finish, and its analysis leaves both idle; the other lane's runs fill those gaps.

Every run and every report is the same as when the experiments run in turn: a run depends on its config
only (a worker's kept aged device is taken only by a run of the same aging, and is then exactly what
aging again would give: `nandstack_sim::aged`). Reports come out in the order the experiments finish.
The results database is held for the whole suite (`ResultsDB.writer`), so both lanes record in it.
"""

from __future__ import annotations

import argparse
import contextlib
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from ._cli_experiments import _Clock, finish_suite, print_report, reproduce_options, set_captures
from ._term import progress_bar

#: Experiments whose runs go on at once.
LANES = 2


class _Progress:
    """The progress of the experiments whose runs go on at once: the bar follows the oldest of them (the
    next one's progress shows when it becomes the oldest), and printing closes the bar first."""

    def __init__(self, bar: Any) -> None:
        self.bar = bar
        self.lock = threading.Lock()
        self.order: list[str] = []
        self.last: dict[str, tuple[str, int, int]] = {}

    def start(self, name: str) -> None:
        with self.lock:
            self.order.append(name)

    def callback(self, name: str) -> Callable[[str, int, int], None]:
        def progress(phase: str, done: int, total: int) -> None:
            with self.lock:
                self.last[name] = (phase, done, total)
                if self.bar is not None and self.order[0] == name:
                    self.bar(phase, done, total)

        return progress

    def ran(self, name: str) -> None:
        with self.lock:
            self.order.remove(name)
            self.last.pop(name, None)
            if self.bar is not None and self.order and self.order[0] in self.last:
                self.bar(*self.last[self.order[0]])

    @contextlib.contextmanager
    def printing(self) -> Iterator[None]:
        with self.lock:
            if self.bar is not None:
                self.bar.close()
            yield


def run_suite(args: argparse.Namespace, names: list[str], backend: Any) -> int:
    """Run `names` with overlapping runs on `backend` (a `LocalBackend`); the report of each as it ends."""
    from .report.reproduce import run_experiment, write_report
    from .results import ResultsDB

    set_captures(args)
    suffix = " --quick" if args.quick else ""
    db = ResultsDB(args.db)
    total = _Clock()
    events: queue.Queue[tuple[str, str, Any]] = queue.Queue()
    pending = list(names)
    guard = threading.Lock()
    stop = threading.Event()
    rows: dict[str, list[Any]] = {}
    failed: list[str] = []

    def lane(progress: _Progress) -> None:
        while not stop.is_set():
            while backend.broken() and not stop.is_set():  # the main thread starts a new pool
                time.sleep(0.05)
            with guard:
                if not pending or stop.is_set():
                    return
                name = pending.pop(0)
            events.put(("start", name, None))
            wall0, cpu0 = time.monotonic(), time.thread_time()
            progress.start(name)
            try:
                options = reproduce_options(args, backend, db, name)
                ran: Any = run_experiment(name, progress=progress.callback(name), **options)
            except BaseException as e:  # reported by the main thread; the lane goes on
                ran = e
            progress.ran(name)
            events.put(("ran", name, (ran, wall0, time.thread_time() - cpu0)))

    writing = db.writer("reproduce --all") if not args.no_record else contextlib.nullcontext()
    with progress_bar(args.quiet) as bar, writing, backend.shared():
        progress = _Progress(bar)
        lanes = [threading.Thread(target=lane, args=(progress,), daemon=True) for _ in names[:LANES]]
        for thread in lanes:
            thread.start()
        try:
            for _ in range(2 * len(names)):
                kind, name, data = _next(events)
                if kind == "start":
                    with progress.printing():
                        print(f"== reproduce {name}{suffix}", file=sys.stderr)
                    continue
                backend.renew()  # after a worker died: a new pool for the experiments still to run
                rows[name], ok = _report(args, name, data, write_report, progress)
                if not ok:
                    failed.append(name)
        except BaseException:
            stop.set()
            backend.abort()
            raise
    ordered = [rows[n] for n in names if n in rows]
    return finish_suite(args, ordered, failed, total)


def _next(events: queue.Queue[tuple[str, str, Any]]) -> tuple[str, str, Any]:
    """The next event, waiting in short steps so that Ctrl-C reaches this thread at once."""
    while True:
        with contextlib.suppress(queue.Empty):
            return events.get(timeout=0.2)


def _report(
    args: argparse.Namespace, name: str, data: Any, write_report: Any, progress: _Progress
) -> tuple[list[Any], bool]:
    """Write and print one experiment's report; its timing row and whether it succeeded. The row's wall
    seconds run from the start of its runs to its report (overlapping the other lane's); its CPU seconds
    are its tasks' in the workers (aging included) plus its lane's and its analysis's in this process."""
    ran, wall0, lane_cpu = data
    if isinstance(ran, KeyboardInterrupt):
        raise ran
    cpu0 = time.thread_time()
    report, error = None, ran if isinstance(ran, BaseException) else None
    if error is None:
        try:
            report = write_report(ran)
        except Exception as e:  # one report's failure does not stop the suite
            error = e
    cpu = lane_cpu + time.thread_time() - cpu0
    if report is not None:
        cpu += sum(report.outcome.cpu_seconds.values())
    wall = time.monotonic() - wall0
    with progress.printing():
        if report is None:
            print(f"error: {name}: {type(error).__name__}: {error}", file=sys.stderr)
            row = [
                name,
                len(ran.tasks) if hasattr(ran, "tasks") else None,
                round(wall, 1),
                round(cpu, 1),
                None,
            ]
        else:
            print_report(args, report)
            row = _Clock.runs_row(name, report.outcome, wall, cpu)
        if args.timing:  # as it goes, so that an interrupted suite still says where its time went
            print("timing: " + "  ".join(str(v) for v in row), file=sys.stderr)
    return row, report is not None and not report.outcome.failures()


__all__ = ["LANES", "run_suite"]
