"""`reproduce --all` (or several names) on the local backend: one shared pool, two experiments' runs at once,
the reports written while the next runs go on (`nandstack._cli_suite`). The reports must be the very ones
each experiment writes alone; the pool must serve threads at once and survive a dead worker; Ctrl-C must
stop the whole suite and leave no half report."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

import nandstack
from conftest import TINY_DICT, interrupt_at_quarter, without_wall_clock
from nandstack import ResultsDB
from nandstack.sweep.backends import LocalBackend, execute_task

PAIR = ("tail-latency", "hot-cold-skew")
#: report.json keys that say when and by what it was written, not what it found.
WHEN = ("date", "git_commit", "version")


def _report(folder: Path) -> dict:
    data = without_wall_clock(json.loads((folder / "report.json").read_text()))
    for key in WHEN:
        data.pop(key, None)
    for run in data["run_list"]:
        run.pop("run_id")  # a fresh id per recorded run
    return data


def test_two_experiments_at_once_write_what_each_writes_alone(cli, tmp_path):
    together, db = tmp_path / "together", tmp_path / "suite.duckdb"
    proc = cli("reproduce", *PAIR, "--quick", "--out", str(together), "--db", str(db), "-j", "2", "--timing")
    assert proc.returncode == 0, proc.stderr
    for name in PAIR:
        assert f"== reproduce {name} --quick" in proc.stderr
    header, *rows = proc.stdout.strip().splitlines()[-4:]
    assert header.split() == ["experiment", "runs", "wall_s", "cpu_s", "runs_cpu_s"]
    assert [r.split()[:2] for r in rows] == [["tail-latency", "10"], ["hot-cold-skew", "21"], ["total", "31"]]
    # Both lanes recorded their runs under the suite's one writer lock.
    assert ResultsDB(db).count() == 31
    for name in PAIR:
        alone = tmp_path / f"alone-{name}"
        single = cli("reproduce", name, "--quick", "--out", str(alone), "--no-record", "-j", "2")
        assert single.returncode == 0, single.stderr
        mine = together / f"{name}-quick"
        csvs = sorted(p.name for p in alone.glob("*.csv"))
        assert csvs and csvs == sorted(p.name for p in mine.glob("*.csv"))
        for csv in csvs:
            assert (mine / csv).read_bytes() == (alone / csv).read_bytes(), f"{name}: {csv}"
        assert _report(mine) == _report(alone), name


def test_several_names_are_checked_before_any_run(cli):
    proc = cli("reproduce", "tail-latency", "no-such-experiment", "--quick", "--no-record")
    assert proc.returncode != 0 and "no experiment `no-such-experiment`" in proc.stderr
    assert "== reproduce" not in proc.stderr
    both = cli("reproduce", "tail-latency", "--all", "--no-record")
    assert both.returncode == 2 and "not both" in both.stderr


def _tiny(seed: int) -> dict:
    return {"config": nandstack.load_config(None, {**TINY_DICT, "seed": seed}), "verify": False}


def test_a_shared_pool_serves_threads_at_once_and_is_renewed_after_a_dead_worker():
    backend = LocalBackend(2)
    payloads = {lane: [_tiny(100 * lane + i) for i in range(4)] for lane in (1, 2)}
    want = {lane: [execute_task(p)["summary"]["waf"] for p in ps] for lane, ps in payloads.items()}
    got: dict[int, list[float]] = {}

    def lane(n: int) -> None:
        out = dict(backend.run(payloads[n]))
        got[n] = [out[i]["summary"]["waf"] for i in range(len(payloads[n]))]

    with backend.shared():
        pids = {p.pid for p in multiprocessing.active_children()}
        threads = [threading.Thread(target=lane, args=(n,)) for n in payloads]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert got == want
        # Both threads' tasks ran on the pool the block started (no pool per call).
        assert {p.pid for p in multiprocessing.active_children()} >= pids
        os.kill(min(pids), signal.SIGKILL)
        deadline = time.monotonic() + 30
        with pytest.raises(BrokenProcessPool):
            while time.monotonic() < deadline:  # until the pool has noticed
                dict(backend.run(payloads[1]))
                time.sleep(0.05)
        assert backend.broken()
        backend.renew()
        assert not backend.broken()
        out = dict(backend.run(payloads[2]))
        assert [out[i]["summary"]["waf"] for i in range(4)] == want[2]


def test_ctrl_c_stops_the_whole_suite_and_leaves_no_half_report(tmp_path):
    out = tmp_path / "suite"
    cmd = [sys.executable, "-m", "nandstack", "reproduce", "gc-policies-vs-op", "hot-cold-skew", "--quick"]
    cmd += ["--out", str(out), "--no-record", "-j", "2"]
    code, rest, session = interrupt_at_quarter(cmd, cwd=tmp_path)
    assert code == 130, rest
    assert "interrupted" in rest
    # No report was written half: the suite's folder holds only whole reports (none, this early).
    for report in out.glob("*") if out.exists() else []:
        assert (report / "manifest.json").exists(), f"half report {report}"
    # The workers died with the suite (a dead one may stay a zombie until init reaps it).
    deadline = time.monotonic() + 10
    while True:
        alive = _alive_in_session(session)
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert alive == [], f"processes left in the suite's session: {alive}"


def _alive_in_session(session: int) -> list[int]:
    """The pids of session `session` that are not zombies, from /proc (no `ps` needed)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # the process ended meanwhile
            continue
        # pid (comm) state ppid pgrp session ...: comm may hold spaces and parentheses.
        fields = text[text.rindex(")") + 2 :].split()
        if int(fields[3]) == session and fields[0] != "Z":
            alive.append(int(stat.parent.name))
    return alive
