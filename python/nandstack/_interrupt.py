"""Ctrl-C, SIGTERM and SIGHUP for the command line, with a deadline.

The engine checks for signals at every progress tick (at least every 10 ms of wall time), raises
`KeyboardInterrupt` there and the command ends with exit code 128 + the signal's number (130 for
SIGINT, 143 for SIGTERM, 129 for SIGHUP, the shell's convention); a run saves its partial summary.
SIGTERM and SIGHUP are handled as SIGINT is — by calling whatever SIGINT's handler is at that moment, so
a block that holds Ctrl-C back (a database write) holds them back too — unless the process was started
with them ignored (`nohup` ignores SIGHUP), which is then respected.

A phase that cannot tick — a long allocation, a system call — would leave the signal waiting, so the CLI
also watches these signals from a thread (through `signal.set_wakeup_fd`, which the C-level handler
writes to even while the main thread is inside the engine): if the command has not ended
`grace_seconds` after the first signal, or at a second one, the process removes the temporary output
directories it registered and exits at once with the same code. Output stays atomic: a run's `--out` is
only ever replaced by a complete directory, so exiting at any moment leaves the previous one or nothing.
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
from typing import Any

__all__ = [
    "EXIT_INTERRUPTED",
    "GRACE_SECONDS",
    "STOP_SIGNALS",
    "cleanup_on_exit",
    "deadline_on_sigint",
    "interrupt_exit_code",
    "interrupt_message",
]

EXIT_INTERRUPTED = 130
#: The signals a command stops on as on Ctrl-C (Windows has no SIGHUP).
STOP_SIGNALS = tuple(
    s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None
)
#: Seconds the engine has to stop after the first Ctrl-C before the process exits regardless.
GRACE_SECONDS = 3.0

_cleanup: set[Path] = set()
_lock = threading.Lock()
#: The last stop signal the process received (None: none, or a `KeyboardInterrupt` from elsewhere).
_received: signal.Signals | None = None


def interrupt_exit_code() -> int:
    """The exit code of a command stopped by `KeyboardInterrupt`: 128 + the signal's number (130 when no
    signal was seen, e.g. a progress callback raised it)."""
    return 128 + int(_received) if _received is not None else EXIT_INTERRUPTED


def interrupt_message() -> str:
    """`interrupted`, naming the signal unless it was Ctrl-C."""
    if _received is None or _received == signal.SIGINT:
        return "interrupted"
    return f"interrupted by {_received.name}"


def _as_sigint(signum: int, frame: Any) -> None:
    """SIGTERM and SIGHUP: do what SIGINT's handler does now (raise `KeyboardInterrupt`, or hold it back
    while a database write finishes)."""
    global _received
    _received = signal.Signals(signum)
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler) and handler is not _on_sigint:
        handler(signal.SIGINT, frame)
        return
    raise KeyboardInterrupt  # SIGINT itself is ignored (a background job): stop regardless


def _on_sigint(signum: int, frame: Any) -> None:
    global _received
    _received = signal.SIGINT
    signal.default_int_handler(signum, frame)


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


def _exit_now(message: str, signum: int) -> None:
    with _lock:
        paths = list(_cleanup)
    for p in paths:
        shutil.rmtree(p, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.write(2, f"\n{message}\n".encode())
    os._exit(128 + signum)


def _exit_unless(done: threading.Event, message: str, signum: int) -> None:
    if not done.is_set():
        _exit_now(message, signum)


def _watch(
    reader: socket.socket, done: threading.Event, grace_seconds: float, watched: tuple[int, ...]
) -> None:
    first = None
    while not done.is_set():
        try:
            data = reader.recv(64)
        except OSError:
            return
        if not data:
            return
        received = [b for b in data if b in watched]
        if not received:
            continue
        signum = received[0]
        name = "interrupted" if signum == signal.SIGINT else f"interrupted by {signal.Signals(signum).name}"
        if first is not None:
            _exit_now(name, signum)
        message = f"{name} (the run did not stop within {grace_seconds:g} s)"
        first = threading.Timer(grace_seconds, _exit_unless, args=(done, message, signum))
        first.daemon = True
        first.start()


def _handled_signals() -> dict[int, Any]:
    """The stop signals this process handles (SIGINT when Python's default handler has it; SIGTERM and
    SIGHUP unless they were ignored at start), with the handler to install."""
    handlers: dict[int, Any] = {}
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        handlers[signal.SIGINT] = _on_sigint
    for signum in STOP_SIGNALS[1:]:
        if signal.getsignal(signum) == signal.SIG_DFL:
            handlers[signum] = _as_sigint
    return handlers


@contextlib.contextmanager
def deadline_on_sigint(grace_seconds: float = GRACE_SECONDS) -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP stop the command as Ctrl-C does, and a stop signal not
    honoured within `grace_seconds` (or a second one) ends the process with 128 + its number. Only in
    the main thread, and only for the signals the process was not started with ignored (a background
    job's SIGINT, `nohup`'s SIGHUP); otherwise a no-op."""
    global _received
    _received = None
    usable = threading.current_thread() is threading.main_thread() and sys.platform != "win32"
    handlers = _handled_signals() if usable else {}
    if not handlers:
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
    thread = threading.Thread(target=_watch, args=(reader, done, grace_seconds, tuple(handlers)), daemon=True)
    thread.start()
    before = {signum: signal.signal(signum, handler) for signum, handler in handlers.items()}
    try:
        yield
    finally:
        done.set()
        for signum, handler in before.items():
            signal.signal(signum, handler)
        signal.set_wakeup_fd(previous)
        with contextlib.suppress(OSError):
            writer.send(b"\0")  # wake the watcher so that it sees `done`
        thread.join(timeout=1.0)
        writer.close()
        reader.close()
