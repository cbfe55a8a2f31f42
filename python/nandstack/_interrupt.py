"""Ctrl-C for the command line, with a deadline.

The engine checks for Ctrl-C at every progress tick (at least every 10 ms of wall time), raises
`KeyboardInterrupt` there and the command ends with exit code 130 (a run saves its partial summary). A
phase that cannot tick — a long allocation, a system call — would leave Ctrl-C waiting, so the CLI also
watches SIGINT from a thread (through `signal.set_wakeup_fd`, which the C-level handler writes to even
while the main thread is inside the engine): if the command has not ended `grace_seconds` after the
first Ctrl-C, or at a second Ctrl-C, the process removes the temporary output directories it registered
and exits with 130 at once. Output stays atomic: a run's `--out` is only ever replaced by a complete
directory, so exiting at any moment leaves the previous one or nothing.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

__all__ = ["EXIT_INTERRUPTED", "GRACE_SECONDS", "cleanup_on_exit", "deadline_on_sigint"]

EXIT_INTERRUPTED = 130
#: Seconds the engine has to stop after the first Ctrl-C before the process exits regardless.
GRACE_SECONDS = 3.0

_cleanup: set[Path] = set()
_lock = threading.Lock()


@contextlib.contextmanager
def cleanup_on_exit(path: Path) -> Iterator[None]:
    """Remove `path` (a temporary directory) if the process is made to exit while the block runs."""
    with _lock:
        _cleanup.add(path)
    try:
        yield
    finally:
        with _lock:
            _cleanup.discard(path)


def _exit_now(message: str) -> None:
    with _lock:
        paths = list(_cleanup)
    for p in paths:
        shutil.rmtree(p, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.write(2, f"\n{message}\n".encode())
    os._exit(EXIT_INTERRUPTED)


def _watch(reader: socket.socket, done: threading.Event, grace_seconds: float) -> None:
    first = None
    while not done.is_set():
        try:
            data = reader.recv(64)
        except OSError:
            return
        if not data:
            return
        if signal.SIGINT not in data:
            continue
        if first is not None:
            _exit_now("interrupted")
        first = threading.Timer(
            grace_seconds,
            lambda: (
                done.is_set() or _exit_now(f"interrupted (the run did not stop within {grace_seconds:g} s)")
            ),
        )
        first.daemon = True
        first.start()


@contextlib.contextmanager
def deadline_on_sigint(grace_seconds: float = GRACE_SECONDS) -> Iterator[None]:
    """Within the block, a Ctrl-C not honoured within `grace_seconds` (or a second Ctrl-C) ends the
    process with exit code 130. Only in the main thread, and only where SIGINT is handled by Python
    (not when the process was started with SIGINT ignored); otherwise a no-op."""
    usable = (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
        and sys.platform != "win32"
    )
    if not usable:
        yield
        return
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    done = threading.Event()
    try:
        previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    except ValueError:  # not the main interpreter
        reader.close()
        writer.close()
        yield
        return
    thread = threading.Thread(target=_watch, args=(reader, done, grace_seconds), daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        signal.set_wakeup_fd(previous)
        with contextlib.suppress(OSError):
            writer.send(b"\0")  # wake the watcher so that it sees `done`
        thread.join(timeout=1.0)
        writer.close()
        reader.close()
