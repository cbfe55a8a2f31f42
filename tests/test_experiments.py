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
    methods = [experiment.method_text(quick) for quick in (True, False)]
    for text in (experiment.title, experiment.paper, experiment.claim, *methods):
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
    from nandstack.data import DataError

    monkeypatch.setenv(trace_replay.TRACES_ENV, str(tmp_path / "missing"))
    with pytest.raises(DataError, match=r"data set `block`.*not found.*How to get it"):
        trace_replay.tasks(True)
    analysis = trace_replay.EXPERIMENT.analyze([], [])
    assert analysis.verdict == "not comparable" and "No trace replayed" in analysis.measured


# --- kernel-zswap / kernel-zram -------------------------------------------------------------------


def _capture_json(kind: str, **kernel: float) -> dict:
    vm = {"pswpin": 10, "pswpout": 20, "swpout_zero": 0, "swpin_zero": 0}
    common = {
        "command": ["memtouch", "600", "2000", "uniform", "50", "3"],
        "memory_limit_mb": 1,
        "page_cluster": 0,
    }
    if kind == "zswap":
        vm.update(zswpout=3000, zswpin=2000, zswpwb=0)
        return {
            **common,
            "swap_mb": 16,
            "zswap": {"compressor": "lzo", "max_pool_percent": 20, "accept_threshold_percent": 90,
                      "shrinker_enabled": True, "total_ram_bytes": 256 << 20},
            "zswap_at_end": {"stored_pages": 350, "pool_total_size": 385_000,
                             "stored_incompressible_pages": 0},
            "zswap_counters_delta": {"pool_limit_hit": 0},
            "vmstat_delta_system_wide": {**vm, **kernel},
        }  # fmt: skip
    return {
        **common,
        "zram": {"comp_algorithm": "lz4", "disksize_mb": 16, "total_ram_bytes": 256 << 20},
        "mm_stat_at_end": {"orig_data_size": 350 * 4096, "compr_data_size": 300_000,
                           "mem_used_total": 350_000, "huge_pages": 0},
        "io_stat_delta": {"notify_free": 10},
        "vmstat_delta_system_wide": {**vm, **kernel},
    }  # fmt: skip


@pytest.mark.parametrize("kind", ["zswap", "zram"])
def test_kernel_capture_experiments_on_given_captures(monkeypatch, tmp_path, kind):
    import copy
    import json
    import statistics

    from nandstack.experiments import _captures

    for rep, pswpin in ((1, 10), (2, 14)):
        (tmp_path / f"k{kind}_small_r{rep}.json").write_text(json.dumps(_capture_json(kind, pswpin=pswpin)))
    monkeypatch.setenv(_captures.CAPTURES_ENV, str(tmp_path))
    experiment = experiments.get(f"kernel-{kind}")
    tasks = experiment.tasks(False)
    # One run per phase of the 2 s statistics flush, the default (first flush at 2 s) first.
    assert [t.params["program"] for t in tasks] == [f"k{kind}_small"] * 4
    assert [t.params["flush_phase_ms"] for t in tasks] == [0, 500, 1000, 1500]
    assert [t.config["host"]["reclaim"]["stats_flush_first_ms"] for t in tasks] == [2000, 500, 1000, 1500]
    assert {t.config["host"]["reclaim"]["stats_flush_ms"] for t in tasks} == {2000}
    cfg = tasks[0].config
    assert cfg["workload"]["processes"][0]["workload"]["pages"] == 600
    assert (cfg["host"].get("zswap") or cfg["host"]["swap"]["backend"])[
        "compressor" if kind == "zswap" else "kind"
    ]
    outcome = run_tasks(tasks, backend=SerialBackend(), record=False, resume=False)
    assert outcome.ok, outcome.errors
    analysis = experiment.analyze(tasks, outcome.results)
    program = analysis.data["programs"][f"k{kind}_small"]
    assert set(program) == {"model", "kernel_min", "kernel_max", "flush_phase_ms", "out_of_memory_phases_ms"}
    assert program["flush_phase_ms"] == 0 and program["out_of_memory_phases_ms"] == []
    assert program["kernel_min"]["pswpin"] == 10 and program["kernel_max"]["pswpin"] == 14
    assert set(program["model"]) == set(_captures.FIGURES[kind])
    # The model's side is, per figure, the median over the phases whose runs finished — not the first
    # phase's value: with swap-ins of 100, 300, 200, 900 at the four phases it compares 250.
    varied = []
    for r, pswpin in zip(outcome.results, (100, 300, 200, 900), strict=True):
        r = copy.deepcopy(r)
        r.summary["host"]["swap"]["pswpin"] = pswpin
        varied.append(r)
    medians = experiment.analyze(tasks, varied).data["programs"][f"k{kind}_small"]["model"]
    assert medians["pswpin"] == 250 == statistics.median((100, 300, 200, 900))
    assert medians["pswpout"] == program["model"]["pswpout"]
    table = analysis.tables[0].frame
    assert table.height == len(_captures.FIGURES[kind])
    assert {f.name for f in analysis.figures} == {"model_vs_kernel", "pool_bytes_per_stored_page"}
    assert analysis.verdict in ("agrees", "partly agrees", "differs")


def test_the_first_finishing_phase_is_compared_and_out_of_memory_is_an_outcome():
    from nandstack.experiments._phases import OUT_OF_MEMORY, first_finished, phase_params
    from nandstack.sweep.runner import TaskOutcome
    from nandstack.sweep.spec import Task

    phases = (2000, 500, 1000, 1500)
    tasks = [Task(config={}, params=phase_params("p", ph), config_hash=str(ph)) for ph in phases]
    tasks.append(Task(config={}, params={"program": "q", "seed": 1}, config_hash="q"))
    # The default phase ran out of memory, 500 ms finished, 1000 ms failed otherwise; `q` may not fail.
    results = [None, "r500", None, "r1500", None]
    errors = {
        0: f"config error at `host`: {OUT_OF_MEMORY} 1.2 s: cgroup limit reclaim made no progress",
        2: "config error at `host.swap`: bad",
        4: f"{OUT_OF_MEMORY} 3 s",
    }
    outcome = TaskOutcome(tasks=tasks, results=results, errors=errors)  # type: ignore[arg-type]
    assert outcome.expected(0) and not outcome.expected(2) and not outcome.expected(4)
    assert set(outcome.failures()) == {2, 4} and not outcome.ok
    line = outcome.summary_line()
    assert "2 failed" in line and "1 ended as their experiment allows" in line
    chosen = first_finished(tasks[:4], results[:4])  # type: ignore[arg-type]
    assert chosen["p"][0] == "r500" and chosen["p"][1] == 500
    assert chosen["p"][2] == ["r500", "r1500"] and chosen["p"][3] == [0, 1000]
    assert first_finished(tasks[:1], [None]) == {}
    # The note says the median over the phases that finished is compared.
    from nandstack.experiments._phases import phase_note

    median = phase_note({"p": [0]}, [])
    assert "median over the phases" in median and "p 0 ms" in median


def test_kernel_capture_distance_by_hand(monkeypatch, tmp_path):
    from nandstack.experiments import _captures

    rng = (100.0, 200.0, 150.0)
    assert _captures.distance("pswpin", 150, rng) == 0
    assert _captures.distance("pswpin", 300, rng) == pytest.approx(0.1)  # 100 out of the 1000-page floor
    assert _captures.distance("zswpout", 44_500, (50_000, 60_000, 55_000)) == pytest.approx(0.1)
    assert _captures.distance("pool_total_size", 0, (4096, 4096, 4096)) == pytest.approx(0.001)
    assert _captures.tolerance("zswap", "zswpwb") == 0.2 and _captures.tolerance("zram", "pswpin") == 0.1
    monkeypatch.setenv(_captures.CAPTURES_ENV, str(tmp_path / "missing"))
    with pytest.raises(NandstackError, match=r"data set `kernel-zram`.*not found"):
        experiments.get("kernel-zram").tasks(True)
    analysis = experiments.get("kernel-zram").analyze([], [])
    assert analysis.verdict == "not comparable" and "--captures DIR" in analysis.measured


def test_kernel_zswap_quick_on_the_shared_captures(monkeypatch):
    from nandstack import data
    from nandstack.experiments import _captures

    monkeypatch.delenv(_captures.CAPTURES_ENV, raising=False)
    if data.locate("kernel-zswap").path is None:
        pytest.skip("data set kernel-zswap not found (see `nandstack data`)")
    experiment = experiments.get("kernel-zswap")
    tasks = experiment.tasks(True)
    outcome = run_tasks(tasks, backend=SerialBackend(), record=False, resume=False)
    assert outcome.ok, outcome.errors
    analysis = experiment.analyze(tasks, outcome.results)
    assert analysis.verdict == "agrees", analysis.measured


def test_tail_latency_analysis(monkeypatch):
    from nandstack.experiments import tail_latency

    plan = {"blocks": 48, "requests": 8_000, "iops": 8_000, "tenant_requests": 1_500, "seeds": (1,)}
    analysis = run_small(tail_latency, monkeypatch, plan)
    headline = analysis.headline
    for name in ("baseline", "suspension", "preemptible_gc", "all"):
        assert headline[name]["read_p99_us"] > 0 and headline[name]["write_p99_us"] > 0
    # Suspension serves reads during programs and erases: the read tail is lower than the baseline's.
    assert headline["suspension"]["read_p99_us"] < headline["baseline"]["read_p99_us"]
    assert headline["published"]["suspension_read_mean_reduction_vs_fifo"] == 0.754
    rows = {r["config"]: r for r in analysis.tables[0].frame.to_dicts()}
    assert set(rows) == set(tail_latency.CONFIGS)
    # The queued engine with every mechanism off and the direct engine see the same GC: close figures.
    assert rows["baseline"]["read_p50_us"] == rows["direct"]["read_p50_us"]
    tenants = analysis.tables[1].frame
    assert sorted(set(tenants["flow"].to_list())) == ["reader", "writer"]
    assert analysis.verdict in ("agrees", "partly agrees", "differs")


def test_kernel_swap_compares_the_median_over_the_flush_phases(monkeypatch, tmp_path):
    """kernel-swap runs a capture's program at four flush phases and compares, per figure, the median over
    those that finished (a capture started at some point of the flusher's period), not the first."""
    import copy

    from conftest import write_tiny_kswap_capture
    from nandstack.experiments import kernel_swap

    write_tiny_kswap_capture(tmp_path)
    monkeypatch.setenv(kernel_swap.CAPTURES_ENV, str(tmp_path))
    experiment = experiments.get("kernel-swap")
    tasks = experiment.tasks(False)
    assert len(tasks) == 4
    outcome = run_tasks(tasks, backend=SerialBackend(), record=False, resume=False)
    finished = [r for r in outcome.results if r is not None]
    assert len(finished) == 4, outcome.errors
    varied = []
    for r, pswpin in zip(outcome.results, (100, 300, 200, 900), strict=True):
        r = copy.deepcopy(r)
        r.summary["host"]["swap"]["pswpin"] = pswpin
        varied.append(r)
    analysis = experiment.analyze(tasks, varied)
    entry = analysis.headline["programs"]["kswap_tiny"]
    assert entry["pswpin"]["model"] == 250  # median of 100, 300, 200, 900; the first phase gave 100
    assert entry["pswpin"]["model_phase_min"] == 100 and entry["pswpin"]["model_phase_max"] == 900
    assert "median over the phases" in analysis.measured
