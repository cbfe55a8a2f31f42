"""Live mode (docs/live.md): refusals everywhere; as root with FUSE, loop devices and a memory cgroup, real
runs — a verified read-back through the daemon, memtouch swapping onto the device (every page the kernel
swapped reaches the device, the program's data survives), teardown on every exit path, `--cleanup` after a
kill -9, and the machine's swap/loop/mount/cgroup state identical before and after."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from nandstack import _cli_live, live
from nandstack._output import verify_manifest
from nandstack.cli import main


def _why_not_live() -> str | None:
    if os.geteuid() != 0:
        return "live mode needs root"
    try:
        live.preflight()
        live.daemon_binary()
        _cli_live.memtouch_source()
    except live.LiveError as e:
        return str(e)
    return None


WHY_NOT = _why_not_live()
needs_live = pytest.mark.skipif(WHY_NOT is not None, reason=f"cannot run live mode here: {WHY_NOT}")


# ---- refusals (run anywhere) -----------------------------------------------------------------------


def test_refuses_without_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(live.LiveError, match="needs root"):
        live.preflight()


def test_refuses_without_fuse_or_loop(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(live, "DEV_FUSE", tmp_path / "fuse")
    with pytest.raises(live.LiveError, match=r"no .*fuse: this kernel has no FUSE"):
        live.preflight()
    (tmp_path / "fuse").touch()
    monkeypatch.setattr(live, "DEV_FUSE", tmp_path / "fuse")
    monkeypatch.setattr(live, "LOOP_CONTROL", tmp_path / "loop-control")
    with pytest.raises(live.LiveError, match="no loop devices"):
        live.preflight()


def test_refuses_without_a_memory_cgroup(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    for name in ("fuse", "loop-control"):
        (tmp_path / name).touch()
    monkeypatch.setattr(live, "DEV_FUSE", tmp_path / "fuse")
    monkeypatch.setattr(live, "LOOP_CONTROL", tmp_path / "loop-control")
    monkeypatch.setattr(live.shutil, "which", lambda name: f"/usr/sbin/{name}")
    monkeypatch.setattr(live, "CGROUP_V1", tmp_path / "v1")
    monkeypatch.setattr(live, "CGROUP_V2", tmp_path / "v2")
    with pytest.raises(live.LiveError, match="no usable memory cgroup"):
        live.preflight()
    (tmp_path / "v2").mkdir()
    (tmp_path / "v2" / "cgroup.subtree_control").write_text("cpu io\n")  # memory not delegated
    with pytest.raises(live.LiveError, match="no usable memory cgroup"):
        live.preflight()
    (tmp_path / "v2" / "cgroup.subtree_control").write_text("cpu memory io\n")
    assert live.preflight() == "v2"


def test_refuses_a_zoned_device(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["live", "--preset", "host-znswap", "--", "true"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "ZNSwap kernel patch" in err and "Traceback" not in err


def test_refuses_a_missing_program_and_bad_sizes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["live", "--", "no-such-program-xyz"]) == 2
    assert "no-such-program-xyz`: no such program on PATH" in capsys.readouterr().err
    assert main(["live"]) == 2
    assert "give the program to run after `--`" in capsys.readouterr().err
    assert main(["live", "--swap-size", "0", "--", "true"]) == 2
    assert "MiB > 0" in capsys.readouterr().err


def test_compare_refuses_programs_the_model_does_not_know() -> None:
    from nandstack._core import ConfigError
    from nandstack._live_compare import memtouch_args

    with pytest.raises(ConfigError, match="program the host model knows"):
        memtouch_args(["redis-server"])
    with pytest.raises(ConfigError, match="pattern `zipf`"):
        memtouch_args(["memtouch", "10", "10", "zipf", "50", "1"])
    assert memtouch_args(["/x/memtouch-1-2", "10", "20", "hot", "30", "7"])["write_pct"] == 30


# ---- live runs (root, FUSE, loop, cgroup) -------------------------------------------------------------


@pytest.fixture
def clean_machine() -> object:
    """The machine's swap/loop/mount/cgroup state before the test; asserts it is the same after."""
    before = live.machine_state()
    yield before
    after = live.machine_state()
    assert after == before, f"the machine's state changed: before {before}, after {after}"
    assert live.leftovers() == [], "a run left its folder in /run/nandstack-live"


def _memtouch_sink(argv: list[str]) -> str:
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return out.split("sink=")[1].split()[0]


@contextlib.contextmanager
def _daemon(tmp_path: Path, *extra: str) -> Iterator[Path]:
    """The daemon alone, serving a 64 MiB file from the default preset; yields its mount point."""
    (tmp_path / "config.json").write_text(json.dumps(_cli_live.effective_config(_args())))
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    cmd = [str(live.daemon_binary()), "--config", str(tmp_path / "config.json"), "--mount", str(mnt)]
    cmd += ["--size", str(64 << 20), "--report", str(tmp_path / "report.json"), *extra]
    daemon = subprocess.Popen(cmd, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not live._mounted(mnt):
            assert daemon.poll() is None and time.monotonic() < deadline, "the daemon did not mount"
            time.sleep(0.02)
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
        daemon.wait(timeout=10)


@needs_live
def test_verified_read_back_through_the_daemon(tmp_path: Path, clean_machine: object) -> None:
    """The daemon alone: random data written to its file at scattered offsets reads back byte for byte,
    the device counts exactly the bytes of the measured window, and --verify checked every page read."""
    with _daemon(tmp_path, "--verify", "--trace", str(tmp_path / "t.csv")) as mnt:
        (mnt / "control").write_text("start")
        rng = random.Random(5)
        slots = rng.sample(range(0, (64 << 20) // 4096, 8), 40)  # 8-page slots: the chunks never overlap
        chunks = {slot * 4096: rng.randbytes(4096 * rng.randint(1, 8)) for slot in slots}
        fd = os.open(mnt / "swap", os.O_RDWR)
        try:
            for off, data in chunks.items():
                os.pwrite(fd, data, off)
            for off, data in chunks.items():
                assert os.pread(fd, len(data), off) == data
        finally:
            os.close(fd)
        (mnt / "control").write_text("stop")
    r = json.loads((tmp_path / "report.json").read_text())
    assert r["host_write_bytes"] == sum(len(d) for d in chunks.values())
    assert r["host_read_bytes"] == r["host_write_bytes"]
    v = r["live"]["verify"]
    assert v["pages_checked"] >= len(chunks) and v["pages_mismatched"] == 0
    rows = (tmp_path / "t.csv").read_text().splitlines()
    assert rows[0] == "time_s,op,sector,sectors,comm" and len(rows) == 1 + r["requests"]


@needs_live
def test_replies_wait_for_the_model_in_real_time(tmp_path: Path, clean_machine: object) -> None:
    """--time-scale 500: each read is answered no sooner than the model's latency x 500 of wall time (the
    test's own clock against the model's latency figures), and not much later (the lag is reported)."""
    with _daemon(tmp_path, "--time-scale", "500") as mnt:
        fd = os.open(mnt / "swap", os.O_RDWR)
        try:
            for i in range(8):
                os.pwrite(fd, bytes([i + 1]) * 4096, i * (1 << 20))
            os.fsync(fd)  # a device Flush: the pages leave the write buffer, the reads go to flash
            (mnt / "control").write_text("start")
            walls = []
            for i in range(8):
                t0 = time.monotonic()
                assert os.pread(fd, 4096, i * (1 << 20)) == bytes([i + 1]) * 4096
                walls.append(time.monotonic() - t0)
        finally:
            os.close(fd)
        (mnt / "control").write_text("stop")
    r = json.loads((tmp_path / "report.json").read_text())
    model_s = r["read_latency_us"]["mean"] * 1e-6 * 500  # the reads are serial: no queueing
    assert r["read_latency_us"]["count"] == 8 and model_s > 0.005
    assert sum(walls) / 8 >= model_s * 0.98, (walls, model_s)
    assert sum(walls) / 8 <= model_s + 0.05 + r["live"]["lag_us"]["max"] * 1e-6, (walls, model_s)


def _args(*extra: str) -> object:
    import argparse

    return argparse.Namespace(preset=None, config=None, overrides=list(extra))


@needs_live
def test_memtouch_swaps_onto_the_device(tmp_path: Path, clean_machine: object) -> None:
    """A 64 MiB program in a 32 MiB cgroup: it completes with the same data it computes unlimited, the
    device saw every page the kernel swapped (within 1%), every page read was verified, the manifest is
    whole, the model agrees (--compare) and the trace replays."""
    exe = str(_cli_live.memtouch_binary())
    argv = [exe, "16384", "20000", "uniform", "50", "3"]
    out = tmp_path / "out"
    opts = ["--memory-limit", "32", "--swap-size", "256", "--verify", "--compare", "--no-record", "--quiet"]
    rc = main(["live", *opts, "--out", str(out), "--", *argv])
    assert rc == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["command"]["exit_status"] == 0
    k = s["kernel"]
    assert k["pswpout"] > 5000 and k["pswpin"] > 1000, k
    assert abs(k["written_over_pswpout"] - 1) <= 0.01, k
    assert abs(k["read_over_pswpin"] - 1) <= 0.01, k
    assert s["live"]["verify"]["pages_mismatched"] == 0 and s["live"]["verify"]["pages_checked"] > 0
    assert s["command"]["output_tail"].split("sink=")[1].split()[0] == _memtouch_sink(argv)
    assert verify_manifest(out) == []
    # --compare: the host model on the same program, within 15% of the kernel's page volumes.
    m = s["model"]
    assert m["kernel"]["pswpout"] == k["pswpout"] and m["kernel"]["pswpin"] == k["pswpin"]
    assert abs(m["model_over_kernel"]["pswpout"] - 1) <= 0.15, m
    assert abs(m["model_over_kernel"]["pswpin"] - 1) <= 0.15, m
    # The trace replays: the same requests, the same bytes.
    replay = tmp_path / "replay"
    opts = ["--trace", str(out / "trace.csv.gz"), "--format", "kswap", "--no-record", "--quiet"]
    assert main(["run", *opts, "--out", str(replay)]) == 0
    r = json.loads((replay / "summary.json").read_text())
    assert (r["requests"], r["host_write_bytes"]) == (s["requests"], s["host_write_bytes"])


REDIS = Path(__file__).resolve().parents[1] / "examples" / "live" / "redis.sh"


@needs_live
@pytest.mark.slow
@pytest.mark.skipif(
    not all(shutil.which(t) for t in ("redis-server", "redis-benchmark", "redis-cli")),
    reason="needs redis (apt-get install redis-server redis-tools)",
)
def test_redis_swaps_onto_the_device(tmp_path: Path, clean_machine: object) -> None:
    """The docs' real-application example, smaller: redis filled past a 32 MiB limit, then read at
    random by redis-benchmark; the device saw every page the kernel swapped."""
    out = tmp_path / "out"
    opts = ["--memory-limit", "32", "--swap-size", "256", "--no-record", "--quiet", "--out", str(out)]
    assert main(["live", *opts, "--", "sh", str(REDIS), "10000", "50000"]) == 0
    s = json.loads((out / "summary.json").read_text())
    assert '"GET"' in s["command"]["output_tail"], s["command"]["output_tail"]
    assert s["kernel"]["pswpout"] > 2000 and s["kernel"]["pswpin"] > 500, s["kernel"]
    assert abs(s["kernel"]["written_over_pswpout"] - 1) <= 0.01


def _cli(out: Path, argv: list[str], *extra: str) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "nandstack", "live", "--memory-limit", "32", "--swap-size", "256"]
    cmd += ["--no-record", "--quiet", *extra, "--out", str(out), "--", *argv]
    return subprocess.Popen(cmd, stderr=subprocess.DEVNULL)


def _wait_for_cgroup(proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    root = live.CGROUP_V1 if live.cgroup_kind() == "v1" else live.CGROUP_V2
    while not (root / f"{live.CGROUP_PREFIX}{proc.pid}").exists():
        assert proc.poll() is None, "nandstack live ended before its program started"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    time.sleep(0.5)  # the program is swapping


@needs_live
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_teardown_on_a_signal(tmp_path: Path, clean_machine: object, sig: signal.Signals) -> None:
    proc = _cli(
        tmp_path / "out", [str(_cli_live.memtouch_binary()), "16384", "100000000", "uniform", "50", "1"]
    )
    _wait_for_cgroup(proc)
    proc.send_signal(sig)
    assert proc.wait(timeout=60) == 130
    assert not (tmp_path / "out").exists()


@needs_live
def test_refuses_a_swap_larger_than_the_drive(
    clean_machine: object, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["live", "--swap-size", "10000000", "--no-record", "--", "true"]) == 2
    assert "must be a whole number of 4 KiB pages and fit the drive's" in capsys.readouterr().err


@needs_live
def test_teardown_when_the_program_fails(tmp_path: Path, clean_machine: object) -> None:
    rc = main(["live", "--no-record", "--quiet", "--out", str(tmp_path / "o"), "--", "sh", "-c", "exit 3"])
    assert rc == 1
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["command"]["exit_status"] == 3


@needs_live
@pytest.mark.skipif(not live.zswap_params(), reason="this kernel has no zswap")
def test_zswap_is_turned_on_for_the_run_only(tmp_path: Path, clean_machine: object) -> None:
    """--zswap: the kernel compresses the program's pages (zswpout > 0; the device gets only what zswap
    writes back), and zswap's parameters are restored (the fixture compares them)."""
    compressor = live.zswap_params()["compressor"]
    argv = [str(_cli_live.memtouch_binary()), "16384", "20000", "uniform", "50", "3"]
    opts = ["--memory-limit", "32", "--swap-size", "256", "--zswap", compressor, "--no-record", "--quiet"]
    assert main(["live", *opts, "--out", str(tmp_path / "o"), "--", *argv]) == 0
    k = json.loads((tmp_path / "o" / "summary.json").read_text())["kernel"]
    assert k["zswap"] == {"enabled": True, "compressor": compressor}
    assert k["zswpout"] > 5000, k
    assert k["device_written_4k_pages"] == k["pswpout"]


@needs_live
def test_cleanup_after_kill_9(
    tmp_path: Path, clean_machine: object, capsys: pytest.CaptureFixture[str]
) -> None:
    """kill -9 of `nandstack live` (with zswap on, when the kernel has it): everything stays until
    `--cleanup`, which undoes it all, zswap's parameters included."""
    # The shell outlives memtouch should the cgroup's OOM killer end it (zswap's pool is charged to it).
    argv = ["sh", "-c", f"{_cli_live.memtouch_binary()} 16384 100000000 uniform 50 1; sleep 60"]
    zswap = ["--zswap", live.zswap_params()["compressor"]] if live.zswap_params() else []
    proc = _cli(tmp_path / "out", argv, *zswap)
    _wait_for_cgroup(proc)
    proc.kill()
    proc.wait(timeout=10)
    assert [r.owner for r in live.leftovers()] == [proc.pid]
    if zswap:
        assert live.zswap_params()["enabled"] == "Y"  # left on by the killed run
    assert main(["live", "--no-record", "--", "true"]) == 2
    assert "run `nandstack live --cleanup` first" in capsys.readouterr().err
    assert main(["live", "--cleanup"]) == 0
    assert f"cleaned up after run {proc.pid}" in capsys.readouterr().out
    assert live.leftovers() == []


@needs_live
def test_reproduce_live_vs_model(monkeypatch: pytest.MonkeyPatch, clean_machine: object) -> None:
    """The experiment on one small program: the model's tasks run, the analysis runs the program live and
    compares; the device saw every page the kernel swapped."""
    from nandstack import experiments
    from nandstack.experiments import live_vs_model
    from nandstack.sweep import SerialBackend, run_tasks

    monkeypatch.setattr(live_vs_model, "PROGRAMS", (("small", 16384, "uniform", 50, 32),))
    monkeypatch.setattr(live_vs_model, "QUICK", ("small",))
    monkeypatch.setattr(live_vs_model, "QUICK_OPS", 20000)
    experiment = experiments.get("live-vs-model")
    tasks = experiment.tasks(True)
    assert [t.params["argv"] for t in tasks] == ["memtouch 16384 20000 uniform 50 11"]
    outcome = run_tasks(tasks, backend=SerialBackend(), record=False, resume=False)
    assert outcome.ok, outcome.errors
    analysis = experiment.analyze(tasks, outcome.results)
    rows = analysis.data["checks"]
    assert [r["figure"] for r in rows] == list(live_vs_model.TOLERANCE)
    assert all(r["device_written_over_pswpout"] == pytest.approx(1, abs=0.01) for r in rows)
    by = {r["figure"]: r for r in rows}
    assert by["pswpout"]["live"] > 5000 and by["pswpout"]["within"], by["pswpout"]
    assert analysis.verdict in ("agrees", "partly agrees")


@needs_live
def test_teardown_when_the_daemon_dies(tmp_path: Path, clean_machine: object) -> None:
    """kill -9 of the daemon mid-run: the run ends with a named error and everything is undone."""
    cmd = [sys.executable, "-m", "nandstack", "live", "--memory-limit", "32", "--swap-size", "256"]
    argv = [str(_cli_live.memtouch_binary()), "16384", "100000000", "uniform", "50", "1"]
    proc = subprocess.Popen([*cmd, "--no-record", "--quiet", "--out", str(tmp_path / "o"), "--", *argv],
                            stderr=subprocess.PIPE)  # fmt: skip
    _wait_for_cgroup(proc)
    state = json.loads((live.RUN_ROOT / str(proc.pid) / "state.json").read_text())
    os.kill(state["daemon_pid"], signal.SIGKILL)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert b"daemon died during the run (killed by signal 9)" in err, err
