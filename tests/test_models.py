"""`models.run_host`: an alias of `nandstack.run` for host-program configs in the older
`{seed, host, processes, device, run}` shape."""

from __future__ import annotations

import nandstack
from nandstack import models
from nandstack.cli import preset_config


def test_run_host_is_the_one_runner_on_the_older_shape():
    stack = preset_config("host-swap-block")
    processes = stack["workload"]["processes"]
    for p in processes:  # a short run
        p["workload"]["ops"] = 50_000
    old_shape = {"seed": 3, "host": stack["host"], "processes": processes, "device": stack["device"]}
    summary = models.run_host(old_shape)
    assert summary["host"]["pswpout"] > 0, "the preset swaps"
    stack["seed"] = 3
    direct = nandstack.run(stack, record=False).summary
    same = lambda h: {k: v for k, v in h.items() if not k.startswith("wall_")}  # noqa: E731
    assert same(summary["host"]) == same(direct["host"]) and summary["waf"] == direct["waf"]
