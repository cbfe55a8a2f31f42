"""Sweeps: spec parsing and expansion, backends (serial, local pool, Ray, a fake Ray), resume, Ctrl-C."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

import nandstack
from conftest import TINY_DICT, interrupt_at_quarter
from nandstack import ConfigError, NandstackError, ResultsDB
from nandstack.sweep import (
    LocalBackend,
    RayBackend,
    SerialBackend,
    execute_task,
    import_ray,
    load_spec,
    make_backend,
    run_sweep,
    run_tasks,
    spec_from_dict,
)

SPEC_HEAD = "\n".join(["[set]", *(f'"{k}" = {v}' for k, v in TINY_DICT.items())])


def write_spec(tmp_path, body, name="spec.toml"):
    path = tmp_path / name
    path.write_text(body + "\n" + SPEC_HEAD + "\n")
    return path


GRID = """
name = "demo"
seeds = 2
tags = ["t"]
[grid]
"device.ftl.over_provisioning" = [0.25, 0.4]
[grid.device.ftl.gc.victim]
policy = ["greedy", "fifo"]
[workloads]
uniform = "uniform"
skewed = { pattern = "zipf", zipf_theta = 1.2 }
"""


def test_spec_expansion(tmp_path):
    spec = load_spec(write_spec(tmp_path, GRID))
    assert spec.name == "demo" and spec.seeds == [1, 2] and spec.tags == ["t"]
    assert spec.grid == {
        "device.ftl.over_provisioning": [0.25, 0.4],
        "device.ftl.gc.victim.policy": ["greedy", "fifo"],
    }
    tasks = spec.tasks()
    assert len(tasks) == spec.size() == 2 * 2 * 2 * 2
    assert len({t.config_hash for t in tasks}) == len(tasks)
    first = tasks[0]
    assert first.params == {
        "device.ftl.over_provisioning": 0.25,
        "device.ftl.gc.victim.policy": "greedy",
        "workload": "uniform",
        "seed": 1,
    }
    assert (
        first.label
        == "device.ftl.over_provisioning=0.25, device.ftl.gc.victim.policy=greedy, workload=uniform, seed=1"
    )
    skewed = next(t for t in tasks if t.params["workload"] == "skewed")
    assert skewed.config["workload"]["zipf_theta"] == 1.2
    assert all(t.config["device"]["geometry"]["blocks_per_plane"] == 64 for t in tasks)


def test_points_list_workload_names_and_base_config(tmp_path):
    (tmp_path / "base.toml").write_text("[workload]\nread_fraction = 0.3\n")
    spec = load_spec(
        write_spec(
            tmp_path,
            'config = "base.toml"\nworkloads = ["uniform", "hot_cold:90/10"]\n'
            '[[points]]\n"device.ftl.gc.victim" = { policy = "d_choices", d = 4 }\n'
            '[[points]]\ndevice.ftl.gc.victim.policy = "fifo"',
        )
    )
    tasks = spec.tasks()
    assert len(tasks) == 2 * 2
    assert tasks[0].config["device"]["ftl"]["gc"]["victim"] == {"policy": "d_choices", "d": 4}
    assert tasks[0].config["workload"]["read_fraction"] == 0.3
    assert tasks[-1].params["workload"] == "hot-cold-90/10"


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ("nmae = 'x'", "unknown sweep spec key `nmae`"),
        ('[grid]\n"device.ftl.over_provisioning" = 0.3', "must be a non-empty list"),
        ("seeds = 0", "at least 1"),
        ("seeds = [1.5]", "array of integers"),
        ('workloads = ["pareto"]', "unknown workload"),
        ('[grid]\n"device.ftl.gc.victim.policy" = ["greedy", "best"]', "device.ftl.gc.victim.policy=best"),
        ('[grid]\n"device.geometry.chanels" = [1]', "chanels"),
    ],
)
def test_spec_errors_name_the_problem(tmp_path, body, match):
    with pytest.raises(ConfigError, match=match):
        load_spec(write_spec(tmp_path, body)).tasks()


def test_too_many_runs_is_refused():
    spec = spec_from_dict({"grid": {"seed": list(range(400)), "workload.requests": list(range(1, 400))}})
    with pytest.raises(ConfigError, match="more than"):
        spec.tasks()


def test_serial_sweep_records_and_resumes(tmp_path, db_path):
    spec = load_spec(write_spec(tmp_path, GRID))
    db = ResultsDB(db_path)
    calls = []
    outcome = run_sweep(spec, backend=SerialBackend(), db=db, progress=lambda *a: calls.append(a))
    assert outcome.ok and outcome.ran == 16 and outcome.skipped == 0
    assert calls[0] == ("demo", 0, 16) and calls[-1] == ("demo", 16, 16)
    assert db.count() == 16
    rows = db.runs(sweep="demo", columns=["sweep", "source", "tags", "params"])
    assert set(rows["source"]) == {"sweep"} and rows["tags"][0].to_list() == ["t"]
    again = run_sweep(spec, backend=SerialBackend(), db=db)
    assert again.ran == 0 and again.skipped == 16 and db.count() == 16
    assert [r.waf for r in again.results] == [r.waf for r in outcome.results]
    fresh = run_sweep(spec, backend=SerialBackend(), db=db, resume=False)
    assert fresh.ran == 16 and db.count() == 32


def test_failed_points_are_reported_not_fatal(tmp_path, db_path):
    # A workload that never writes cannot warm up: the engine rejects that point only.
    spec = spec_from_dict(
        {"set": TINY_DICT, "grid": {"workload.requests": [100, 200]}, "points": []}, name="bad"
    )
    tasks = spec.tasks()
    payloads = [t.payload() for t in tasks]
    payloads[1]["config"]["device"]["ftl"]["over_provisioning"] = -5.0  # slipped past validation on purpose
    outcomes = dict(SerialBackend().run(payloads))
    assert "summary" in outcomes[0]
    assert outcomes[1]["error"].startswith("ConfigError")


def test_local_pool_matches_serial(tmp_path, db_path):
    spec = load_spec(write_spec(tmp_path, GRID))
    serial = run_sweep(spec, backend=SerialBackend(), db=ResultsDB(tmp_path / "a.duckdb"))
    local = run_sweep(spec, backend=LocalBackend(2), db=ResultsDB(db_path))
    assert local.ran == 16
    assert [r.waf for r in local.results] == [r.waf for r in serial.results]


def test_duplicate_points_run_once(db_path):
    spec = spec_from_dict({"set": TINY_DICT, "points": [{"seed": 1}, {"seed": 1}], "seeds": [1]})
    outcome = run_sweep(spec, backend=SerialBackend(), db=ResultsDB(db_path))
    assert len(outcome.results) == 2 and outcome.ran == 1
    assert outcome.results[0] is outcome.results[1]


def test_a_second_recording_process_on_one_database_is_refused(tmp_path, db_path):
    """Two sweeps or reproductions recording into one file are refused by name, not interleaved: the
    writer lock beside the database names the holder; without recording, or once it is released, the
    same sweep runs."""
    spec = spec_from_dict({"set": TINY_DICT, "seeds": [1]}, name="locked")
    other = ResultsDB(db_path)
    with other.writer("reproduce diss"):
        with pytest.raises(
            nandstack.DatabaseError,
            match=r"being written by another nandstack process "
            r"\(pid \d+: reproduce diss\).*another --db",
        ):
            run_sweep(spec, backend=SerialBackend(), db=ResultsDB(db_path))
        # A sweep that records nothing takes no lock.
        assert (
            run_tasks(
                spec.tasks(), backend=SerialBackend(), db=ResultsDB(db_path), record=False, resume=False
            ).ran
            == 1
        )
    assert run_sweep(spec, backend=SerialBackend(), db=ResultsDB(db_path)).ran == 1


def test_execute_task_returns_plain_data():
    out = execute_task({"config": nandstack.load_config(None, TINY_DICT), "verify": True})
    assert out["summary"]["verified"] is True and out["config"]["seed"] == 42
    # The task's CPU time (process time of the worker, every thread): positive, and no more than the
    # wall time of the run times the machine's CPUs (it cannot exceed what the process could use).
    assert 0.0 < out["cpu_seconds"] <= 1.0 + out["summary"]["wall_seconds"] * 8 * (os.cpu_count() or 1)
    assert out["summary"]["wall_task_cpu_seconds"] == pytest.approx(out["cpu_seconds"], abs=0.001)


def test_outcome_sums_the_cpu_seconds_of_the_runs_made_now(db_path):
    spec = spec_from_dict({"set": TINY_DICT, "seeds": [1, 2]}, name="cpu")
    first = run_sweep(spec, backend=SerialBackend(), db=ResultsDB(db_path))
    assert sorted(first.cpu_seconds) == [0, 1] and all(v > 0 for v in first.cpu_seconds.values())
    assert first.total_cpu_seconds == pytest.approx(sum(first.cpu_seconds.values()))
    assert "CPU s)" in first.summary_line()
    again = run_sweep(spec, backend=SerialBackend(), db=ResultsDB(db_path))
    assert again.skipped == 2 and again.cpu_seconds == {} and again.total_cpu_seconds == 0.0


# --- Ray -------------------------------------------------------------------------------------------------
def test_missing_ray_gives_a_clear_error(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(NandstackError, match=r"pip install 'nandstack\[ray\]'"):
        import_ray()
    from nandstack import cli

    assert cli.main(["sweep", "nonexistent.toml", "--dry-run"]) == 2  # the missing file, not Ray
    code = cli.main(["reproduce", "gc-policies-vs-op", "--quick", "--backend", "ray", "--no-record"])
    assert code == 2
    assert "nandstack[ray]" in capsys.readouterr().err


class Ref:
    def __init__(self, value):
        self.value = value


class FakeRay:
    """Just enough of Ray's API: tasks run synchronously when submitted."""

    def __init__(self):
        self.initialized = None
        self.cancelled = []

    def is_initialized(self):
        return self.initialized is not None

    def init(self, **options):
        self.initialized = options

    def remote(self, fn):
        return SimpleNamespace(remote=lambda payload: Ref(fn(payload)))

    def wait(self, refs, num_returns=1):
        return refs[:num_returns], refs[num_returns:]

    def get(self, ref):
        return ref.value

    def cancel(self, ref, force=False):
        self.cancelled.append(ref)


def test_ray_backend_with_a_fake_ray(monkeypatch, tmp_path, db_path):
    fake = FakeRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    backend = make_backend("ray", workers=2, address="ray://head:10001")
    assert isinstance(backend, RayBackend)
    outcome = run_sweep(load_spec(write_spec(tmp_path, GRID)), backend=backend, db=ResultsDB(db_path))
    assert outcome.ran == 16 and ResultsDB(db_path).count() == 16
    assert fake.initialized["address"] == "ray://head:10001"


@pytest.mark.slow
def test_ray_backend_on_a_local_ray(tmp_path, db_path):
    ray = pytest.importorskip("ray")
    spec = spec_from_dict({"set": TINY_DICT, "seeds": [1, 2]}, name="ray-local")
    try:
        outcome = run_sweep(spec, backend=RayBackend(address=None, workers=1), db=ResultsDB(db_path))
    finally:
        ray.shutdown()
    assert outcome.ok and outcome.ran == 2
    serial = run_sweep(spec, backend=SerialBackend(), db=ResultsDB(tmp_path / "s.duckdb"))
    assert [r.waf for r in outcome.results] == [r.waf for r in serial.results]


def test_unknown_backend():
    with pytest.raises(ConfigError, match="unknown sweep backend"):
        make_backend("slurm")


# --- Ctrl-C ----------------------------------------------------------------------------------------------
LONG = """
name = "long"
seeds = 8
[grid]
"device.ftl.gc.victim.policy" = ["greedy", "fifo"]
"""


@pytest.mark.parametrize("whole_group", [False, True], ids=["parent-only", "process-group"])
def test_sigint_during_a_sweep_leaves_the_database_consistent(tmp_path, whole_group):
    spec = write_spec(tmp_path, LONG).read_text().replace('"workload.requests" = 20000', "")
    path = tmp_path / "long.toml"
    path.write_text(spec + '"workload.requests" = 200000\n')
    db_file = tmp_path / "sig.duckdb"
    cmd = [sys.executable, "-m", "nandstack", "sweep", str(path), "--db", str(db_file), "-j", "2"]
    code, rest, _ = interrupt_at_quarter(cmd, whole_group=whole_group)
    assert code == 130, rest
    assert "interrupted" in rest and "resume" in rest
    db = ResultsDB(db_file)
    counts = db.sql(
        "SELECT (SELECT count(*) FROM runs) AS r, (SELECT count(*) FROM metrics) AS m, "
        "(SELECT count(*) FROM timeseries) AS t, "
        "(SELECT count(*) FROM runs LEFT JOIN metrics USING (run_id) WHERE metrics.run_id IS NULL) AS orphans"
    ).to_dicts()[0]
    assert counts["r"] == counts["m"] == counts["t"] and counts["orphans"] == 0
    assert 0 < counts["r"] < 16
    # Running it again finishes the sweep without repeating the recorded runs.
    time.sleep(0.1)
    done = subprocess.run([*cmd, "-q"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"{16 - counts['r']} run, {counts['r']} already recorded" in done.stderr
    assert db.count() == 16


def test_example_specs_are_valid():
    from pathlib import Path

    examples = sorted((Path(__file__).resolve().parents[1] / "examples" / "sweeps").glob("*.toml"))
    assert examples, "examples/sweeps/*.toml"
    for path in examples:
        spec = load_spec(path)
        tasks = spec.tasks()  # every config validated by the engine
        assert len(tasks) == spec.size() and len({t.config_hash for t in tasks}) == len(tasks)


def test_a_sweep_varies_a_host_key_and_a_device_key_in_one_spec(tmp_path, db_path):
    path = tmp_path / "host-and-device.toml"
    path.write_text(
        'name = "host-and-device"\npreset = "host-swap-block"\n'
        '[set]\n"workload.processes" = [{ name = "m", cgroup = "limited", workload = { type = "memtouch", '
        'pages = 6000, ops = 4000, pattern = "uniform", write_pct = 50, seed = 1 } }]\n'
        '"host.cgroups" = [{ name = "limited", limit_pages = 2000 }]\n'
        '"device.geometry.blocks_per_plane" = 128\n'
        '[grid]\n"host.swappiness" = [10, 100]\n"device.ftl.over_provisioning" = [0.07, 0.28]\n'
    )
    spec = load_spec(path)
    tasks = spec.tasks()
    assert len(tasks) == 4
    assert {(t.params["host.swappiness"], t.params["device.ftl.over_provisioning"]) for t in tasks} == {
        (10, 0.07),
        (10, 0.28),
        (100, 0.07),
        (100, 0.28),
    }
    outcome = run_sweep(spec, backend=SerialBackend(), db=ResultsDB(db_path))
    assert outcome.ok, outcome.errors
    frame = ResultsDB(db_path).sql("SELECT host_pswpout, device_over_provisioning FROM results")
    assert frame.height == 4 and frame["host_pswpout"].min() > 0
    assert sorted(set(frame["device_over_provisioning"].to_list())) == [0.07, 0.28]
