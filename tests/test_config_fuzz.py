"""Seeded random configs through both models: every config either fails validation with a `ConfigError`
naming a key, or runs to the end (with verification on a third of them). A valid config that ends in
"device full" or any other error is an engine bug (this found three: docs/model-ftl.md, docs/hybrid.md)."""

from __future__ import annotations

import random

import pytest

import nandstack
from nandstack import ConfigError
from nandstack.experiments.base import make_hybrid_task

RUNS = 150


def block_config(rng: random.Random) -> dict:
    start = rng.choice([1, 2, 3, 5])
    return {
        "device.geometry.channels": rng.choice([1, 2, 3]),
        "device.geometry.chips_per_channel": rng.choice([1, 2]),
        "device.geometry.dies_per_chip": 1,
        "device.geometry.planes_per_die": rng.choice([1, 2, 4]),
        "device.geometry.blocks_per_plane": rng.choice([16, 32, 64]),
        "device.geometry.pages_per_block": rng.choice([4, 8, 32]),
        "device.geometry.page_size_bytes": rng.choice([4096, 8192, 16384]),
        "device.timing.enabled": rng.choice([True, False]),
        "device.ftl.over_provisioning": rng.choice([0.07, 0.2, 0.5, 1.0]),
        "device.ftl.allocation": rng.choice(["static", "dynamic"]),
        "device.ftl.placement.policy": rng.choice(["single", "sup_gc", "mbf"]),
        "device.ftl.gc.scope": rng.choice(["plane", "device"]),
        "device.ftl.gc.start_free_blocks": start,
        "device.ftl.gc.stop_free_blocks": start + rng.choice([0, 1, 3]),
        "device.ftl.gc.migration": rng.choice(["same_plane", "any_plane"]),
        "device.ftl.gc.victim.policy": rng.choice(["greedy", "fifo", "cost_benefit", "random", "d_choices"]),
        "device.ftl.wear_leveling.enabled": rng.choice([True, False]),
        "device.ftl.mapping_cache.entries": rng.choice([0, 64]),
        "device.controller.write_buffer.bytes": rng.choice([0, 65536]),
        "device.controller.write_buffer.eviction": rng.choice(["lru", "gc_aware"]),
        "device.controller.mapping_unit_bytes": rng.choice([4096, 16384]),
        "device.controller.background_gc.enabled": rng.choice([True, False]),
        "precondition.fill_fraction": rng.choice([0.0, 0.5, 1.0]),
        "precondition.fill_order": rng.choice(["sequential", "random"]),
        "precondition.warmup_capacity_multiples": rng.choice([0.0, 0.5]),
        "workload.pattern": rng.choice(["uniform", "sequential", "zipf", "hot_cold"]),
        "workload.requests": 5000,
        "workload.read_fraction": rng.choice([0.0, 0.3]),
        "workload.trim_fraction": rng.choice([0.0, 0.1]),
        "workload.io.queue_depth": rng.choice([1, 32]),
    }


def hybrid_overrides(rng: random.Random) -> dict:
    q = rng.choice([4, 12, 16, 64])
    return {
        "device.hybrid.total_blocks": rng.choice([64, 200, 400]),
        "device.hybrid.page_bytes": rng.choice([4096, 8192, 16384]),
        "device.hybrid.qlc_pages_per_block": q,
        "device.hybrid.slc_pages_per_block": max(1, q // rng.choice([1, 2, 4])),
        "device.hybrid.over_provisioning": rng.choice([0.25, 0.5, 1.0]),
        "device.hybrid.write_buffer_bytes": rng.choice([0, 4096, 147456]),
        "device.hybrid.slc_free_threshold_blocks": rng.choice([1, 2, 5]),
        "device.hybrid.qlc_free_threshold_blocks": rng.choice([1, 2, 5]),
        "device.manager.kind": rng.choice(["qlc_only", "static", "dwa", "ust", "rl"]),
        "workload.standin.name": rng.choice(["pc", "phone", "tpcc", "oltp", "linkbench", "ycsb_a"]),
        "workload.standin.scale": rng.choice([0.0002, 0.0005]),
        "precondition.fill_fraction": rng.choice([0.0, 0.5, 0.9]),
        "run.interval_written_bytes": 1 << 20,
    }


@pytest.mark.parametrize("model", ["block", "hybrid"])
def test_random_configs_validate_or_run(model):
    rng = random.Random(2026 if model == "block" else 7)
    ran = rejected = 0
    for i in range(RUNS):
        overrides = block_config(rng) if model == "block" else hybrid_overrides(rng)
        try:
            if model == "block":
                nandstack.run(set=overrides, seed=i, verify=i % 3 == 0, record=False)
            else:
                config = make_hybrid_task(overrides, {}).config
                nandstack.run(config, seed=i, verify=i % 3 == 0, record=False)
            ran += 1
        except ConfigError:
            rejected += 1
        except nandstack.NandstackError as e:
            pytest.fail(f"config {i} is valid but the run failed: {e}\n{overrides}")
    assert ran >= RUNS // 4, f"only {ran} of {RUNS} random configs were valid: the generator needs tuning"
    assert ran + rejected == RUNS
