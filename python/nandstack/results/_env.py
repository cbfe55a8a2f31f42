"""Where the database lives, which code produced a run, and a Ctrl-C-safe critical section."""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["DB_ENV", "default_db_path", "defer_sigint", "git_commit"]

#: Environment variable naming the results database file.
DB_ENV = "NANDSTACK_DB"


def default_db_path() -> Path:
    """`$NANDSTACK_DB`, else `$XDG_DATA_HOME/nandstack/results.duckdb`, else
    `~/.local/share/nandstack/results.duckdb`."""
    explicit = os.environ.get(DB_ENV)
    if explicit:
        return Path(explicit).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(data_home) / "nandstack" / "results.duckdb"


@functools.lru_cache(maxsize=1)
def git_commit() -> str | None:
    """The commit of the nandstack source tree this package runs from (`+dirty` when it has local
    changes), or `None` outside a git checkout (an installed wheel)."""
    here = Path(__file__).resolve().parent
    try:
        top = _git(here, "rev-parse", "--show-toplevel")
        if top is None or not (Path(top) / "crates" / "nandstack-py").is_dir():
            return None  # not nandstack's own checkout (e.g. site-packages inside another repository)
        head = _git(here, "rev-parse", "HEAD")
        if head is None:
            return None
        dirty = _git(here, "status", "--porcelain", "--untracked-files=no")
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def _git(cwd: Path, *args: str) -> str | None:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=5, stdin=subprocess.DEVNULL
    )
    return proc.stdout.strip() if proc.returncode == 0 else None


@contextlib.contextmanager
def defer_sigint() -> Iterator[None]:
    """Hold back Ctrl-C (SIGINT) for the duration of the block, then raise `KeyboardInterrupt` if one
    arrived: a database write either happens whole or not at all. A no-op outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[Any] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt
