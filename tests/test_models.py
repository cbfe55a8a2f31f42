"""The host memory/swap model and the hybrid SLC/QLC model through the Python API."""

from __future__ import annotations

import pytest

import nandstack
from nandstack import models


def test_hybrid_runs_every_manager_and_reports_the_cost_breakdown():
    base = models.hybrid_default_config()
    seen = {}
    for kind in ("qlc_only", "static", "dwa", "ust", "rl"):
        cfg = {**base, "manager": {**base["manager"], "kind": kind}}
        report = models.run_hybrid(cfg, seed=1)
        seen[kind] = report
        assert report["write_throughput_mib_per_s"] > 0
        assert report["waf"] > 0.9  # the 144 KiB write buffer may absorb a few overwrites
    # Deterministic for a seed.
    again = models.run_hybrid({**base, "manager": {**base["manager"], "kind": "rl"}}, seed=1)
    strip = lambda r: {k: v for k, v in r.items() if not k.startswith("wall_")}  # noqa: E731
    assert strip(again) == strip(seen["rl"])


def test_hybrid_unknown_key_names_it():
    base = models.hybrid_default_config()
    with pytest.raises(nandstack.ConfigError, match="bogus"):
        models.run_hybrid({**base, "bogus": 1})
