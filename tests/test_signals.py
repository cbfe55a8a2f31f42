"""Signals (docs/reliability.md, "Interrupts"): SIGTERM and SIGHUP stop `run`, `sweep` and `reproduce`
as Ctrl-C does — partial summary, temporary folders removed, workers stopped — with exit code 128 + the
signal; a thread still inside `nandstack.run` when the interpreter exits never aborts the process.

Every child starts with SIGINT, SIGTERM and SIGHUP at their defaults, whatever this process inherited
(a background shell ignores SIGINT), so the tests do not depend on how pytest was started."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import TINY, TINY_ARGS
from nandstack._output import verify_manifest
from test_reliability import _running, default_signals
from test_reliability import popen as start

LONG = ["--set", "workload.requests=100000000000"]


def wait_for(proc: subprocess.Popen, text: str) -> list[str]:
    lines = []
    while text not in (line := proc.stderr.readline()):
        assert line, "".join(lines)
        lines.append(line)
    return lines


def finish(proc: subprocess.Popen, timeout: float = 30) -> str:
    try:
        _, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return err


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_run_saves_its_partial_summary_and_exits_128_plus_the_signal(tmp_path, signum):
    proc = start(["run", *TINY_ARGS, *LONG, "--out", "out", "--no-record"], tmp_path)
    wait_for(proc, "measure")
    proc.send_signal(signum)
    start_time = time.monotonic()
    err = finish(proc)
    assert proc.returncode == 128 + signum, err
    assert time.monotonic() - start_time < 5
    assert f"interrupted by {signum.name}: the partial run is in out" in err and "Traceback" not in err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["requests"] > 0
    assert verify_manifest(tmp_path / "out") == []
    assert hidden(tmp_path) == []


def test_sigterm_before_the_measured_phase_leaves_nothing(tmp_path):
    args = ["run", *TINY_ARGS, "--set", "device.geometry.blocks_per_plane=20000", *LONG, "--out", "out"]
    proc = start([*args, "--no-record"], tmp_path)
    wait_for(proc, "precondition")
    proc.send_signal(signal.SIGTERM)
    err = finish(proc)
    assert proc.returncode == 143, err
    assert "interrupted by SIGTERM" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no out, no hidden temporary folder


def test_a_run_started_under_nohup_keeps_ignoring_sighup(tmp_path):
    def nohup() -> None:
        default_signals()
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    proc = start(["run", *TINY_ARGS, *LONG, "--out", "out", "--no-record"], tmp_path, preexec_fn=nohup)
    wait_for(proc, "measure")
    proc.send_signal(signal.SIGHUP)
    time.sleep(0.5)
    assert proc.poll() is None, "SIGHUP stopped a run that was started with it ignored"
    proc.send_signal(signal.SIGINT)
    err = finish(proc)
    assert proc.returncode == 130, err


def test_sweep_stops_its_workers_on_sigterm(tmp_path):
    spec = tmp_path / "long.toml"
    tiny = "\n".join(f'"{k.split("=")[0]}" = {k.split("=")[1]}' for k in TINY if "requests" not in k)
    spec.write_text(f'name = "long"\nseeds = 4\n[set]\n{tiny}\n"workload.requests" = 1000000000\n')
    proc = start(["sweep", str(spec), "--db", str(tmp_path / "r.duckdb"), "-j", "2"], tmp_path)
    deadline = time.monotonic() + 60
    workers: list[str] = []
    while len(workers) < 2 and time.monotonic() < deadline:
        time.sleep(0.5)
        pgrep = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True)
        workers = pgrep.stdout.split()
    assert len(workers) >= 2, workers
    time.sleep(1.0)  # the workers are inside their runs
    proc.send_signal(signal.SIGTERM)
    err = finish(proc, timeout=60)
    assert proc.returncode == 143, err
    assert "interrupted by SIGTERM" in err and "resume" in err and "Traceback" not in err
    time.sleep(0.5)
    alive = [w for w in workers if _running(int(w))]
    assert alive == [], f"workers outlived the sweep: {alive}"


def test_reproduce_on_sigterm_exits_143_and_leaves_no_temporary_folder(tmp_path):
    args = ["reproduce", "hot-cold-skew", "--quick", "--no-record", "--out", "rep", "-j", "1"]
    proc = start(args, tmp_path)
    wait_for(proc, "%")
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    err = finish(proc, timeout=60)
    assert proc.returncode == 143, err
    assert "interrupted by SIGTERM" in err and "Traceback" not in err
    assert not (tmp_path / "rep").exists() and hidden(tmp_path) == []


# --- threads at interpreter exit --------------------------------------------------------------------------

THREAD_SCRIPT = """
import os, signal, sys, threading, time
import nandstack
TINY = {tiny!r}
def work():
    nandstack.run(set=[*TINY, "workload.requests=100000000000"], record=False)
t = threading.Thread(target=work, daemon={daemon})
t.start()
time.sleep(1.0)
print("started", flush=True)
{main}
"""


def _thread_script(tmp_path: Path, daemon: bool, main: str) -> subprocess.CompletedProcess:
    script = THREAD_SCRIPT.format(tiny=TINY, daemon=daemon, main=textwrap.dedent(main))
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=default_signals,
    )


def test_an_interpreter_exiting_while_a_daemon_thread_runs_exits_with_its_own_status(tmp_path):
    proc = _thread_script(tmp_path, daemon=True, main="sys.exit(3)")
    assert proc.stdout == "started\n"
    assert proc.returncode == 3, proc.stderr  # was -6 (abort): "FATAL: exception not rethrown"
    assert "FATAL" not in proc.stderr and proc.stderr == ""


def test_ctrl_c_while_a_worker_thread_runs_delivers_keyboard_interrupt_to_the_main_thread(tmp_path):
    main = """
    threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
    try:
        t.join()
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
        sys.exit(130)
    """
    proc = _thread_script(tmp_path, daemon=False, main=main)
    assert proc.stdout == "started\nKeyboardInterrupt\n", proc.stderr
    assert proc.returncode == 130, proc.stderr
    assert "FATAL" not in proc.stderr
