"""The ezswap experiment (issue #17): the task list, and the quick run's analysis — every configuration
in the headline with the keys the issue names, raw and normalised, the paper's figures beside them, the
correlation on Silesia. Needs the Silesia zips (../shared/traces/compress); skipped without them."""

from __future__ import annotations

import pytest

from nandstack.experiments import ezswap
from nandstack.sweep import SerialBackend, run_tasks


def test_tasks_cover_every_configuration_twice_and_the_app_counts():
    tasks = ezswap.tasks(True)
    at14 = [t.params for t in tasks if t.params["apps"] == 14]
    assert sorted((p["config"], p["reps"]) for p in at14) == sorted(
        (n, r) for n in ezswap.NAMES for r in (ezswap.PLAN[True]["reps"], 1)
    )
    assert {t.params["apps"] for t in tasks} == set(ezswap.PLAN[True]["counts"])
    swap = next(t for t in tasks if t.params["config"] == "swap")
    assert swap.config["host"]["zswap"]["enabled"] is False
    ez = next(t for t in tasks if t.params["config"] == "ezswap")
    assert ez.config["host"]["zswap"]["ezswap"] == {
        **ez.config["host"]["zswap"]["ezswap"],
        "admission": "entropy",
        "replacement": "lottery",
        "apa": True,
    }
    assert ez.config["host"]["zswap"]["zpool"] == "z3fold"


@pytest.fixture(scope="module")
def analysis():
    from nandstack import data

    if data.locate("compress").path is None:
        pytest.skip("the Silesia corpus (data set `compress`) is not found: see `nandstack data`")
    tasks = [t for t in ezswap.tasks(True) if t.params["apps"] == 14]
    outcome = run_tasks(tasks, backend=SerialBackend(), record=False, resume=False)
    return ezswap.analyze(tasks, outcome.results)


def test_the_headline_has_the_keys_the_issue_names(analysis):
    h = analysis.headline
    for name in ezswap.NAMES:
        e = h[name]
        for k in ("launch_time_s", "pages_read", "pages_written", "compressions", "zpages_per_mb"):
            assert k in e
        for k in ("launch_time_norm", "pages_read_norm", "pages_written_norm"):
            assert e[k] is not None and e[k] > 0
        assert set(e["paper"]) == {
            "launch_time_norm",
            "pages_read_norm",
            "pages_written_norm",
            "zpages_per_mb",
        }
    assert h["swap"]["launch_time_norm"] == pytest.approx(1.0)
    assert h["swap"]["compressions"] == 0
    assert h["zswap"]["zpages_per_mb"] > 0 and h["ezswap"]["zpages_per_mb"] > 0
    # APA stores file pages: many more compressions than zswap alone.
    assert h["apa"]["compressions"] > h["zswap"]["compressions"]
    assert 0.5 < h["correlation_lzo_leading512"] < 1.0
    assert h["sa"]["paper"]["compressions_drop_pct"] == 76.0


def test_figures_and_tables(analysis):
    names = {f.name for f in analysis.figures}
    assert {"fig8_normalised", "table3_zpages_per_mb", "fig10_sa_savings", "fig9_app_count"} <= names
    tables = {t.name: t.frame for t in analysis.tables}
    assert tables["headline"].height == len(ezswap.NAMES)
    assert tables["entropy_correlation"].height == 10
    assert analysis.verdict in ("agrees", "partly agrees", "differs")
