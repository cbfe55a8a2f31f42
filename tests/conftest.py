"""Shared helpers: a tiny device so every run takes well under a second in a release build, and a
throw-away results database for the whole session (no test writes to the user's data directory)."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

import pytest

# Set before any test (and inherited by every subprocess the tests start): runs record here.
_SESSION_DIR = Path(tempfile.mkdtemp(prefix="nandstack-tests-"))
os.environ["NANDSTACK_DB"] = str(_SESSION_DIR / "results.duckdb")
os.environ["XDG_DATA_HOME"] = str(_SESSION_DIR / "xdg")
atexit.register(shutil.rmtree, _SESSION_DIR, ignore_errors=True)

#: Overrides that shrink the device and the workload (1 channel, 64 blocks of 32 x 4 KiB pages; enough
#: over-provisioning that the GC thresholds fit in one plane).
TINY = [
    "device.geometry.channels=1",
    "device.geometry.chips_per_channel=1",
    "device.geometry.dies_per_chip=1",
    "device.geometry.planes_per_die=1",
    "device.geometry.blocks_per_plane=64",
    "device.geometry.pages_per_block=32",
    "device.geometry.page_size_bytes=4096",
    "device.ftl.over_provisioning=0.25",
    "workload.requests=20000",
]

#: The engine's default config as a file (the CLI runs the default preset when given none).
ENGINE_DEFAULT = Path(__file__).resolve().parent / "engine-default.toml"

#: The engine default config and every `--set` flag for TINY, ready to splice into a command line.
TINY_ARGS = [str(ENGINE_DEFAULT), *(arg for item in TINY for arg in ("--set", item))]

#: TINY as a dict of dotted keys to typed values (for sweep specs and `Config.set`).
TINY_DICT = {
    item.partition("=")[0]: (float if "." in item.partition("=")[2] else int)(item.partition("=")[2])
    for item in TINY
}

#: Where tests keep artifacts worth looking at after a run (gitignored).
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


def without_wall_clock(value):
    """The report with every `wall_*` key (at any depth) removed: the only keys allowed to vary."""
    if isinstance(value, dict):
        return {k: without_wall_clock(v) for k, v in value.items() if not k.startswith("wall_")}
    if isinstance(value, list):
        return [without_wall_clock(v) for v in value]
    return value


CliRunner = Callable[..., subprocess.CompletedProcess]


@pytest.fixture
def cli(tmp_path: Path) -> CliRunner:
    """Run `python -m nandstack ARGS...` in a temporary directory; returns the completed process."""

    def run(
        *args: str, timeout: float = 600, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "nandstack", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
        )

    return run


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A fresh results database file for one test."""
    return tmp_path / "results.duckdb"


def write_tiny_kswap_capture(folder: Path) -> None:
    """A one-program kernel-swap capture, `kswap_tiny` (memtouch 2000 pages uniform 50% in a 4 MiB
    cgroup; the kernel swapped in 9000 and out 10000 pages, one 8-page write and one 1-page read), in
    `folder`."""
    import gzip
    import json

    meta = {
        "command": ["memtouch", "2000", "20000", "uniform", "50", "1"],
        "memory_limit_mb": 4,
        "swap_mb": 64,
        "discard": "none",
        "vmstat_delta_system_wide": {"pswpin": 9000, "pswpout": 10000},
    }
    (folder / "kswap_tiny.json").write_text(json.dumps(meta))
    with gzip.open(folder / "kswap_tiny.csv.gz", "wt") as f:
        f.write("time_s,op,sector,sectors,comm\n0.1,W,8,64,memtouch\n0.2,R,8,8,memtouch\n")


def interrupt_at_quarter(
    cmd: list[str], *, whole_group: bool = True, cwd: Path | None = None
) -> tuple[int, str, int]:
    """Start `cmd` in a session of its own (SIGINT at its default even when pytest ignores it), send it
    SIGINT when its non-tty progress first reports 25% — to its whole process group as a terminal's
    Ctrl-C does, or to the process alone — and wait: its exit code, its whole stderr and its pid (its
    session's id)."""
    import signal

    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stderr is not None
    lines = []
    for line in proc.stderr:  # non-tty progress: a line at 0/25/50/75/100%
        lines.append(line)
        if "25%" in line:
            break
    if whole_group:
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGINT)
    lines.append(proc.stderr.read())
    proc.stderr.close()
    return proc.wait(timeout=60), "".join(lines), proc.pid
