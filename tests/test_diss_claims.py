"""DISS's claims (issue #35): the paper platform's runs and settings, each claim's number computed as
the paper computes it, verdicts by the shared rule, one ablation row per platform difference, and
`--seed` shifting every run (tests/test_claims.py covers the rule itself)."""

from __future__ import annotations

import pytest

from nandstack.experiments import _claims, _diss_claims, diss
from nandstack.experiments.base import DEFAULT_SEED, shift_seeds
from nandstack.sweep import SerialBackend, run_tasks
from test_diss import TINY

IDS = ["D1a", "D1b", "D1c", "D2a", "D2b", "D2c", "D3", "D4"]
PAPER = [-25.7, -55.6, -58.3, -28.1, -59.5, -65.0, -21.4, 94.5]


def cells(itrim_waf: float, diss_waf: float, scenarios=("video", "game")) -> dict:
    """Hand-made cells: every scheme with WAF `diss_waf` (iTRIM `itrim_waf`), latencies halved by every
    scheme, 90 normal swap-ins and 10 swap-ins-and-in under iTRIM."""
    out = {}
    for sc in scenarios:
        for s in diss.SCHEMES:
            base = s == "itrim"
            out[(s, sc)] = {
                "waf": itrim_waf if base else diss_waf,
                "read_latency_mean_us": 100.0 if base else 50.0,
                "write_latency_mean_us": 10.0 if base else 5.0,
                "normal_swap_ins": 90,
                "swap_ins_and_in": 10,
            }
    return out


def test_claim_numbers_are_computed_as_the_paper_averages_them():
    c = cells(2.0, 1.0)
    assert _diss_claims.vs_itrim(c, "diss", "waf") == pytest.approx(-50.0)
    assert _diss_claims.vs_itrim(c, "strim", "read_latency_mean_us") == pytest.approx(-50.0)
    assert _diss_claims.vs_itrim(c, "itrim", "normal") == pytest.approx(90.0)
    # Per scenario, then averaged: -50% and 0% average to -25%.
    c[("diss", "game")]["waf"] = 2.0
    assert _diss_claims.vs_itrim(c, "diss", "waf") == pytest.approx(-25.0)
    assert _diss_claims.vs_itrim({}, "diss", "waf") is None


def test_entries_have_every_id_the_paper_numbers_and_the_rule_s_verdicts():
    today = cells(2.0, 2.06)
    platforms = {"paper": cells(2.0, 0.9)}
    platforms |= {f"+{d.key}": cells(2.0, 1.5, ("video",)) for d in _diss_claims.DIFFERENCES}
    entries, rows = _diss_claims.claim_entries(today, platforms, "video")
    assert [e["id"] for e in entries] == IDS
    assert [e["paper"] for e in entries] == PAPER
    kinds = {c.id: c.kind for c, _, _ in _diss_claims.CLAIMS}
    for e in entries:
        assert e["verdict"] == _claims.verdict(e["paper_platform"], e["paper"], kinds[e["id"]])
        assert len(e["ablations"]) == len(_diss_claims.DIFFERENCES)
        assert all(a["source"] and a["value"] is not None for a in e["ablations"])
        assert e["why"].startswith("paper platform")
    by = {e["id"]: e for e in entries}
    assert by["D1c"]["today"] == pytest.approx(3.0)
    assert by["D1c"]["paper_platform"] == pytest.approx(-55.0)
    assert by["D1c"]["verdict"] == "reproduced"  # -55.0 against -58.3
    assert by["D2c"]["verdict"] == "reproduced"  # -50.0 against -65.0: within 1.5x
    assert by["D3"]["verdict"] == "direction only"  # -50.0 against -21.4: 2.3x
    assert by["D4"]["verdict"] == "reproduced"  # 90% against 94.5%
    # The ablation table: today's number (all scenarios, then the ablation scenario), one row per
    # difference, the paper platform.
    d1c = [r for r in rows if r["claim"] == "D1c"]
    assert len(d1c) == len(_diss_claims.DIFFERENCES) + 3
    assert d1c[0]["change"].startswith("today") and d1c[-1]["change"].startswith("paper platform")
    assert {r["value"] for r in d1c[2:-1]} == {-25.0}


def test_without_platform_runs_the_verdict_is_not_measured():
    entries, rows = _diss_claims.claim_entries(cells(2.0, 2.0), {}, "video")
    assert {e["verdict"] for e in entries} == {"not measured"}
    assert all(e["ablations"] == [] for e in entries)
    assert len(rows) == 2 * len(entries)


def test_the_full_plan_runs_the_paper_platform_and_each_difference():
    tasks = [t for t in diss.tasks(False) if "platform" in t.params]
    n = len(diss.SCHEMES)
    assert len(tasks) == n * len(diss.SCENARIOS) + n * len(_diss_claims.DIFFERENCES)
    by = {}
    for t in tasks:
        by.setdefault(t.params["platform"], []).append(t)
    paper = by["paper"][0].config
    assert paper["host"]["fault"]["swapin_write"] == "reuse_swap_page"
    assert paper["host"]["swap"]["allocator"] == "cluster_v5"
    # Linux 4.4: one scan base for every CPU (si->cluster_next), no trunk re-draw (5.8+).
    assert paper["host"]["swap"]["cluster_v5"] == {"global_scan_base": True}
    assert paper["precondition"]["warmup_capacity_multiples"] == 0.0
    assert "aged_data" not in paper["precondition"]  # SSDSim's stock aging is an ablation only
    assert paper["device"]["ftl"]["mapping_cache"]["entries"] == 0
    mobile = paper["workload"]["processes"][0]["workload"]
    assert mobile["minute_ms"] == 60_000.0
    # Real time keeps every reference per Table-2 minute: the rates fall by the same factor of 60.
    assert mobile["foreground_refs_per_ms"] == pytest.approx(2000 / 60)
    assert mobile["background_refs_per_ms"] == pytest.approx(15 / 60)
    assert by["+ssdsim_aging"][0].config["precondition"]["aged_data"] == "invalid"
    one = by["+reuse_swap_page"][0].config
    assert one["host"]["swap"]["allocator"] == "next_fit"  # only the one difference
    assert {t.params["scenario"] for t in by["+full_map"]} == {"video"}
    # Every claim keeps every difference on every scheme (the budget cuts elsewhere, docs/diss.md).
    assert {t.params["scheme"] for t in by["+full_map"]} == set(diss.SCHEMES)


def test_the_full_plan_replays_one_capture_per_program_shape():
    traces = [t for t in diss.tasks(False) if "trace" in t.params]
    assert len(traces) == len(diss.FULL["traces"]) * len(diss.TRACE_SCHEMES)
    assert {t.params["trace"] for t in traces} == set(diss.FULL["traces"])


def test_quick_runs_the_paper_platform_on_one_scenario_without_ablations():
    tasks = [t for t in diss.tasks(True) if "platform" in t.params]
    assert len(tasks) == len(diss.SCHEMES)
    assert {t.params["platform"] for t in tasks} == {"paper"}


def test_seed_shift_moves_every_run_including_the_platform_runs():
    for t in diss.tasks(True):
        s = shift_seeds(t, 3)
        assert s.config["seed"] == t.config.get("seed", DEFAULT_SEED) + 3
        assert s.params == t.params and s.config_hash != t.config_hash


def test_tiny_run_measures_every_claim_with_every_ablation(monkeypatch):
    plan = {**TINY, "ablations": (), "platform_scenarios": ("video",), "platform_ablations": True}
    monkeypatch.setattr(diss, "QUICK", plan)
    tasks = diss.tasks(True)
    outcome = run_tasks(tasks, backend=SerialBackend(), record=False, resume=False)
    assert outcome.ok, outcome.errors
    analysis = diss.EXPERIMENT.analyze(tasks, outcome.results)
    assert [c["id"] for c in analysis.claims] == IDS
    kinds = {c.id: c.kind for c, _, _ in _diss_claims.CLAIMS}
    for c in analysis.claims:
        assert c["today"] is not None and c["paper_platform"] is not None, c
        assert c["verdict"] == _claims.verdict(c["paper_platform"], c["paper"], kinds[c["id"]])
        assert [a["value"] is not None for a in c["ablations"]] == [True] * len(_diss_claims.DIFFERENCES)
    # The paper platform's own figures (WAF, pages GC moved) back each WAF and latency claim.
    assert all("GC moved" in c["why"] for c in analysis.claims[:7])
    table = {t.name: t for t in analysis.tables}["claims_ablations"].frame
    assert table.height == len(IDS) * (len(_diss_claims.DIFFERENCES) + 3)


def test_why_quotes_this_report_s_own_mechanism_figures():
    """The `why` of a claim states figures of the runs in the report (hand-made cells here), never a
    text measured elsewhere: GC's swap share, CDH's rewrites, iTRIM's idle TRIMs, write request sizes."""
    today = cells(2.0, 1.5)
    paper = cells(1.0, 1.0)
    for c in (today, paper):
        for (s, _), v in c.items():
            v.update(
                gc_migrated_pages=200.0,
                gc_migrated_swap_pages=50.0 if s != "itrim" else 0.0,
                cdh_rewrites=0.0 if s == "itrim" else 30.0,
                host_write_pages=300.0,
                idle_trim_commands=7.0,
                writes=40.0 if s == "itrim" else 80.0,
                avg_write_kib=32.0 if s == "itrim" else 12.5,
            )
    d1b = _diss_claims.mechanisms("D1b", "cl_sdi", today, paper)
    assert "on today's platform 25.0% of the pages GC moved under cl_sdi were swap data" in d1b
    assert "CDH rewrote 30 pages under cl_sdi on the paper platform (10.0% of host writes)" in d1b
    assert "iTRIM issued 7 idle-time TRIMs on the paper platform" in d1b
    # STRIM registers no swap range: no swap share is quoted for it.
    assert "were swap data" not in _diss_claims.mechanisms("D1a", "strim", today, paper)
    d3 = _diss_claims.mechanisms("D3", "diss", today, paper)
    assert "iTRIM issued 40 write requests of 32.0 KiB on average, diss 80 of 12.5 KiB" in d3
    assert _diss_claims.mechanisms("D4", "itrim", today, paper) == ""
