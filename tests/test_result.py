"""`Result`'s typed views (polars time series, metrics, latency, device), `run(workload=...)`, recording."""

from __future__ import annotations

import polars as pl
import pytest

import nandstack
from conftest import TINY
from nandstack import ResultsDB, workloads


def tiny(**kwargs):
    return nandstack.run(set=[*TINY, *kwargs.pop("set", [])], **kwargs)


def test_typed_views():
    result = tiny(seed=1, record=False)
    assert isinstance(result.waf, float) and result.waf >= 1.0
    assert result.waf == result["waf"]
    assert result.iops == pytest.approx(result["iops"])
    assert result.seed == 1
    assert result.requests == 20000
    assert result.host_write_bytes == result["host_write_bytes"]
    assert result.flash_program_pages > 0 and result.flash_erases > 0 and result.gc_migrated_pages > 0
    lat = result.write_latency
    assert isinstance(lat, nandstack.Latency)
    assert lat.count == 20000 and lat.p50 <= lat.p99 <= lat.max
    assert result.read_latency is None  # no reads
    device = result.device
    assert isinstance(device, nandstack.Device)
    assert device.blocks == 64 and device.planes == 1 and device.page_size_bytes == 4096
    assert 0 < device.effective_over_provisioning < device.over_provisioning
    assert result.wall_seconds > 0
    assert result.run_id is None


def test_timeseries_is_a_polars_frame():
    result = tiny(seed=1, record=False)
    series = result.timeseries
    assert isinstance(series, pl.DataFrame)
    assert series.height == len(result["timeseries"]["rows"]) == 20
    assert series.columns == result["timeseries"]["columns"]
    assert all(dtype == pl.Float64 for dtype in series.dtypes)
    assert series["requests"].is_sorted()
    assert series["requests"][-1] == 20000


def test_timing_off_has_no_latency_and_timeseries_still_works():
    result = tiny(seed=1, record=False, set=["device.timing.enabled=false"])
    assert result.iops is None and result.write_latency is None and result.sim_seconds is None
    assert isinstance(result.timeseries, pl.DataFrame)


def test_metrics_are_flat_numbers_with_sql_names():
    metrics = tiny(seed=1, record=False).metrics
    assert metrics["waf"] > 1
    assert "write_latency_us_p99" in metrics
    assert "erase_count_mean" in metrics
    assert "device_effective_over_provisioning" in metrics
    assert "seed" not in metrics and "timeseries_rows" not in metrics
    assert all(isinstance(v, float) for v in metrics.values())
    assert all(name.replace("_", "").isalnum() and name == name.lower() for name in metrics)


@pytest.mark.parametrize(
    ("workload", "pattern"),
    [
        ("zipf:1.2", "zipf"),
        (workloads.hot_cold(0.9, 0.1), "hot_cold"),
        ({"pattern": "sequential"}, "sequential"),
        (workloads.uniform(read_fraction=0.5), "uniform"),
    ],
)
def test_workload_argument(workload, pattern):
    result = tiny(seed=2, record=False, workload=workload)
    assert result.config["workload"]["pattern"] == pattern


def test_set_wins_over_workload():
    result = tiny(seed=2, record=False, workload="zipf:1.2", set=["workload.zipf_theta=0.8"])
    assert result.config["workload"]["zipf_theta"] == 0.8


def test_workload_names():
    assert workloads.parse("zipf").overrides["workload.zipf_theta"] == 0.99
    assert workloads.parse("hot_cold:90/10").overrides["workload.hot_ops_fraction"] == 0.9
    assert workloads.parse("hot-cold").name == "hot-cold-80/20"
    assert workloads.trace("/x/y.csv", "msr").overrides == {
        "workload.kind": "trace",
        "workload.trace.path": "/x/y.csv",
        "workload.trace.format": "msr",
        "workload.trace.lba": "scale",
    }
    for bad in ("zipf:abc", "pareto", "hot_cold:1/2/3"):
        with pytest.raises(nandstack.ConfigError, match="unknown workload"):
            workloads.parse(bad)
    with pytest.raises(nandstack.ConfigError):
        workloads.zipf(0)
    with pytest.raises(nandstack.ConfigError):
        workloads.hot_cold(1.5, 0.1)


def test_run_records_by_default(db_path):
    result = tiny(seed=3, db=db_path, tags=["unit"], label="rec", experiment="tests")
    assert result.run_id is not None
    db = ResultsDB(db_path)
    rows = db.runs(columns=["run_id", "source", "label", "experiment", "tags", "waf", "config_hash"])
    assert rows.to_dicts() == [
        {
            "run_id": result.run_id,
            "source": "api",
            "label": "rec",
            "experiment": "tests",
            "tags": ["unit"],
            "waf": result.waf,
            "config_hash": result.config_hash,
        }
    ]


def test_record_false_writes_nothing(db_path):
    tiny(seed=3, db=db_path, record=False)
    assert not db_path.exists() or ResultsDB(db_path).count() == 0


def test_default_database_comes_from_the_environment():
    # conftest points NANDSTACK_DB at a session temp file: a plain run() lands there.
    before = ResultsDB().count()
    result = tiny(seed=4)
    assert ResultsDB().count() == before + 1
    assert ResultsDB().result(result.run_id).waf == result.waf


def test_engine_error_records_nothing(db_path):
    with pytest.raises(nandstack.ConfigError):
        tiny(db=db_path, set=["device.ftl.over_provisioning=-1"])
    assert not db_path.exists() or ResultsDB(db_path).count() == 0
