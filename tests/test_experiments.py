"""The experiment registry and the three engine experiments (run small, in process), plus the models."""

from __future__ import annotations

import math

import pytest

from nandstack import NandstackError, experiments
from nandstack.experiments import fifo_waf, gc_policies_vs_op, hot_cold_skew, trace_replay
from nandstack.experiments.base import random_waf
from nandstack.sweep import SerialBackend, Task, run_tasks


def test_registry_finds_the_engine_experiments():
    names = experiments.names()
    assert {"gc-policies-vs-op", "hot-cold-skew", "trace-replay"} <= set(names)
    assert names == sorted(names) and len(names) == len(set(names))
    assert experiments.get("gc_policies_vs_op").name == "gc-policies-vs-op"
    with pytest.raises(NandstackError, match="no experiment `nope`"):
        experiments.get("nope")


@pytest.mark.parametrize("experiment", experiments.all_experiments(), ids=lambda e: e.name)
def test_every_experiment_declares_its_parts(experiment):
    for text in (experiment.title, experiment.paper, experiment.claim, experiment.method):
        assert isinstance(text, str) and len(text) > 10
    for quick in (True, False):
        setup = experiment.setup(quick)
        assert setup and all(isinstance(k, str) and isinstance(v, str) for k, v in setup.items())
    tasks = experiment.tasks(True)  # every config validated by the engine while building
    assert all(isinstance(t, Task) and t.label and len(t.config_hash) == 16 for t in tasks)


def test_quick_is_smaller_than_full():
    for module in (gc_policies_vs_op, hot_cold_skew):
        assert len(module.tasks(True)) < len(module.tasks(False))


def test_fifo_closed_form():
    # X = e^(-a(1-X)) has the root below 1 and WAF = 1/(1-X).
    for alpha in (1.05, 1.1, 1.28, 2.0):
        waf = fifo_waf(alpha)
        x = 1 - 1 / waf
        assert x == pytest.approx(math.exp(-alpha * (1 - x)), abs=1e-12)
        assert 0 <= x < 1
    assert fifo_waf(1.28) == pytest.approx(2.4814, abs=1e-3)
    assert fifo_waf(1.0) == math.inf
    assert fifo_waf(1.1) > fifo_waf(1.2) > fifo_waf(2.0) > 1
    # Random victims are worse than FIFO at every over-provisioning.
    for alpha in (1.05, 1.28, 2.0):
        assert random_waf(alpha) == pytest.approx(alpha / (alpha - 1))
        assert random_waf(alpha) > fifo_waf(alpha)


def run_small(module, monkeypatch, quick_plan):
    monkeypatch.setattr(module, "QUICK", quick_plan)
    tasks = module.tasks(True)
    outcome = run_tasks(tasks, backend=SerialBackend(), record=False, resume=False)
    assert outcome.ok, outcome.errors
    return module.EXPERIMENT.analyze(tasks, outcome.results)


def test_gc_policies_analysis(monkeypatch):
    analysis = run_small(gc_policies_vs_op, monkeypatch, {"blocks": 256, "ops": (0.1, 0.3), "seeds": (1, 2)})
    assert analysis.verdict in ("agrees", "partly agrees", "differs")
    table = analysis.tables[0].frame
    assert table["over_provisioning"].to_list() == [0.1, 0.3]
    assert set(gc_policies_vs_op.POLICIES) <= set(table.columns)
    for row in table.to_dicts():
        assert row["fifo"] == pytest.approx(row["fifo_model"], rel=0.1)
        assert row["greedy"] <= row["fifo"] * 1.01
    runs = analysis.tables[1].frame
    assert set(runs["runs"].to_list()) == {2} and (runs["waf_std"] >= 0).all()
    (figure,) = analysis.figures
    assert [s.label for s in figure.series][:2] == ["FIFO closed form", "random closed form"]
    assert len(figure.series) == 2 + len(gc_policies_vs_op.POLICIES)
    assert "closed form" in analysis.measured


def test_hot_cold_analysis(monkeypatch):
    analysis = run_small(hot_cold_skew, monkeypatch, {"blocks": 256, "seeds": (1,)})
    wide = analysis.tables[0].frame
    assert wide["workload"].to_list() == [w.name for w in hot_cold_skew.WORKLOADS]
    assert {"single", "sup_gc", "mbf", "sup_gc_vs_single", "mbf_vs_single"} <= set(wide.columns)
    assert analysis.figures[0].kind == "bar" and len(analysis.figures[0].series) == 3
    assert analysis.verdict in ("agrees", "partly agrees", "differs")
    assert "SUP-GC" in analysis.measured


def write_msr_trace(path, requests=400):
    lines = []
    for i in range(requests):
        op = "Write" if i % 3 else "Read"
        lines.append(f"{128166372003061629 + i * 10_000},hm,0,{op},{(i * 7919 % 5000) * 4096},4096,100")
    path.write_text("\n".join(lines) + "\n")


def test_trace_replay_on_given_traces(monkeypatch, tmp_path):
    write_msr_trace(tmp_path / "msr_a.csv")
    write_msr_trace(tmp_path / "msr_b.csv", 200)
    (tmp_path / "unknown_format.bin").write_bytes(b"\0")
    monkeypatch.setenv(trace_replay.TRACES_ENV, str(tmp_path))
    assert [p.name for p, _ in trace_replay.traces(True)] == ["msr_a.csv", "msr_b.csv"]
    tasks = trace_replay.tasks(False)
    assert [(t.params["trace"], t.params["mode"]) for t in tasks] == [
        ("msr_a.csv", "open"),
        ("msr_a.csv", "closed"),
        ("msr_b.csv", "open"),
        ("msr_b.csv", "closed"),
    ]
    outcome = run_tasks(tasks, backend=SerialBackend(), record=False, resume=False)
    assert outcome.ok, outcome.errors
    analysis = trace_replay.EXPERIMENT.analyze(tasks, outcome.results)
    table = analysis.tables[0].frame
    assert table.height == 4 and table["requests"].to_list() == [400, 400, 200, 200]
    assert (table["waf"] >= 1).all()
    assert {f.name for f in analysis.figures} == {"iops_closed_loop", "waf_per_trace"}
    assert analysis.verdict == "agrees"


def test_trace_replay_without_traces(monkeypatch, tmp_path):
    monkeypatch.setenv(trace_replay.TRACES_ENV, str(tmp_path / "missing"))
    assert trace_replay.tasks(True) == []
    analysis = trace_replay.EXPERIMENT.analyze([], [])
    assert analysis.verdict == "not comparable" and "No trace replayed" in analysis.measured
