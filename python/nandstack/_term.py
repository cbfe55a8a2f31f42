"""Terminal output without dependencies: a progress bar and aligned key/value tables."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TextIO

__all__ = ["ProgressBar", "flatten", "format_frame", "format_table", "format_value", "progress_bar"]


@contextlib.contextmanager
def progress_bar(quiet: bool = False) -> Iterator[ProgressBar | None]:
    """A `ProgressBar` for the block (`None` when `quiet`), closed at its end: complete when the block
    finishes, left incomplete when it raises (Ctrl-C included)."""
    bar = None if quiet else ProgressBar()
    try:
        yield bar
    except BaseException:
        if bar is not None:
            bar.close(complete=False)
        raise
    if bar is not None:
        bar.close()


class ProgressBar:
    """`progress(phase, done, total)` callback drawing on a stream (stderr by default).

    On a terminal it redraws one line per phase in place (`\\r`, at most ~10 times a second). Elsewhere
    (CI logs, pipes) it prints a plain line at 0/25/50/75/100% of each phase so logs stay short.
    A phase is shown complete when the next one starts or when `close()` is called.
    """

    def __init__(self, stream: TextIO | None = None, tty: bool | None = None, width: int = 30) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.tty = _isatty(self.stream) if tty is None else tty
        self.width = width
        self._phase: str | None = None
        self._total = 0
        self._phase_start = 0.0
        self._last_draw = 0.0
        self._next_quarter = 0
        self._line_open = False

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if phase != self._phase:
            self._end_phase(complete=True)
            self._phase, self._phase_start, self._next_quarter = phase, now, 0
        elif total != self._total and self._total == 0:
            # The phase was announced before its size was known (the engine reports "precondition" with
            # total 0 while it builds the device): its quarters start now, its clock kept running.
            self._next_quarter = 0
        self._total = total
        if total <= 0:  # size unknown: nothing to draw a fraction of; a tty shows that it is working
            if self.tty and (now - self._last_draw >= 0.1 or not self._line_open):
                self._draw_unsized(done, now)
            return
        fraction = min(done / total, 1.0)
        if self.tty:
            if now - self._last_draw >= 0.1 or fraction >= 1.0 or not self._line_open:
                self._draw(done, total, fraction, now)
        elif fraction * 4 >= self._next_quarter:
            quarter = int(fraction * 4)
            self._print(f"{quarter * 25:3d}%", done, total, now)
            self._next_quarter = quarter + 1

    def close(self, complete: bool = True) -> None:
        """End the current phase (shown at 100% if `complete`); call before printing anything else."""
        self._end_phase(complete)
        self._phase = None

    def _end_phase(self, complete: bool) -> None:
        if self._phase is None:
            return
        now = time.monotonic()
        if complete and self._total <= 0:  # a phase of unknown size: say it ended and how long it took
            if self.tty:
                self._draw_unsized(None, now)
            else:
                self.stream.write(f"{self._phase}: done {now - self._phase_start:.1f}s\n")
                self.stream.flush()
        elif complete and self.tty:
            self._draw(self._total, self._total, 1.0, now)
        elif complete and self._next_quarter <= 4:
            self._print("100%", self._total, self._total, now)
        if self._line_open:
            self.stream.write("\n")
            self.stream.flush()
            self._line_open = False

    def _draw(self, done: int, total: int, fraction: float, now: float) -> None:
        filled = int(fraction * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        counts = f"{_compact(done)}/{_compact(total)}"
        elapsed = now - self._phase_start
        self.stream.write(f"\r{self._phase:<12} [{bar}] {fraction:6.1%} {counts} {elapsed:.1f}s\x1b[K")
        self.stream.flush()
        self._last_draw, self._line_open = now, True

    def _draw_unsized(self, done: int | None, now: float) -> None:
        counts = "done" if done is None else (f"{_compact(done)} so far" if done else "working")
        elapsed = now - self._phase_start
        self.stream.write(f"\r{self._phase:<12} {counts} {elapsed:.1f}s\x1b[K")
        self.stream.flush()
        self._last_draw, self._line_open = now, True

    def _print(self, percent: str, done: int, total: int, now: float) -> None:
        elapsed = now - self._phase_start
        self.stream.write(f"{self._phase}: {percent} ({_compact(done)}/{_compact(total)}) {elapsed:.1f}s\n")
        self.stream.flush()


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """`{"a": {"b": 1}}` -> `{"a.b": 1}`; lists and scalars are kept as values."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def format_table(rows: Iterable[tuple[str, Any]]) -> str:
    """Aligned `key  value` lines: numbers right-aligned in one column (notes after), text left-aligned."""
    cells = [(key, value, format_value(key, value)) for key, value in rows]
    if not cells:
        return ""
    key_width = max(len(key) for key, _, _ in cells)
    numbers = [text.split(" (")[0] for _, value, text in cells if _is_number(value)]
    number_width = max((len(n) for n in numbers), default=0)
    lines = []
    for key, value, text in cells:
        if _is_number(value):
            number, sep, note = text.partition(" (")
            text = f"{number:>{number_width}}" + (" (" + note if sep else "")
        lines.append(f"{key:<{key_width}}  {text}".rstrip())
    return "\n".join(lines)


def _is_number(value: Any) -> bool:
    """Numbers and missing values (shown as `-`) share the right-aligned column."""
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def format_value(key: str, value: Any) -> str:
    """Ints with thousands separators (`*bytes` also in binary units); floats to 4 significant digits."""
    if isinstance(value, bool) or value is None:
        return str(value).lower() if isinstance(value, bool) else "-"
    if isinstance(value, int):
        text = f"{value:,}"
        if key.endswith("bytes") and abs(value) >= 1024:
            text += f" ({_binary(value)})"
        return text
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1000 else f"{value:,.1f}"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


def _binary(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(size) < 1024 or unit == "TiB":
            return f"{size:.2f} {unit}" if unit != "B" else f"{n} B"
        size /= 1024
    return f"{n} B"  # unreachable


def _compact(n: int) -> str:
    """`16055951360` -> `16.1G`: short counts for progress lines (exact below 10,000)."""
    if abs(n) < 10_000:
        return str(n)
    value = float(n)
    for unit in ("k", "M", "G"):
        value /= 1000
        if abs(value) < 1000:
            return f"{value:.1f}{unit}"
    return f"{value / 1000:.1f}T"


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def format_frame(columns: list[str], rows: Iterable[Iterable[Any]], max_width: int = 48) -> str:
    """An aligned text table with a header: numbers right-aligned (4 significant digits for floats),
    text left-aligned and cut to `max_width` characters; missing values show as `-`."""
    raw = [list(row) for row in rows]
    cells = [[_cell(v, max_width) for v in row] for row in raw]
    numeric = [bool(raw) and all(_is_number(row[i]) for row in raw) for i in range(len(columns))]
    widths = [max([len(c), *(len(row[i]) for row in cells)]) for i, c in enumerate(columns)]

    def line(texts: list[str]) -> str:
        parts = [t.rjust(w) if n else t.ljust(w) for t, w, n in zip(texts, widths, numeric)]
        return "  ".join(parts).rstrip()

    return "\n".join([line(list(columns)), *(line(row) for row in cells)])


def _cell(value: Any, max_width: int) -> str:
    if isinstance(value, float):
        text = "-" if value != value else (f"{value:.4g}" if abs(value) < 1e6 else f"{value:,.0f}")
    elif isinstance(value, (list, tuple)):
        text = ",".join(str(v) for v in value)
    elif value is None:
        text = "-"
    else:
        text = str(value)
    return text if len(text) <= max_width else text[: max_width - 1] + "…"
