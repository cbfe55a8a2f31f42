"""Host programs through `nandstack.run` (the one runner and the one config schema): the compressed-swap
counters reach the summary and the results database."""

from __future__ import annotations

import nandstack
from nandstack.cli import preset_config


def test_compressed_swap_counters_reach_the_summary_and_the_database(tmp_path):
    from nandstack.results import ResultsDB

    for preset, keys in (
        ("host-zswap", ("host_zswap_zswpout", "host_zswap_zswpin", "host_zswap_pool_total_size")),
        ("host-zram", ("host_swap_backend_mm_stat_compr_data_size", "host_swap_backend_io_stat_notify_free")),
    ):
        stack = preset_config(preset)
        for p in stack["workload"]["processes"]:
            p["workload"]["ops"] = 20_000
        db = ResultsDB(tmp_path / f"{preset}.duckdb")
        result = nandstack.run(stack, record=True, db=db)
        host = result.summary["host"]
        assert host["swap"]["swpout_zero"] == 0 and "swpin_zero" in host["swap"]
        if preset == "host-zswap":
            assert host["zswap"]["zswpout"] > 0 and host["zswap"]["pool_limit_hit"] > 0
        else:
            assert host["zswap"] == {"enabled": False}
            assert host["swap"]["backend"]["io_stat"]["notify_free"] == host["swap"]["pswpin"]
        metrics = result.metrics
        assert all(metrics[k] > 0 for k in keys), {k: metrics.get(k) for k in keys}
        assert set(keys) <= set(db.metric_names())
