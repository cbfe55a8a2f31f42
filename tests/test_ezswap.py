"""The ezswap experiment (issue #17): the task list, and the quick run's analysis — every configuration
in the headline with the keys the issue names, raw and normalised, the paper's figures beside them, the
correlation on Silesia. Needs the Silesia zips (../shared/traces/compress); skipped without them."""

from __future__ import annotations

import pytest

from nandstack.experiments import ezswap
from nandstack.sweep import SerialBackend, run_tasks


def test_tasks_cover_every_configuration_twice_on_both_platforms_and_the_app_counts():
    tasks = ezswap.tasks(True)
    at14 = [t.params for t in tasks if t.params["apps"] == 14]
    assert sorted((p["platform"], p["config"], p["reps"]) for p in at14) == sorted(
        (on, n, r) for on in ("today", "paper") for n in ezswap.NAMES for r in (ezswap.PLAN[True]["reps"], 1)
    )
    assert {t.params["apps"] for t in tasks} == set(ezswap.PLAN[True]["counts"])
    swap = next(t for t in tasks if t.params["config"] == "swap")
    assert (
        next(t for t in tasks if t.params["config"] == "zram").config["host"]["swap"]["backend"]["kind"]
        == "zram"
    )
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
            # zram writes nothing to flash (the launch cycle writes no files).
            assert e[k] is not None and (e[k] > 0 or (name, k) == ("zram", "pages_written_norm"))
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
    assert tables["headline"].height == 2 * len(ezswap.NAMES)  # today's and the paper platform's
    assert set(tables["headline"]["config"]) == set(ezswap.NAMES)  # zram a row of every table
    assert tables["entropy_correlation"].height == 10
    assert analysis.verdict in ("agrees", "partly agrees", "differs")


def test_the_quick_run_measures_every_claim(analysis):
    """End to end: all 12 claims measured on both platforms, the verdicts by the shared rule, E6 and
    Fig. 5's correlations on the launch cycle's own pages."""
    from nandstack.experiments import _claims, _ezswap_claims

    kinds = {c.id: c.kind for c in _ezswap_claims.CLAIMS}
    assert [c["id"] for c in analysis.claims] == [c.id for c in _ezswap_claims.CLAIMS]
    for c in analysis.claims:
        assert c["today"] is not None and c["paper_platform"] is not None, c
        assert c["verdict"] == _claims.verdict(c["paper_platform"], c["paper"], kinds[c["id"]])
    launch = analysis.headline["launch_correlation"]
    assert launch["pages"] > 1000
    assert 0.5 < launch["pearson_entropy512_ratio"] < 1.0
    assert 0.5 < launch["pearson_entropy512_whole"] <= 1.0
    assert {t.name for t in analysis.tables} >= {"claims_ablations", "launch_correlation"}
