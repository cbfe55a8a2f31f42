"""Progress bar and summary table formatting (pure Python, no engine runs)."""

from __future__ import annotations

import io

from nandstack._term import ProgressBar, _compact, flatten, format_table, format_value
from nandstack.cli import summary_rows


def feed(bar: ProgressBar, phase: str, total: int, steps: int = 200) -> None:
    for i in range(steps):  # like the engine: from 0 up to (not always including) total
        bar(phase, i * total // steps, total)


def fed(tty: bool, *phases: tuple[str, int]) -> str:
    """What a progress bar prints when fed each (phase, total) in turn, then closed."""
    out = io.StringIO()
    bar = ProgressBar(out, tty=tty)
    for phase, total in phases:
        feed(bar, phase, total)
    bar.close()
    return out.getvalue()


def test_plain_progress_prints_quarters_and_completes_each_phase():
    text = fed(False, ("precondition", 1000), ("measure", 16_055_951_360))
    lines = [line.split(" (")[0] for line in text.splitlines()]
    expected = [f"{phase}: {p:3d}%" for phase in ("precondition", "measure") for p in (0, 25, 50, 75, 100)]
    assert lines == expected
    assert "(16.1G/16.1G)" in text


def test_a_phase_announced_before_its_size_shows_its_quarters_once_sized():
    # The engine reports "precondition" with total 0 while it builds the device, then the same phase with
    # the fill's size: the fill's quarters are shown, never a "100% (0/0)" first.
    out = io.StringIO()
    bar = ProgressBar(out, tty=False)
    bar("precondition", 0, 0)
    feed(bar, "precondition", 1000)
    bar.close()
    lines = [line.split(" (")[0] for line in out.getvalue().splitlines()]
    assert lines == [f"precondition: {p:3d}%" for p in (0, 25, 50, 75, 100)]


def test_a_phase_of_unknown_size_says_done_not_100_percent():
    out = io.StringIO()
    bar = ProgressBar(out, tty=False)
    bar("precondition", 0, 0)
    bar("measure", 0, 10)
    bar.close()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("precondition: done ")
    assert "(0/0)" not in out.getvalue()
    tty = io.StringIO()
    bar = ProgressBar(tty, tty=True)
    bar("host", 5, 0)
    bar.close()
    assert "host" in tty.getvalue() and "done" in tty.getvalue() and "%" not in tty.getvalue()


def test_plain_progress_interrupted_is_not_shown_complete():
    out = io.StringIO()
    bar = ProgressBar(out, tty=False)
    bar("measure", 10, 100)
    bar.close(complete=False)
    assert "100%" not in out.getvalue()


def test_tty_progress_redraws_in_place_and_ends_lines():
    text = fed(True, ("warmup", 1000), ("measure", 1000))
    assert text.count("\n") == 2
    assert text.startswith("\rwarmup")
    assert "100.0% 1000/1000" in text.split("\n")[0].split("\r")[-1]


def test_compact_counts():
    assert [_compact(n) for n in (0, 9_999, 10_000, 3_919_910, 16_055_951_360, 10**15)] == [
        "0",
        "9999",
        "10.0k",
        "3.9M",
        "16.1G",
        "1000.0T",
    ]


def test_flatten():
    assert flatten({"a": {"b": 1, "c": {"d": [1]}}, "e": 2}) == {"a.b": 1, "a.c.d": [1], "e": 2}


def test_format_value():
    assert format_value("waf", 2.34567) == "2.346"
    assert format_value("host_write_bytes", 8_192_000_000) == "8,192,000,000 (7.63 GiB)"
    assert format_value("flash_program_pages", 4193993) == "4,193,993"
    assert format_value("x", 123456.789) == "123,456.8"
    assert format_value("verified", False) == "false"
    assert format_value("x", None) == "-"


def test_format_table_aligns_values():
    table = format_table([("waf", 8.388), ("host_write_bytes", 8_192_000_000)]).splitlines()
    assert table == [
        "waf                       8.388",
        "host_write_bytes  8,192,000,000 (7.63 GiB)",
    ]


def test_format_table_left_aligns_text():
    table = format_table([("name", "ftl"), ("waf", 5.175), ("ops_per_second", 6729163.0)]).splitlines()
    assert table == [
        "name            ftl",
        "waf                   5.175",
        "ops_per_second  6,729,163.0",
    ]


def test_summary_rows_order_and_latency():
    report = {
        "config": {"seed": 1},
        "wall_seconds": 1.5,
        "waf": 2.0,
        "erase_count": {"min": 1.0, "mean": 2.0, "max": 3.0, "stddev": 0.5, "count": 8},
        "write_latency_ns": {"p50": 100, "p99": 900},
        "timeseries": {"columns": ["read_latency_us_p50"], "read_latency_us": [[1.0]]},
        "unrelated": 7,
    }
    names = [name for name, _ in summary_rows(report)]
    assert names == [
        "waf",
        "erase_count.min",
        "erase_count.mean",
        "erase_count.max",
        "erase_count.stddev",
        "wall_seconds",
        "write_latency_ns.p50",
        "write_latency_ns.p99",
    ]
