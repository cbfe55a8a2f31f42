"""Fig. 2 of the RL SLC-cache paper: DWA under Table 2's Setting 1 (θ = 64 KB) and Setting 2 (θ = 16 KB)
on the PC and YCSB-A workloads at space utilisations 0, 20, …, 70% — the paper's motivation that neither
setting is best everywhere. Utilisation is the device's fill before the run (`precondition.fill_fraction`,
written sequentially to QLC, as the hybrid device preconditions)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

    from ..sweep.spec import Task

#: (setting, θ in bytes) as §3 states them.
SETTINGS = ((1, 64 << 10), (2, 16 << 10))
UTILISATIONS = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
WORKLOADS = ("pc", "ycsb_a")
COST_COLUMNS = ("host_to_slc", "host_to_qlc", "slc_to_qlc", "qlc_to_qlc")


def tasks(
    device: dict[str, Any],
    standin: Callable[[str], dict[str, Any]],
    make: Callable[..., Task],
    workloads: tuple[str, ...] = WORKLOADS,
) -> list[Task]:
    """Every Fig. 2 run (part `fig2`), one seed: DWA per setting × workload × utilisation."""
    out = []
    for setting, theta in SETTINGS:
        for name in workloads:
            for util in UTILISATIONS:
                overrides = {
                    **device,
                    "device.manager.kind": "dwa",
                    "device.manager.dwa": {"setting": setting, "theta_bytes": theta},
                    "workload": standin(name),
                    "precondition.fill_fraction": util,
                }
                params = {"part": "fig2", "workload": name, "manager": "dwa", "seed": 1}
                out.append(make(overrides, {**params, "setting": setting, "utilisation": util}))
    return out


def table(frame: pl.DataFrame) -> pl.DataFrame:
    """Write time (s) by cause per workload, utilisation and setting, with which setting is faster."""
    import polars as pl

    if frame.is_empty() or "setting" not in frame.columns:
        return pl.DataFrame()
    sub = frame.filter(pl.col("part") == "fig2")
    if sub.is_empty():
        return sub
    cols = [pl.col(f"cost_{c}_s").alias(c) for c in COST_COLUMNS]
    out = sub.select("workload", "utilisation", "setting", *cols, pl.col("write_cost_s").alias("total_s"))
    best = out.group_by("workload", "utilisation").agg(
        pl.col("setting").sort_by("total_s").first().alias("faster_setting")
    )
    return out.join(best, on=["workload", "utilisation"]).sort("workload", "utilisation", "setting")
