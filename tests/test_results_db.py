"""The results database: schema, filters, compare, export, round trips, resume queries, atomicity, locks."""

from __future__ import annotations

import subprocess
import sys
import time
from types import SimpleNamespace

import duckdb
import polars as pl
import pytest

import nandstack
from conftest import TINY
from nandstack import DatabaseError, ResultsDB
from nandstack.results import db as db_module
from nandstack.results import default_db_path


def record(db, seed, **kwargs):
    result = nandstack.run(set=[*TINY, *kwargs.pop("set", [])], seed=seed, record=False)
    db.record(result, **kwargs)
    return result


@pytest.fixture
def db(db_path):
    return ResultsDB(db_path)


def test_default_path_follows_env(monkeypatch, tmp_path):
    monkeypatch.setenv("NANDSTACK_DB", str(tmp_path / "a.duckdb"))
    assert default_db_path() == tmp_path / "a.duckdb"
    monkeypatch.delenv("NANDSTACK_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_db_path() == tmp_path / "xdg" / "nandstack" / "results.duckdb"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_db_path() == tmp_path / "home" / ".local" / "share" / "nandstack" / "results.duckdb"


def test_schema_and_identity_columns(db):
    result = record(db, 1, source="cli", tags=["b", "a", "a"], params={"op": 0.25})
    row = db.sql("SELECT * FROM runs").to_dicts()[0]
    assert row["run_id"] == result.run_id and len(row["run_id"]) == 12
    assert row["config_hash"] == result.config_hash
    assert row["seed"] == 1
    assert row["nandstack_version"] == nandstack.__version__
    assert row["source"] == "cli"
    assert row["tags"] == ["a", "b"]
    assert row["params"] == '{"op":0.25}'
    commit = row["git_commit"]
    assert commit is None or len(commit.split("+")[0]) == 40
    assert db.sql("SELECT value FROM meta WHERE key = 'schema_version'").item() == "1"
    metric_columns = db.metric_names()
    assert "waf" in metric_columns and "write_latency_us_p99" in metric_columns


def test_filters(db):
    a = record(db, 1, experiment="e1", tags=["x"])
    b = record(db, 2, sweep="s1", label="second", set=["device.ftl.over_provisioning=0.5"])
    assert db.count() == 2
    assert db.runs(experiment="e1")["run_id"].to_list() == [a.run_id]
    assert db.runs(sweep="s1")["run_id"].to_list() == [b.run_id]
    assert db.runs(tag="x")["run_id"].to_list() == [a.run_id]
    assert db.runs(label="second")["run_id"].to_list() == [b.run_id]
    low = min(a.waf, b.waf)
    assert db.runs(where=f"waf > {low}")["run_id"].to_list() == [a.run_id if a.waf > b.waf else b.run_id]
    assert db.runs(where="waf > 1 AND seed = 2")["run_id"].to_list() == [b.run_id]
    assert db.runs(limit=1).height == 1
    assert db.runs()["run_id"].to_list() == [b.run_id, a.run_id]  # newest first
    with pytest.raises(DatabaseError, match="query failed"):
        db.runs(where="no_such_metric > 1")


def test_result_round_trip(db):
    original = record(db, 5)
    loaded = db.result(original.run_id[:6])
    assert loaded.run_id == original.run_id
    assert loaded.waf == original.waf
    assert loaded.config_hash == original.config_hash
    assert loaded.timeseries.equals(original.timeseries)
    assert db.timeseries(original.run_id).equals(original.timeseries)


def test_resolve_errors(db, monkeypatch):
    record(db, 1)
    with pytest.raises(DatabaseError, match="no run with id"):
        db.resolve("zzzz")
    ids = iter(["abc0" + "0" * 28, "abc1" + "1" * 28])
    monkeypatch.setattr(db_module.uuid, "uuid4", lambda: SimpleNamespace(hex=next(ids)))
    result = nandstack.run(set=TINY, seed=2, record=False)
    db.record(result)
    db.record(result)
    with pytest.raises(DatabaseError, match="ambiguous"):
        db.resolve("abc")
    assert db.resolve("abc1") == "abc1" + "1" * 8


def test_compare(db):
    a = record(db, 1)
    b = record(db, 2, set=["device.ftl.over_provisioning=0.5"])
    frame = db.compare([a.run_id, b.run_id], ["waf", "iops"])
    assert frame.columns == ["metric", a.run_id, b.run_id]
    metrics = frame["metric"].to_list()
    assert metrics[-2:] == ["waf", "iops"]
    assert "config.device.ftl.over_provisioning" in metrics and "config.seed" in metrics
    assert "config.workload.pattern" not in metrics  # equal keys are not shown
    full = db.compare([a.run_id, b.run_id])
    assert "write_latency_us_p99" in full["metric"].to_list()
    with pytest.raises(DatabaseError, match="no metric"):
        db.compare([a.run_id], ["nope"])


def test_export_csv_and_parquet(db, tmp_path):
    record(db, 1, tags=["t1", "t2"])
    record(db, 2)
    assert db.export(tmp_path / "runs.csv") == 2
    csv = pl.read_csv(tmp_path / "runs.csv")
    assert csv.height == 2 and "waf" in csv.columns and "config" in csv.columns
    assert "t1;t2" in csv["tags"].to_list()
    assert db.export(tmp_path / "sub" / "runs.parquet", where="seed = 1") == 1
    parquet = pl.read_parquet(tmp_path / "sub" / "runs.parquet")
    assert parquet["seed"].to_list() == [1]


def test_finished_and_latest(db):
    a = record(db, 1)
    assert db.finished([a.config_hash, "0" * 16]) == {a.config_hash}
    assert db.finished([a.config_hash], version="0.0.0-other") == set()
    latest = db.latest([a.config_hash])
    assert latest[a.config_hash].run_id == a.run_id
    again = record(db, 1)
    assert db.latest([a.config_hash])[a.config_hash].run_id in (a.run_id, again.run_id)
    assert db.latest([a.config_hash])[a.config_hash].timeseries.height == 20


def test_a_failed_write_leaves_nothing(db, monkeypatch):
    record(db, 1)
    result = nandstack.run(set=TINY, seed=2, record=False)

    # Fail after the runs/metrics inserts were issued: the transaction must roll back whole.
    original_insert = db_module._add_metric_columns

    def add_then_fail(con, metrics):
        original_insert(con, metrics)
        con.execute("INSERT INTO runs SELECT * FROM runs LIMIT 0")  # a harmless statement inside
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(db_module, "_add_metric_columns", add_then_fail)
    with pytest.raises(RuntimeError, match="disk on fire"):
        db.record(result)
    monkeypatch.undo()
    counts = db.sql(
        "SELECT (SELECT count(*) FROM runs) AS r, (SELECT count(*) FROM metrics) AS m, "
        "(SELECT count(*) FROM timeseries) AS t"
    ).to_dicts()[0]
    assert counts == {"r": 1, "m": 1, "t": 1}


def test_waits_for_another_writer(db, tmp_path):
    record(db, 1)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, time; c = duckdb.connect({str(db.path)!r}); print(1, flush=True); "
            "time.sleep(1.5)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "1"
    start = time.monotonic()
    assert db.count() == 1  # retried until the other process let go
    assert time.monotonic() - start > 0.3
    holder.wait(timeout=30)
    holder.stdout.close()


def test_a_writer_keeps_one_connection_for_its_runs(db, monkeypatch):
    """Inside a writer block the runs share one DuckDB connection (opening one costs tens of ms); it is
    closed when the block ends, so another process can open the file at once; each run is still its
    own transaction (a failed one leaves the others)."""
    opened = []
    original = db._open
    monkeypatch.setattr(db, "_open", lambda: opened.append(1) or original())
    with db.writer("test"):
        for seed in (1, 2, 3):
            record(db, seed)
        assert db.count() == 3
        assert len(opened) == 1
    assert db._held is None
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import duckdb; c = duckdb.connect({str(db.path)!r}); "
            "print(c.execute('SELECT count(*) FROM runs').fetchone()[0])",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stdout.strip() == "3", out.stderr
    # Outside a block every use opens its own.
    db.count()
    assert len(opened) == 2 and db._held is None


def test_a_kept_connection_is_let_go_when_its_time_is_up(db, monkeypatch):
    """A writer between runs (a long run going on) lets go of the file after HOLD_SECONDS, even with no
    run to close it, so that another process reading the database waits at most that long."""
    monkeypatch.setattr(db_module, "HOLD_SECONDS", 0.2)
    with db.writer("test"):
        record(db, 1)
        assert db._held is not None
        deadline = time.monotonic() + 10
        while db._held is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert db._held is None
        c = duckdb.connect(str(db.path))  # nothing holds the file now
        assert c.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
        c.close()
        record(db, 2)  # and the writer opens a new one for its next run
    assert db.count() == 2


def test_lock_timeout_gives_a_clear_error(db):
    record(db, 1)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, time; c = duckdb.connect({str(db.path)!r}); print(1, flush=True); time.sleep(5)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "1"
        with pytest.raises(DatabaseError, match="cannot open results database"):
            ResultsDB(db.path, lock_timeout=0.3).count()
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()


def test_newer_schema_is_refused(db):
    record(db, 1)
    con = duckdb.connect(str(db.path))
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(DatabaseError, match="newer"):
        db.count()
