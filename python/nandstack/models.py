"""Compatibility helpers. Every stack (block, hybrid SLC/QLC or zoned device; block workloads or host
programs) runs through `nandstack.run` on the one config schema (docs/config-reference.md); the hybrid
SSD is `device.kind = "hybrid"` with `[device.hybrid]` and `[device.manager]` (docs/hybrid.md).
`run_host` remains as an alias of `nandstack.run` for host-program configs in the older
`{seed, host, processes, device, run}` shape.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Callable

__all__ = ["host_stack_config", "run_host"]

Progress = Callable[[str, int, int], None]


def run_host(
    config: Mapping[str, Any],
    *,
    seed: int | None = None,
    verify: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run host programs (`processes`) on the host memory/swap model and a device: an alias of
    `nandstack.run` for configs shaped `{seed, host, processes, device, run}` (see `host_stack_config`).
    Returns the summary (the host's figures under `host`, e.g. `summary["host"]["swap"]["pswpout"]`).
    Not recorded in the results database."""
    from ._api import run

    stack = host_stack_config(config)
    return run(stack, seed=seed, verify=verify, progress=progress, record=False).summary


def host_stack_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """A host-program config in the one schema: `processes` become `[[workload.processes]]` (with
    `workload.kind = "host"`); `host`, `device` and `seed` stay; `run.series_interval_ms` becomes
    `run.interval_sim_seconds` and `run.verify_every_refs` `run.verify_every`."""
    data = json.loads(json.dumps(dict(config)))
    out: dict[str, Any] = {
        "workload": {"kind": "host", "processes": data.pop("processes", [])},
    }
    run_keys = dict(data.pop("run", {}) or {})
    if "series_interval_ms" in run_keys:
        run_keys["interval_sim_seconds"] = run_keys.pop("series_interval_ms") / 1000.0
    if "verify_every_refs" in run_keys:
        run_keys["verify_every"] = run_keys.pop("verify_every_refs")
    if run_keys:
        out["run"] = run_keys
    out.update(data)
    return out
