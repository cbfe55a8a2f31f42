"""`nandstack reproduce`: the quick gc-policies-vs-op run end to end through the CLI, its report folder, and
the HTML page in a real headless Chromium (no console errors, every figure present, a screenshot kept)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from cdp import Browser, find_chromium
from conftest import ARTIFACTS
from nandstack import NandstackError, ResultsDB
from nandstack.report import plots


def reproduce_quick(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`python -m nandstack reproduce gc-policies-vs-op --quick ARGS` in `cwd`, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "nandstack", "reproduce", "gc-policies-vs-op", "--quick", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """One quick reproduction shared by the tests of this module (about ten seconds)."""
    root = tmp_path_factory.mktemp("reproduce")
    out = root / "report"
    db = root / "results.duckdb"
    proc = reproduce_quick("--out", str(out), "--db", str(db), "-j", "2", cwd=root)
    assert proc.returncode == 0, proc.stderr
    return {"out": out, "db": db, "proc": proc}


def test_report_folder(report):
    out: Path = report["out"]
    names = {p.name for p in out.iterdir()}
    assert {"index.html", "report.json", "waf_vs_op.png", "waf_vs_op.svg", "waf_by_policy.csv"} <= names
    assert (out / "waf_vs_op.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in (out / "waf_vs_op.svg").read_bytes()[:2000]
    manifest = json.loads((out / "report.json").read_text())
    assert manifest["experiment"] == "gc-policies-vs-op" and manifest["quick"] is True
    assert manifest["verdict"] in ("agrees", "partly agrees", "differs")
    assert manifest["runs"] == len(manifest["run_list"]) == 20
    assert all(r["status"] == "ok" and r["run_id"] for r in manifest["run_list"])
    # Each run's CPU seconds, and their sum (the machine time the report cost, whatever the load).
    cpu = [r["wall_cpu_seconds"] for r in manifest["run_list"]]
    assert all(c is not None and c > 0 for c in cpu)
    assert manifest["wall_cpu_seconds"] == pytest.approx(sum(cpu), abs=0.2)
    table = pl.read_csv(out / "waf_by_policy.csv")
    assert table["over_provisioning"].to_list() == [0.07, 0.14, 0.28, 0.5]
    html = (out / "index.html").read_text()
    assert "The paper's claim" in html and "Our measured result" in html
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html
    assert "<script" not in html


def test_runs_are_recorded_with_the_experiment(report):
    db = ResultsDB(report["db"])
    rows = db.runs(experiment="gc-policies-vs-op", columns=["source", "tags", "params"])
    assert rows.height == 20 and set(rows["source"]) == {"reproduce"}
    assert all(tags.to_list() == ["quick"] for tags in rows["tags"])
    assert json.loads(rows["params"][0]).keys() == {"policy", "op", "seed"}


def test_cli_output(report):
    proc = report["proc"]
    assert "GC victim policies vs over-provisioning:" in proc.stdout
    assert "report:" in proc.stderr and "index.html" in proc.stderr
    assert "gc-policies-vs-op: 100%" in proc.stderr  # progress


def test_resume_reuses_recorded_runs(report, tmp_path):
    proc = reproduce_quick("--resume", "--out", str(tmp_path / "again"), "--db", str(report["db"]), "-q")
    assert proc.returncode == 0, proc.stderr
    assert "0 run, 20 already recorded" in proc.stderr
    again = json.loads((tmp_path / "again" / "report.json").read_text())
    first = json.loads((report["out"] / "report.json").read_text())
    assert again["measured"] == first["measured"]
    # Nothing ran now; each reused run shows what it cost when it was recorded.
    assert again["wall_cpu_seconds"] == 0.0
    recorded = [r["wall_cpu_seconds"] for r in again["run_list"]]
    assert recorded == [r["wall_cpu_seconds"] for r in first["run_list"]]


def test_report_in_headless_chromium(report):
    executable = find_chromium()
    if executable is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (.ci/run installs the Debian package)")
        pytest.skip("chromium not installed (apt-get install chromium)")
    index = report["out"] / "index.html"
    manifest = json.loads((report["out"] / "report.json").read_text())
    with Browser(executable) as browser:
        browser.open(index.as_uri())
        images = browser.evaluate(
            "[...document.querySelectorAll('figure img')].map(i => ({complete: i.complete, "
            "width: i.naturalWidth, height: i.naturalHeight, alt: i.alt, id: i.closest('figure').id}))"
        )
        sections = browser.evaluate("[...document.querySelectorAll('h2')].map(h => h.textContent)")
        side = browser.evaluate(
            "(() => { const d = [...document.querySelectorAll('#claim-vs-measured > div')];"
            " return d.map(x => x.getBoundingClientRect().top); })()"
        )
        shot = browser.screenshot(ARTIFACTS / "reproduce-gc-policies-vs-op.png")
        errors = browser.errors()
    assert errors == []
    assert [i["id"] for i in images] == [f"fig-{name}" for name in manifest["figures"]]
    assert all(i["complete"] and i["width"] > 500 and i["height"] > 300 for i in images), images
    assert {"Setup", "Figures", "Tables", "Configuration", "Runs"} <= set(sections)
    assert len(side) == 2 and abs(side[0] - side[1]) < 1  # claim and result side by side
    assert shot.stat().st_size > 10_000
    print(f"screenshot: {shot}")


def test_the_browser_check_catches_a_broken_page(tmp_path):
    executable = find_chromium()
    if executable is None:
        pytest.skip("chromium not installed")
    page = tmp_path / "broken.html"
    page.write_text('<html><body><img src="missing.png"><script>console.error("boom")</script></body></html>')
    with Browser(executable) as browser:
        browser.open(page.as_uri())
        width = browser.evaluate("document.images[0].naturalWidth")
        errors = browser.errors()
    assert width == 0
    assert any("boom" in e for e in errors)


def test_reproduce_list_and_errors(cli):
    listed = cli("reproduce", "--list")
    assert listed.returncode == 0
    for name in ("gc-policies-vs-op", "hot-cold-skew", "trace-replay"):
        assert name in listed.stdout
    assert "claim:" in listed.stdout
    missing = cli("reproduce", "no-such-experiment", "--no-record")
    assert missing.returncode == 2 and "no experiment `no-such-experiment`" in missing.stderr
    bare = cli("reproduce")
    assert bare.returncode == 2 and "give an experiment name" in bare.stderr


def test_missing_matplotlib_is_explained(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(NandstackError, match=r"pip install 'matplotlib>=3.6'"):
        plots.import_pyplot()


def test_kernel_swap_reads_the_captures_folder_it_is_given(cli, tmp_path):
    """`reproduce kernel-swap --captures DIR` compares DIR's captures (not the shared ones), and `--quick`
    on a folder without the quick programs runs its first ones, each at the four flush phases."""
    from conftest import write_tiny_kswap_capture

    folder = tmp_path / "captures"
    folder.mkdir()
    write_tiny_kswap_capture(folder)
    out = tmp_path / "report"
    proc = cli(
        "reproduce", "kernel-swap", "--captures", str(folder), "--quick", "--out", str(out), "--no-record"
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "report.json").read_text())
    assert list(report["headline"]["programs"]) == ["kswap_tiny"]
    assert report["runs"] == 4
    entry = report["headline"]["programs"]["kswap_tiny"]
    assert entry["pswpin"]["kernel_min"] == 9000 and entry["write_pages_mean"]["kernel_max"] == 8.0
    assert entry["phases_finished"] + len(entry["out_of_memory_phases_ms"]) == 4


def test_reproduce_timing_prints_where_the_time_went(cli, tmp_path):
    """`--timing` ends with one row per experiment: its runs, wall seconds, CPU seconds (this process
    and its finished workers) and the runs' own measured-phase CPU seconds."""
    from conftest import write_tiny_kswap_capture

    folder = tmp_path / "captures"
    folder.mkdir()
    write_tiny_kswap_capture(folder)
    proc = cli(
        "reproduce", "kernel-swap", "--captures", str(folder), "--quick", "--out", str(tmp_path / "r"),
        "--no-record", "--timing", "-j", "1",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    header, row = proc.stdout.strip().splitlines()[-2:]
    assert header.split() == ["experiment", "runs", "wall_s", "cpu_s", "runs_cpu_s"]
    name, runs, wall, cpu, _runs_cpu = row.split()
    assert (name, runs) == ("kernel-swap", "4")
    assert float(wall) > 0 and float(cpu) > 0, "the four runs took time, in this process or its worker"


def test_reproduce_all_and_a_name_are_exclusive(cli):
    proc = cli("reproduce", "gc-policies-vs-op", "--all", "--no-record")
    assert proc.returncode == 2 and "not both" in proc.stderr
