"""Reliability contracts (docs/reliability.md): limits before allocation, Ctrl-C, atomic outputs, named
errors for bad input (never a traceback), sweep workers that die with their parent."""

from __future__ import annotations

import contextlib
import copy
import json
import os
import random
import re
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import fuzzing
import nandstack
from conftest import TINY, TINY_ARGS
from nandstack._output import verify_manifest

#: 16 channels × 2 chips × 32768 blocks of the consumer preset: 8 TiB of flash.
HUGE_GEOMETRY = [
    "--set",
    "device.geometry.channels=16",
    "--set",
    "device.geometry.chips_per_channel=2",
    "--set",
    "device.geometry.blocks_per_plane=32768",
]
ADDRESS_SPACE_KIB = 6_000_000  # `ulimit -v 6000000`


def _limit_address_space() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    kib = ADDRESS_SPACE_KIB * 1024
    resource.setrlimit(resource.RLIMIT_AS, (kib, kib))


def default_signals() -> None:
    """In a child: SIGINT, SIGTERM and SIGHUP at their defaults, whatever the test process inherited (a
    shell without job control starts background jobs with SIGINT ignored)."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def popen(args: list[str], cwd: Path, **kw) -> subprocess.Popen:
    """`python -m nandstack ARGS` in `cwd`, its signals at their defaults (or `preexec_fn`)."""
    return fuzzing.popen(args, cwd, preexec_fn=kw.pop("preexec_fn", default_signals), **kw)


# --- limits before allocation ---------------------------------------------------------------------------


def test_an_8_tib_geometry_under_ulimit_is_a_named_error_from_the_cli(tmp_path):
    proc = popen(["run", "--no-record", "-q", *HUGE_GEOMETRY], tmp_path, preexec_fn=_limit_address_space)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err
    assert err.startswith("error: config error at `device.geometry`"), err
    assert "ulimit -v" in err and "GiB" in err and "Traceback" not in err


def test_an_8_tib_geometry_under_ulimit_is_a_python_exception(tmp_path):
    code = (
        "import nandstack\n"
        "try:\n"
        "    nandstack.run(set={'device.geometry.channels': 16, 'device.geometry.chips_per_channel': 2,"
        " 'device.geometry.blocks_per_plane': 32768}, record=False)\n"
        "except nandstack.ConfigError as e:\n"
        "    print('ConfigError', e.key)\n"
        # An explicit limit skips the estimate's check: the address-space probe fails instead.
        "try:\n"
        "    nandstack.run(set={'device.geometry.channels': 16, 'device.geometry.chips_per_channel': 2,"
        " 'device.geometry.blocks_per_plane': 32768, 'run.memory_limit_bytes': 2**50}, record=False)\n"
        "except MemoryError as e:\n"
        "    print(type(e).__name__, isinstance(e, nandstack.NandstackError), e.bytes > 2**32)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limit_address_space,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["ConfigError device.geometry", "OutOfMemoryError True True"]


def test_a_16_tib_write_buffer_is_a_named_error_within_seconds(cli):
    start = time.monotonic()
    proc = cli("run", *TINY_ARGS, "--set", f"device.controller.write_buffer.bytes={16 << 40}", "--no-record")
    assert proc.returncode == 2, proc.stderr
    assert "device.controller.write_buffer.bytes" in proc.stderr and "capacity" in proc.stderr
    assert time.monotonic() - start < 10


def test_memory_limit_names_the_keys_and_the_estimate():
    with pytest.raises(
        nandstack.ConfigError, match=r"needs about .* MiB of memory — block FTL mapping tables"
    ) as e:
        nandstack.run(set={"run.memory_limit_bytes": 10_000}, record=False)
    assert e.value.key == "device.geometry"
    # Validation alone says so too when the limit is part of the config.
    from nandstack._config_obj import normalize_config

    with pytest.raises(nandstack.ConfigError, match=r"run\.memory_limit_bytes"):
        normalize_config({"run": {"memory_limit_bytes": 10_000}})


# --- Ctrl-C ---------------------------------------------------------------------------------------------


def test_sigint_ends_a_10e11_request_run_within_5_s_with_a_partial_summary(tmp_path):
    proc = popen(["run", *TINY_ARGS, "--set", "workload.requests=100000000000", "--out", "out"], tmp_path)
    try:
        while "measure" not in (line := proc.stderr.readline()):  # the measured phase has begun
            assert line, "the run ended early"
        proc.send_signal(signal.SIGINT)
        start = time.monotonic()
        _, err = proc.communicate(timeout=30)
        elapsed = time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert elapsed < 5, elapsed
    assert "Traceback" not in err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["interrupted"] is True and 0 < summary["requests"] < 10**11
    assert verify_manifest(tmp_path / "out") == []


def test_a_phase_that_does_not_tick_is_ended_by_the_deadline(tmp_path):
    """The engine cannot check Ctrl-C inside one long call (here a scan of an endless trace from
    Python); the CLI's deadline ends the process regardless."""
    script = (
        "import sys\n"
        "from nandstack import _core\n"
        "from nandstack._interrupt import deadline_on_sigint\n"
        "print('start', flush=True)\n"
        "with deadline_on_sigint(0.5):\n"
        "    _core.trace_stats('/dev/zero', 'u32_blocks')\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdout.readline() == "start\n"
    time.sleep(0.3)
    start = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "did not stop within 0.5 s" in err
    assert time.monotonic() - start < 3


def test_building_a_1_tib_host_reports_progress_and_stops_when_asked():
    """Host RAM up to 1 TiB is allowed; its frame table (10 GiB) takes tens of seconds to build, so the
    build reports phase "build" and an interrupt from the callback ends it at the next chunk (found by
    the fuzz suite at seed 4242: `host.ram_mib = 1000000` ran 25 s without a check)."""
    config = {**copy.deepcopy(fuzzing.HOST), "host": {"ram_mib": 1_000_000, "swap": {"size_mib": 64}}}
    seen = []

    def progress(phase, done, total):
        seen.append((phase, done, total))
        if len(seen) == 3:
            raise KeyboardInterrupt

    with pytest.raises(nandstack.Interrupted):
        nandstack.run(config, record=False, progress=progress)
    assert [p for p, _, _ in seen] == ["build"] * 3
    assert seen[0][1] == 0 and seen[0][2] == 1_000_000 * 256 and seen[1][1] > 0


# --- atomic outputs -------------------------------------------------------------------------------------


def _leftovers(parent: Path, name: str) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(f".{name}."))


def test_six_concurrent_runs_into_one_out(tmp_path):
    procs = [
        popen(
            ["run", *TINY_ARGS, "--seed", str(s), "--out", "shared", "--overwrite", "--no-record", "-q"],
            tmp_path,
        )
        for s in range(6)
    ]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    assert verify_manifest(tmp_path / "shared") == []
    manifest = json.loads((tmp_path / "shared" / "manifest.json").read_text())
    summary = json.loads((tmp_path / "shared" / "summary.json").read_text())
    assert set(manifest["files"]) == {"summary.json", "config.toml", "timeseries.csv"}
    assert summary["seed"] in range(6)
    assert _leftovers(tmp_path, "shared") == []


def test_kill_9_at_random_moments_never_leaves_a_half_written_out(tmp_path):
    rng = random.Random(9)
    args = [
        "run",
        *TINY_ARGS,
        "--set",
        "workload.requests=200000",
        "--out",
        "out",
        "--overwrite",
        "--no-record",
    ]
    for _ in range(8):
        proc = popen([*args, "--seed", str(rng.randrange(100))], tmp_path)
        time.sleep(rng.uniform(0.0, 2.0))
        proc.kill()
        proc.communicate()
        if (tmp_path / "out").exists():
            assert verify_manifest(tmp_path / "out") == []
        # A killed run leaves at most its own hidden temporary sibling, and never a file in it
        # without a manifest other than while it publishes (the time series is an anonymous file
        # until the run has ended): then only the run's own files, being written in turn (the time
        # series linked in, summary.json, config.toml), and no manifest yet — or the manifest being
        # written (`manifest.json.tmp`, before its rename: a kill landed in that window once).
        for name in _leftovers(tmp_path, "out"):
            files = [p for p in (tmp_path / name).rglob("*") if p.is_file()]
            if not files or verify_manifest(tmp_path / name) == []:
                continue
            own = {"summary.json", "config.toml", "timeseries.csv", "manifest.json.tmp"}
            assert {p.name for p in files} <= own, (name, files)
    # The next run cleans up after the killed ones.
    proc = popen([*args, "--set", "workload.requests=2000", "-q"], tmp_path)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert verify_manifest(tmp_path / "out") == []
    assert _leftovers(tmp_path, "out") == []


def test_results_verify_tells_complete_from_incomplete_folders(cli, tmp_path):
    assert cli("run", *TINY_ARGS, "--out", "ok", "--no-record", "-q").returncode == 0
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "summary.json").write_text("{}")
    proc = cli("results", "verify", "ok", "half")
    assert proc.returncode == 1
    assert "ok: complete" in proc.stdout and "half: no manifest.json: an incomplete run" in proc.stdout
    (tmp_path / "ok" / "summary.json").write_text("{}")
    assert "does not match its SHA-256" in cli("results", "verify", "ok").stdout


# --- named errors for bad input ---------------------------------------------------------------------------


def test_a_non_utf8_config_is_a_named_error(cli, tmp_path):
    (tmp_path / "bad.toml").write_bytes(b"seed = 1\n[workload]\nrequests = 10 # \xff\xfe\n")
    proc = cli("run", "bad.toml", "--no-record")
    assert proc.returncode == 2
    assert (
        proc.stderr
        == "error: bad.toml: line 3: not UTF-8 text (byte 36 is 0xff); a config file is UTF-8 TOML\n"
    )
    with pytest.raises(nandstack.ConfigError, match="not UTF-8"):
        nandstack.load_config(tmp_path / "bad.toml")
    debug = cli("--debug", "run", "bad.toml", "--no-record")
    assert debug.returncode == 2 and "Traceback" in debug.stderr


def test_results_options_count_before_or_after_the_subcommand(cli, tmp_path):
    db = tmp_path / "r.duckdb"
    assert cli("run", *TINY_ARGS, "--db", str(db), "-q").returncode == 0
    before = cli("results", "--db", str(db), "export", "a.csv")
    after = cli("results", "export", "b.csv", "--db", str(db))
    assert before.returncode == after.returncode == 0, before.stderr + after.stderr
    assert "wrote 1 runs" in before.stderr and "wrote 1 runs" in after.stderr
    wrong = cli("results", "--limit", "3", "export", "c.csv", "--db", str(db))
    assert wrong.returncode == 2
    assert "--limit does not apply to `nandstack results export`" in wrong.stderr


def test_blkparse_garbage_is_an_error_naming_the_line_or_skipped_when_lenient(cli, tmp_path):
    trace = tmp_path / "t.blkparse"
    event = "  8,0    3        {i}     0.{i:09d}  4162  D  WS {s} + 8 [kworker/u8:0]\n"
    lines = [event.format(i=i + 1, s=8 * i) for i in range(20)]
    lines.insert(5, "garbage in the middle\n")
    trace.write_text("".join(lines) + "CPU0 (8,0):\n Reads Queued: 0, 0KiB\n")
    args = ["run", *TINY_ARGS, "--trace", str(trace), "--format", "blkparse", "--no-record", "-q"]
    strict = cli(*args, "--out", "s")
    assert strict.returncode == 2 and "t.blkparse:6: not a blkparse event line" in strict.stderr
    lenient = cli(*args, "--out", "l", "--set", 'workload.trace.malformed="lenient"')
    assert lenient.returncode == 0, lenient.stderr
    summary = json.loads((tmp_path / "l" / "summary.json").read_text())
    assert summary["requests"] == 20 and summary["trace"]["malformed_rows"] == 1


def test_arrival_iops_outside_open_loop_is_an_error():
    with pytest.raises(nandstack.ConfigError, match=r"applies only to workload\.io\.mode") as e:
        nandstack.run(set=[*TINY, "workload.arrival_iops=100"], record=False)
    assert e.value.key == "workload.arrival_iops"


def test_time_past_2_64_ns_is_an_error_not_a_cap():
    with pytest.raises(nandstack.ConfigError, match="2\\^64 ns") as e:
        nandstack.run(
            set=[
                *TINY,
                'workload.io.mode="open_loop"',
                "workload.arrival_iops=0.000001",
                "workload.requests=100000",
            ],
            record=False,
        )
    assert e.value.key == "workload.arrival_iops"


# --- sweeps -----------------------------------------------------------------------------------------------


def test_sweep_workers_die_with_their_parent(tmp_path):
    spec = tmp_path / "long.toml"
    tiny = "\n".join(f'"{k.split("=")[0]}" = {k.split("=")[1]}' for k in TINY if "requests" not in k)
    spec.write_text(
        f'name = "long"\ntags = "abc"\nseeds = 2\n[set]\n{tiny}\n"workload.requests" = 1000000000\n'
    )
    proc = popen(["sweep", str(spec), "--db", str(tmp_path / "r.duckdb"), "-q", "-j", "2"], tmp_path)
    try:
        deadline = time.monotonic() + 60
        workers: list[str] = []
        while len(workers) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
            out = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout
            workers = out.split()
        assert len(workers) >= 2, workers
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
        time.sleep(1.0)
        alive = [w for w in workers if _running(int(w))]
        assert alive == [], f"workers outlived their parent: {alive}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def test_a_string_of_tags_is_one_tag(tmp_path):
    from nandstack.sweep import load_spec

    spec = tmp_path / "s.toml"
    spec.write_text('name = "t"\ntags = "abc"\n')
    assert load_spec(spec).tags == ["abc"]
    result = nandstack.run(set=TINY, record=False)
    db = nandstack.ResultsDB(tmp_path / "r.duckdb")
    db.record(result, tags="abc")
    assert db.runs(columns=["tags"]).to_dicts()[0]["tags"] == ["abc"]


def test_typo_bounds_name_the_key():
    """Values that can only be typos are refused before the run, naming the key and the bound."""
    cases = {
        "device.geometry.channels": ({"device.geometry.channels": 1_000_000}, "at most 1024"),
        "device.ftl.gc.victim.d": (
            {"device.ftl.gc.victim": {"policy": "d_choices", "d": 4294967295}},
            "must be in [1, ",
        ),
        "device.zoned.block_layer.victim.d": (
            {"device.kind": "zoned", "device.zoned.block_layer.victim": {"policy": "d_choices", "d": 10**9}},
            "the zones GC samples from",
        ),
        "run.interval_sim_seconds": ({"run.interval_sim_seconds": 1e-12}, "must be 0 or in"),
    }
    for key, (overrides, message) in cases.items():
        with pytest.raises((nandstack.ConfigError, nandstack.GeometryError), match=re.escape(message)) as e:
            nandstack.run({}, set=overrides, record=False)
        assert key.endswith(getattr(e.value, "key", None) or getattr(e.value, "field", "")), (key, e.value)


def test_a_staged_file_appears_only_when_its_block_ends(tmp_path):
    from nandstack import _output

    with _output.staged_file(tmp_path, "timeseries.csv") as path:
        with open(path, "w") as f:
            f.write("t,v\n1,2\n")
        # While the run streams into it, nothing is visible in the folder (on Linux: O_TMPFILE).
        if sys.platform.startswith("linux"):
            assert list(tmp_path.iterdir()) == []
    assert (tmp_path / "timeseries.csv").read_text() == "t,v\n1,2\n"
    # A block that fails leaves nothing behind.
    other = tmp_path / "failed"
    other.mkdir()
    with contextlib.suppress(RuntimeError), _output.staged_file(other, "timeseries.csv") as path:
        with open(path, "w") as f:
            f.write("partial")
        raise RuntimeError("killed")
    if sys.platform.startswith("linux"):
        assert list(other.iterdir()) == []
