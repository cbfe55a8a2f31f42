"""The hybrid SLC/QLC model beyond its API: config normalisation and hashing, runs through the sweep
runner and the results database, `nandstack run --preset hybrid-qlc-slc`, trace statistics, and the
rl-slc-cache experiment (run small, in process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import nandstack
from nandstack import ResultsDB
from nandstack._config_obj import normalize_config
from nandstack.experiments import rl_slc_cache
from nandstack.experiments.base import make_hybrid_task
from nandstack.sweep import SerialBackend, run_tasks
from nandstack.workloads import trace_stats

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "traces" / "block"
#: A small run: the quarter-capacity device and a PC stand-in at 2% of Table 4's volume.
SMALL = {
    "device.hybrid.page_bytes": 4096,
    "workload.standin.scale": 0.02,
    "run.interval_written_bytes": 8 << 20,
}


def write_msr_trace(path: Path, requests: int = 1500) -> None:
    """An MSR trace of 16 KiB writes over 256 slots, and a read every tenth request."""
    lines = []
    for i in range(requests):
        kind = "Read" if i % 10 == 9 else "Write"
        lines.append(f"{128166372000000000 + i * 1000},hm,0,{kind},{(i * 7919 % 256) * 16384},16384,100")
    path.write_text("\n".join(lines) + "\n")


def test_hybrid_configs_normalise_and_hash_stably():
    a = make_hybrid_task({"device.manager.kind": "dwa"}, {}).config
    assert a["device"]["kind"] == "hybrid" and a["device"]["manager"]["kind"] == "dwa"
    # Written with every default, the same config normalises to the same text and hash.
    full = normalize_config(a)
    assert full["device"]["hybrid"]["preset"] == "paper" and "ftl" not in full["device"]
    assert nandstack.config_hash(a) == nandstack.config_hash(full)
    other = make_hybrid_task({"device.manager.kind": "ust"}, {}).config
    assert nandstack.config_hash(a) != nandstack.config_hash(other)
    assert nandstack.config_hash(a, seed=3) != nandstack.config_hash(a)
    with pytest.raises(nandstack.ConfigError, match=r"device\.manager.*bogus"):
        normalize_config({"device": {"kind": "hybrid", "manager": {"bogus": 1}}})
    # The old hybrid schema's keys are errors that say where they went.
    with pytest.raises(nandstack.ConfigError, match=r"device\.manager"):
        normalize_config({"manager": {"kind": "rl"}})
    with pytest.raises(nandstack.ConfigError, match=r"device\.kind"):
        normalize_config({"model": "hybrid"})
    # Block sections on a hybrid device are errors naming the key.
    with pytest.raises(nandstack.ConfigError, match=r"device\.ftl"):
        normalize_config({"device": {"kind": "hybrid", "ftl": {"over_provisioning": 0.1}}})


def test_hybrid_tasks_run_record_and_resume(db_path):
    tasks = [
        make_hybrid_task({**SMALL, "device.manager.kind": kind}, {"manager": kind, "seed": 1})
        for kind in ("qlc_only", "rl")
    ]
    db = ResultsDB(db_path)
    first = run_tasks(tasks, backend=SerialBackend(), db=db, resume=False)
    assert first.ok and first.ran == 2, first.errors
    rl = first.results[1]
    assert rl.summary["device"]["kind"] == "hybrid" and rl.summary["device"]["manager"] == "rl"
    assert rl.config_hash == tasks[1].config_hash
    # The one time-series format, with the hybrid's gauges (a row per 8 MiB written, and the last).
    series = rl.timeseries
    written = rl.summary["host_write_bytes"]
    assert series.height >= written // (8 << 20) > 10
    for column in ("host_write_bytes", "waf_cumulative", "slc_blocks", "theta_bytes", "utilization"):
        assert column in series.columns
    assert series["host_write_bytes"].is_sorted()
    # Recorded with its metrics; a second pass resumes instead of running.
    frame = db.runs(columns=["config_hash"])
    assert sorted(frame["config_hash"].to_list()) == sorted(t.config_hash for t in tasks)
    again = run_tasks(tasks, backend=SerialBackend(), db=db, resume=True)
    assert again.ran == 0 and again.skipped == 2
    assert again.results[1].summary["waf"] == rl.summary["waf"]


def test_runs_after_one_pretraining_chain_share_a_payload_and_keep_their_own_results(db_path):
    """Tasks after the same `[[pretrain]]` chain (another measured workload) run as one payload, in
    order, in one worker, so the engine learns the chain once (its per-process memo); each task still
    gets its own result, the one it gets run alone in a fresh process."""
    from nandstack.sweep import LocalBackend, execute_task
    from nandstack.sweep.runner import _units

    def task(name: str, seed: int, chain: bool = True):
        pre = {"pretrain": [{"kind": "standin", "standin": {"name": "pc", "scale": 0.02}}]} if chain else {}
        overrides = {**SMALL, "device.manager.kind": "rl", "workload.standin.name": name, **pre}
        return make_hybrid_task(overrides, {"workload": name, "seed": seed, "chain": chain})

    tasks = [task("tpcc", 1), task("tpcc", 1, chain=False), task("oltp", 2), task("oltp", 1)]
    assert _units([t.config for t in tasks]) == [[0, 3], [1], [2]]
    grouped = run_tasks(tasks, backend=LocalBackend(2), db=ResultsDB(db_path), record=False, resume=False)
    assert grouped.ok and grouped.ran == 4 and sorted(grouped.cpu_seconds) == [0, 1, 2, 3]
    for t, r in zip(tasks, grouped.results):
        assert r.config_hash == t.config_hash
    # Alone, in a fresh process each (no memo): the same figures.
    alone = [
        run_tasks([t], backend=LocalBackend(1), db=ResultsDB(db_path), record=False, resume=False).results[0]
        for t in (tasks[0], tasks[3])
    ]
    for a, g in zip(alone, (grouped.results[0], grouped.results[3])):
        assert a.summary["workload"] == g.summary["workload"]
        assert a.summary["pretraining"] == g.summary["pretraining"] and len(a.summary["pretraining"]) == 1
        assert a.summary["waf"] == g.summary["waf"]
        assert a.summary["device"] == g.summary["device"]
    # A group's payload gives a group's outcome, member by member.
    both = execute_task({"group": [tasks[0].payload(), tasks[3].payload()]})
    assert [o["summary"]["waf"] for o in both["group"]] == [r.summary["waf"] for r in alone]


def test_cli_runs_the_hybrid_preset(cli, tmp_path):
    out = tmp_path / "h"
    args = ["--preset", "hybrid-qlc-slc", "--set", "workload.standin.scale=0.02"]
    proc = cli("run", *args, "--set", "device.manager.kind=dwa", "--out", str(out), "--no-record")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["device"]["kind"] == "hybrid" and summary["device"]["manager"] == "dwa"
    assert summary["waf"] > 0.9 and summary["device"]["write_throughput_mib_per_s"] > 0
    rows = (out / "timeseries.csv").read_text().splitlines()
    assert "slc_blocks" in rows[0].split(",") and len(rows) > 2
    # The written config reproduces the run.
    again = cli("run", str(out / "config.toml"), "--out", str(tmp_path / "h2"), "-q", "--no-record")
    assert again.returncode == 0, again.stderr
    summary2 = json.loads((tmp_path / "h2" / "summary.json").read_text())
    assert summary2["device"]["write_cost_ns"] == summary["device"]["write_cost_ns"]
    # Bad keys are errors naming the key; the one reference documents the hybrid sections.
    bad = cli("run", *args, "--set", "device.manager.kindx=rl", "--no-record")
    assert bad.returncode == 2 and "device.manager" in bad.stderr and "kindx" in bad.stderr
    ref = cli("config", "--reference")
    assert ref.returncode == 0 and "[device.manager.rl]" in ref.stdout and "[device.hybrid]" in ref.stdout


def test_cli_replays_a_trace_on_the_hybrid_device(cli, tmp_path):
    trace = tmp_path / "t.csv"
    write_msr_trace(trace)
    out = tmp_path / "o"
    proc = cli(
        "run", "--preset", "hybrid-qlc-slc", "--trace", str(trace), "--format", "msr", "--lba", "wrap",
        "--out", str(out), "--no-record", "--verify", "-q",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["workload"]["kind"] == "trace"
    assert summary["host_write_requests"] == 1350 and summary["host_read_requests"] == 150
    assert summary["verified"] and summary["device"]["reads_checked"] > 0


def test_trace_stats(tmp_path):
    trace = tmp_path / "t.csv"
    write_msr_trace(trace, 100)
    stats = trace_stats(trace, "msr")
    assert stats["records"] == 100 and stats["writes"] == 90 and stats["reads"] == 10
    assert stats["write_bytes"] == 90 * 16384 and stats["max_end_bytes"] <= 256 * 16384
    (tmp_path / "bad.csv").write_text("1,hm,0,Write,0,4096,1\nnot a line\n")
    with pytest.raises(nandstack.NandstackError, match=r"bad\.csv:2: .*not a line"):
        trace_stats(tmp_path / "bad.csv", "msr")
    with pytest.raises(nandstack.ConfigError, match="ssdsim"):
        trace_stats(trace, "nope")


# --- the experiment -------------------------------------------------------------------------------------


def test_headline_by_hand():
    import polars as pl

    means = pl.DataFrame(
        {
            "workload": ["a"] * 3 + ["b"] * 3,
            "manager": ["dwa", "ust", "rl"] * 2,
            "throughput_mib_s": [2.0, 4.0, 3.0, 1.0, 1.0, 2.0],
            "waf": [1.0, 2.0, 1.5, 1.0, 1.0, 1.0],
        }
    )
    head = rl_slc_cache.headline(means)
    # vs DWA: (3/2 − 1 + 2/1 − 1) / 2 = 75%; vs UST: (3/4 − 1 + 2 − 1) / 2 = 37.5%.
    assert head["dwa"]["throughput_gain_pct"] == pytest.approx(75.0)
    assert head["ust"]["throughput_gain_pct"] == pytest.approx(37.5)
    assert head["previous"]["throughput_gain_pct"] == pytest.approx(56.25)
    # WAF: vs DWA (1.5 − 1 + 0) / 2 = +25%; vs UST (0.75 − 1 + 0) / 2 = −12.5%.
    assert head["dwa"]["waf_change_pct"] == pytest.approx(25.0)
    assert head["ust"]["waf_change_pct"] == pytest.approx(-12.5)
    assert head["previous"]["waf_change_pct"] == pytest.approx(6.25)
    assert "qlc_only" not in head and head["previous"]["workloads"] == 2


def test_rl_slc_cache_small(monkeypatch, tmp_path):
    write_msr_trace(tmp_path / "msr_small.csv")
    monkeypatch.setenv("NANDSTACK_TRACES", str(tmp_path))
    small = {
        "scale": 0.03,
        "seeds": (1,),
        "standins": ("pc", "tpcc"),
        "unseen": ("tpcc",),
        "pretrain_on": ("pc",),
        "trace_target_bytes": 64 << 20,
    }
    # The full plan, shrunk: the paper device, plus the half-filled device ("aged") the quick run leaves out.
    monkeypatch.setattr(rl_slc_cache, "FULL", small)
    tasks = rl_slc_cache.tasks(False)
    parts = [t.params["part"] for t in tasks]
    assert parts.count("standin") == 10 and parts.count("pretrained") == 1 and parts.count("trace") == 5
    assert parts.count("aged") == 10
    assert parts.count("dwa_setting2") == 2 and parts.count("fig2") == 14  # Fig. 2: pc only here
    assert all(t.config["device"]["kind"] == "hybrid" for t in tasks)
    trace_task = next(t for t in tasks if t.params["part"] == "trace")
    # 1,350 writes of 16 KiB per pass; 64 MiB needs 4 passes.
    assert trace_task.config["workload"]["trace"]["repeat"] == 4
    outcome = run_tasks(tasks, backend=SerialBackend(), record=False, resume=False)
    assert outcome.ok, outcome.errors
    analysis = rl_slc_cache.EXPERIMENT.analyze(tasks, outcome.results)
    names = {f.name for f in analysis.figures}
    assert {"fig4_throughput", "waf", "fig5_slc_blocks_pc", "fig6_theta_rl", "fig7_cost_breakdown"} <= names
    assert {"fig8_pretraining", "traces_throughput", "throughput_half_filled"} <= names
    tables = {t.name: t.frame for t in analysis.tables}
    standins = tables["standins"]
    # QLC-only is the normalisation: exactly 1, and every normalised value is throughput ÷ QLC-only's.
    base = {
        r["workload"]: r["throughput_mib_s"]
        for r in standins.iter_rows(named=True)
        if r["manager"] == "qlc_only"
    }
    for r in standins.iter_rows(named=True):
        assert r["norm_thr"] == pytest.approx(r["throughput_mib_s"] / base[r["workload"]])
    # The headline table is the headline of the stand-in means, and the paper's numbers sit beside it.
    head = tables["headline"].to_dicts()
    prev = next(r for r in head if r["RL vs"].startswith("DWA and UST"))
    assert prev["paper_throughput_gain_pct"] == 77.6 and prev["paper_waf_change_pct"] == -20.3
    expected = rl_slc_cache.headline(standins)["previous"]["throughput_gain_pct"]
    assert prev["throughput_gain_pct"] == pytest.approx(expected, abs=0.01)
    # The cost breakdown adds up to each run's total, and QLC-only is all host→QLC.
    costs = tables["cost_breakdown"]
    for r in costs.iter_rows(named=True):
        parts_sum = sum(r[f"cost_{c}_s"] for c in rl_slc_cache.COSTS)
        assert parts_sum == pytest.approx(r["write_cost_s"], rel=1e-9)
        if r["manager"] == "qlc_only":
            assert (
                r["cost_host_to_qlc_s"] == pytest.approx(r["write_cost_s"]) and r["cost_vs_qlc_only"] == 1.0
            )
    assert tables["aged"].height == 10 and "half-filled device (2 workloads)" in analysis.measured
    pre = tables["pretraining"]
    assert pre["workload"].to_list() == ["tpcc"]
    assert analysis.verdict in ("agrees", "partly agrees", "differs")
    assert "+77.6%" in analysis.measured
    claims = {c["id"]: c for c in analysis.claims}
    assert list(claims) == ["R1", "R2", "R3", "R4"]
    assert claims["R1"]["today"] == pytest.approx(expected, abs=0.01)  # R1 is the headline's number
    assert claims["R1"]["ablations"][0]["change"].startswith("DWA with Table 2's Setting 2")
    fig2 = tables["fig2_dwa_settings"]
    assert fig2.height == 14 and set(fig2["setting"].to_list()) == {1, 2}


def test_rl_slc_cache_uses_the_shared_traces_that_write():
    if not SHARED.is_dir():
        pytest.skip(f"skipping: {SHARED} not found (../shared is absent)")
    found = {Path(p).name: writes for p, _fmt, writes, _bytes in rl_slc_cache.traces()}
    assert "mqsim_tpcc_small.trace" in found and found["mqsim_tpcc_small.trace"] == 2618
    assert all(w >= rl_slc_cache.MIN_TRACE_WRITES for w in found.values())
    assert not any(name.startswith("arc_") for name in found)  # read-only traces are left out
