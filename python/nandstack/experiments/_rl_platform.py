"""The RL SLC-cache paper's platform beside today's (issue 37): the runs that differ from today's and the
per-seed spread of R1.

The experiment's device already is the paper's simulator as §4 and Table 1 state it (one 32 GB QLC chip,
2,138 blocks, 16 KiB pages, 256 / 1,024 pages per SLC / QLC block, Table 1's times counted per operation,
3% over-provisioning, 144 KB write buffer, reclaim below 5 free blocks per region, ε = 0.07, a step of 8
SLC blocks, Table 3's 1,296 states). What the paper states and today's platform does not have is the
agent's **4-bit Q-table** (§3.2: "the Q-table size is 5,186 bytes" ≈ 1,296 states × 8 actions × 4 bits;
this agent has 9 actions — Table 3's 9 previous-action bins — so its 4-bit table is 5,832 bytes):
the paper platform runs the agent with `q_bits = 4` (the grid: `hybrid/managers/qquant.rs`, derived from
Eq. 1's bound, no free scale). DWA, UST, QLC-only and Static do not use the table, so their runs are
today's. The ablation `paper_nearest` rounds each update to the nearest grid value instead of
stochastically (the paper does not say how it rounds).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

    from ..sweep.spec import Task

#: The paper platform's agent: the 4-bit table (§3.2), stochastic rounding.
PAPER_RL: dict[str, Any] = {"device.manager.rl.q_bits": 4}
#: The ablation: the same table, each update rounded to the nearest grid value.
NEAREST_RL: dict[str, Any] = {"device.manager.rl.q_bits": 4, "device.manager.rl.q_rounding": "nearest"}
SOURCE = "paper §3.2 (Q-table of 5,186 bytes ≈ 1,296 states × 8 actions × 4 bits)"
#: The task parts this module adds (normalised, like `pretrained`, by today's QLC-only runs).
PARTS = ("paper", "paper_pretrained", "paper_nearest")


def tasks(
    device: dict[str, Any],
    standin: Callable[[str], dict[str, Any]],
    make: Callable[..., Task],
    plan: dict[str, Any],
    seeds: Sequence[int],
    quick: bool,
) -> list[Task]:
    """RL with the 4-bit table on every stand-in and (pre-trained) on the unseen workloads; the nearest-
    rounding ablation on the stand-ins (full run only)."""
    out = []
    variants = [("paper", PAPER_RL)] + ([] if quick else [("paper_nearest", NEAREST_RL)])
    for seed in seeds:
        for part, over in variants:
            for name in plan["standins"]:
                overrides = {**device, **over, "device.manager.kind": "rl", "workload": standin(name)}
                out.append(make(overrides, {"part": part, "workload": name, "manager": "rl", "seed": seed}))
        for name in plan["unseen"]:
            overrides = {
                **device,
                **PAPER_RL,
                "device.manager.kind": "rl",
                "workload": standin(name),
                "pretrain": [standin(w) for w in plan["pretrain_on"]],
            }
            params = {"part": "paper_pretrained", "workload": name, "manager": "rl", "seed": seed}
            out.append(make(overrides, params))
    return out


def with_rl_from(means: pl.DataFrame, part_means: pl.DataFrame) -> pl.DataFrame:
    """The stand-in means with the RL rows replaced by `part_means`' (a platform that changes only RL)."""
    import polars as pl

    if part_means.is_empty():
        return part_means
    rl = part_means.filter(pl.col("manager") == "rl").select(means.columns)
    return pl.concat([means.filter(pl.col("manager") != "rl"), rl], how="vertical_relaxed")


def per_seed(
    frame: pl.DataFrame,
    part: str,
    measure: Callable[[pl.DataFrame], float | None],
    mean_table: Callable[[pl.DataFrame, str], pl.DataFrame],
) -> list[tuple[int, float | None]]:
    """`measure(means)` for each seed alone: RL's rows from `part`, the others from today's stand-ins
    (`mean_table(frame, part)`: the experiment's per-workload means)."""
    import polars as pl

    out = []
    for seed in sorted(frame.filter(pl.col("part") == part)["seed"].unique().to_list()):
        one = frame.filter(pl.col("seed") == seed)
        means = mean_table(one, "standin")
        if part != "standin":
            means = with_rl_from(means, mean_table(one, part))
        out.append((seed, measure(means)))
    return out
