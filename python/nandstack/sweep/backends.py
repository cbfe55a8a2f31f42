"""Where tasks run: in this process (`serial`), a local process pool (`local`, the default) or a Ray
cluster (`ray`, an optional extra imported lazily). Every backend runs the same picklable task function,
`execute_task`, and yields `(index, outcome)` pairs as tasks finish, in completion order.

An outcome is `{"summary": ..., "config": ..., "cpu_seconds": s}` on success or `{"error": "<Type>:
<message>", "cpu_seconds": s}` when the engine rejected the run, `cpu_seconds` being the CPU time (user +
system, every thread) the worker process spent on the task, build and precondition included (also
`summary["wall_task_cpu_seconds"]`); a group's payload (`{"group": [payload, ...]}`) gives
`{"group": [outcome, ...]}`. The
caller records successes in the results database (workers never touch it: DuckDB has one writer).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Protocol

__all__ = [
    "BACKENDS",
    "Backend",
    "LocalBackend",
    "RayBackend",
    "SerialBackend",
    "execute_task",
    "make_backend",
]

BACKENDS = ("local", "serial", "ray")
Outcome = dict[str, Any]


def execute_task(payload: dict[str, Any]) -> Outcome:
    """Run one task (`{"config": ..., "verify": ...}`) without recording it; engine errors are returned,
    not raised, so one bad point does not stop a sweep. `KeyboardInterrupt` propagates. `cpu_seconds`:
    this process's CPU time over the task (`time.process_time`: every thread, unlike wall time it does
    not grow while other processes hold the cores)."""
    if "group" in payload:  # tasks that share work run in order in this process (`runner._units`)
        members = payload["group"]
        aging = payload.get("aging") or {}  # no hint: forget what is kept, keep nothing after the last
        if aging.get("forget", True):
            from .._core import forget_aged

            forget_aged()
        keep_last = bool(aging.get("keep_last", False))
        if payload.get("lockstep"):
            return {"group": _execute_lockstep(members, keep_last)}
        outcomes = []
        for i, member in enumerate(members):
            # Every member but the last keeps its aged device for the next (`nandstack_sim::aged`); the
            # last too when a later unit ages the same way.
            outcomes.append(_execute_one(member, keep=keep_last or i < len(members) - 1))
        return {"group": outcomes}
    return _execute_one(payload, keep=False)


def _execute_one(payload: dict[str, Any], keep: bool) -> Outcome:
    """One task of `execute_task`; `keep`: keep its aged device for the next task of the group."""
    from .._api import run
    from .._core import NandstackError, keep_aged

    keep_aged(keep)

    config = payload["config"]
    verify = bool(payload.get("verify", False))
    cpu0 = time.process_time()
    try:
        result = run(config, verify=verify, record=False)
    except NandstackError as e:
        return {"error": f"{type(e).__name__}: {e}", "cpu_seconds": time.process_time() - cpu0}
    cpu = time.process_time() - cpu0
    # Also in the summary (a `wall_*` key: machine-dependent, left out of byte comparisons), so a run
    # recorded in the results database keeps what it cost when a report reuses it.
    summary = {**result.summary, "wall_task_cpu_seconds": round(cpu, 3)}
    return {"summary": summary, "config": result.config, "cpu_seconds": cpu}


def _execute_lockstep(members: Sequence[dict[str, Any]], keep_last: bool = False) -> list[Outcome]:
    """A group whose host programs read the same reference streams: one engine call runs them side by
    side, each stream generated once (`nandstack_sim::hostrun::lockstep`); the reports are those of the
    members run one by one. A member's `cpu_seconds` is the CPU time the engine charged to it (the
    shared generation falls to whichever run read a chunk first). `keep_last`: the last run keeps its
    aged device too (a later unit ages the same way)."""
    from .._api import resolve_config, result_of
    from .._config_obj import canonical_json
    from .._core import NandstackError, keep_aged, run_many

    keep_aged(False)
    verify = any(bool(m.get("verify", False)) for m in members)
    effective = [resolve_config(m["config"]) for m in members]
    cpu0 = time.process_time()
    reports = run_many([canonical_json(e) for e in effective], verify, keep_last)
    share = (time.process_time() - cpu0) / max(1, len(members))
    outcomes: list[Outcome] = []
    for report, config in zip(reports, effective):
        if isinstance(report, NandstackError):
            outcomes.append({"error": f"{type(report).__name__}: {report}", "cpu_seconds": share})
            continue
        result = result_of(report, config)
        cpu = result.summary.get("wall_cpu_seconds")
        cpu = float(cpu) if isinstance(cpu, (int, float)) else share
        summary = {**result.summary, "wall_task_cpu_seconds": round(cpu, 3)}
        outcomes.append({"summary": summary, "config": result.config, "cpu_seconds": cpu})
    return outcomes


class Backend(Protocol):
    name: str

    def run(self, payloads: Sequence[dict[str, Any]]) -> Iterator[tuple[int, Outcome]]:
        """Run every payload; yield `(index, outcome)` as each finishes. Stops cleanly when the
        consumer stops iterating (`close()` on the generator) or on `KeyboardInterrupt`."""
        ...


class SerialBackend:
    """Run tasks one after another in this process (debugging, tiny sweeps)."""

    name = "serial"

    def run(self, payloads: Sequence[dict[str, Any]]) -> Iterator[tuple[int, Outcome]]:
        for index, payload in enumerate(payloads):
            yield index, execute_task(payload)


class LocalBackend:
    """A `concurrent.futures` process pool of `workers` processes (default: the CPU count), started with
    `spawn` (the engine and polars hold threads, which do not survive `fork`). By default each `run`
    starts its own pool and stops it; inside `with backend.shared():` every `run` uses one pool, and
    several threads may call `run` at once (their tasks queue in the pool in the order submitted)."""

    name = "local"

    def __init__(self, workers: int | None = None) -> None:
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            raise ValueError(f"workers must be a whole number of at least 1, not {workers!r}")
        self.workers = workers or os.cpu_count() or 1
        self._shared = False
        self._pool: ProcessPoolExecutor | None = None
        self._broken = False
        self._lock = threading.Lock()

    def _new_pool(self, workers: int) -> ProcessPoolExecutor:
        context = multiprocessing.get_context("spawn")
        return ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=_init_worker, initargs=(os.getpid(),)
        )

    @contextlib.contextmanager
    def shared(self) -> Iterator[LocalBackend]:
        """One pool of `workers` processes for every `run` inside the block (`reproduce --all`: one
        experiment's tasks run while another's are analysed, and no pool is started per experiment).
        Call it from the main thread: the workers are started here, because Linux kills a worker when the
        thread that started it ends (`die_with_parent`), and a `run` may be called from threads that end
        before the block does."""
        with self._lock:
            self._shared = True
            self._pool = self._started_pool()
        try:
            yield self
        finally:
            with self._lock:
                pool, self._pool, self._shared = self._pool, None, False
            if pool is not None:
                pool.shutdown(wait=True)

    def _started_pool(self) -> ProcessPoolExecutor:
        """A new pool whose workers are all running (each submission with no idle worker starts one)."""
        pool = self._new_pool(self.workers)
        for future in [pool.submit(os.getpid) for _ in range(self.workers)]:
            future.result()
        return pool

    def abort(self) -> None:
        """Stop the shared pool's workers now (Ctrl-C in the thread that owns the suite): every `run`
        still waiting on it fails, and the block ends without waiting for their tasks."""
        _stop_children()
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def _shared_pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                raise BrokenProcessPool("the shared pool was stopped")
            return self._pool

    def broken(self) -> bool:
        """Whether a worker of the shared pool died (a crash, the kernel's OOM killer): every run on it
        fails until `renew`."""
        return self._broken

    def renew(self) -> None:
        """Replace a broken shared pool by a new one (from the thread that opened `shared`)."""
        with self._lock:
            if not (self._shared and self._broken):
                return
            old, self._pool = self._pool, None
            # The broken pool's workers are stopped here, not waited for: joining a broken pool's
            # manager thread can hang (it may still be waiting on the dead worker's queue).
            _stop_children()
            if old is not None:
                old.shutdown(wait=False, cancel_futures=True)
            self._pool, self._broken = self._started_pool(), False

    def run(self, payloads: Sequence[dict[str, Any]]) -> Iterator[tuple[int, Outcome]]:
        if not payloads:
            return
        shared = self._shared
        pool = self._shared_pool() if shared else self._new_pool(min(self.workers, len(payloads)))
        futures: dict[Future[Outcome], int] = {}
        queue = iter(enumerate(payloads))
        try:
            for index, payload in _take(queue, self.workers * 2):
                futures[pool.submit(execute_task, payload)] = index
            while futures:
                done, _ = wait(futures, return_when=FIRST_COMPLETED)
                for future in done:
                    index = futures.pop(future)
                    outcome = future.result()  # re-raises a worker's KeyboardInterrupt or crash
                    for next_index, payload in _take(queue, 1):
                        futures[pool.submit(execute_task, payload)] = next_index
                    yield index, outcome
        except BaseException as e:
            if not shared:
                _stop_children()  # workers never write the database: stopping them mid-run is safe
                pool.shutdown(wait=True, cancel_futures=True)
            elif isinstance(e, KeyboardInterrupt):
                self.abort()
            else:
                # Another thread's tasks share the pool: withdraw this run's queued tasks only (one
                # already running finishes and is dropped). A dead worker breaks the pool for every run
                # on it, as it would break an unshared one, until the owner renews it.
                for future in futures:
                    future.cancel()
                if isinstance(e, BrokenProcessPool):
                    self._broken = True
            raise
        if not shared:
            pool.shutdown(wait=True)


class RayBackend:
    """Submit every task to a Ray cluster: `ray.init(address=address)` (`None` starts a local Ray;
    `"auto"` joins the cluster this machine belongs to). Needs `pip install 'nandstack[ray]'`."""

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        self.address = address
        self.workers = workers
        self.ray = import_ray()

    def run(self, payloads: Sequence[dict[str, Any]]) -> Iterator[tuple[int, Outcome]]:
        ray = self.ray
        if not ray.is_initialized():
            options: dict[str, Any] = {"address": self.address, "log_to_driver": False}
            if self.address is None:
                options.update(include_dashboard=False, num_cpus=self.workers)
            ray.init(**options)
        remote = ray.remote(execute_task)
        refs = {remote.remote(payload): index for index, payload in enumerate(payloads)}
        pending = list(refs)
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    yield refs[ref], ray.get(ref)
        except BaseException:
            for ref in pending:
                ray.cancel(ref, force=True)
            raise


def import_ray() -> Any:
    """Import Ray, or explain how to get it."""
    try:
        import ray
    except ImportError:
        from .._core import NandstackError

        raise NandstackError(
            "the Ray backend needs Ray, which is not installed: pip install 'nandstack[ray]' "
            "(or run the sweep with the default local process pool: --backend local)"
        ) from None
    return ray


def make_backend(name: str, workers: int | None = None, address: str | None = None) -> Backend:
    if name == "local":
        return LocalBackend(workers)
    if name == "serial":
        return SerialBackend()
    if name == "ray":
        return RayBackend(address, workers)
    from .._core import ConfigError

    raise ConfigError(f"unknown sweep backend `{name}`: use one of {', '.join(BACKENDS)}")


def _take(iterator: Iterator[Any], n: int) -> list[Any]:
    """The next `n` items of `iterator` (fewer at its end)."""
    out: list[Any] = []
    for item in iterator:
        out.append(item)
        if len(out) == n:
            break
    return out


def _init_worker(parent_pid: int) -> None:
    """Pool workers leave Ctrl-C, SIGTERM and SIGHUP to the parent, which stops them (a terminal sends
    SIGINT or SIGHUP to the whole process group, `kill -TERM -PGID` SIGTERM; an idle worker would
    otherwise die with a traceback, a busy one break the pool before the parent could stop it), and die
    with the parent even when it is killed outright (`kill -9`), so no worker outlives its sweep."""
    from .._interrupt import STOP_SIGNALS

    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    die_with_parent(parent_pid)


#: `prctl(PR_SET_PDEATHSIG, ...)` (linux/prctl.h).
_PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> bool:
    """Ask Linux to SIGKILL this process when its parent dies (`PR_SET_PDEATHSIG`); exit at once if the
    parent is already gone. Workers never write the results database, so killing them is always safe.
    Returns whether the request was made (False off Linux or without a C library)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        ok = libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os._exit(1)
    return ok


def _stop_children() -> None:
    """Kill this process's pool workers (they ignore SIGTERM) so an interrupted sweep stops now, not
    after their runs."""
    for child in multiprocessing.active_children():
        with contextlib.suppress(OSError):
            child.kill()
