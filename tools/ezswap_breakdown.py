#!/usr/bin/env python3
"""Where ezswap's launch time goes against zswap's on the paper platform (claim E1b), one seed: the
launch time, the compression CPU time, the device queue waits and the file and swap read requests of
both, and E1b again with compression made free (`host.compression.cpu_mhz` = 1e9: a diagnostic, not a
platform difference).

    python tools/ezswap_breakdown.py [--seed 42]
"""

from __future__ import annotations

import argparse
import copy

from nandstack import _api
from nandstack.experiments import _ezswap_platform, ezswap


def task(name: str, seed: int):
    """The full plan's paper-platform run of `name` at 14 apps, five passes (as `ezswap.tasks`)."""
    return ezswap.run_task(False, name, 14, 5, seed, "paper", _ezswap_platform.PAPER_KEYS)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=42, help="a paper-platform seed (42-51)")
    a = ap.parse_args()
    launch = {}
    print(
        "| compression | config | launch s | compress ms | queue wait s | file read requests "
        "| file pages read | swap read requests |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for free in (False, True):
        for name in ("zswap", "ezswap"):
            cfg = copy.deepcopy(task(name, a.seed).config)
            if free:
                cfg["host"].setdefault("compression", {})["cpu_mhz"] = 1e9
            r = _api.run(cfg, record=False)
            h = r.summary["host"]
            launch[free, name] = ezswap.figures_of(r)["launch_s"]
            print(
                f"| {'free' if free else 'lzo'} | {name} | {launch[free, name]:.3f} | "
                f"{h['zswap']['compress_ms']:.0f} | {h['block_queue']['wait_ms'] / 1e3:.1f} | "
                f"{h['file']['read_requests']:,} | {h['file']['read_pages']:,} | "
                f"{h['swap']['read_requests']:,} |"
            )
    for free in (False, True):
        e1b = 100 * (launch[free, "ezswap"] / launch[free, "zswap"] - 1)
        print(f"E1b with {'free compression' if free else 'lzo'}: {e1b:+.1f} %")


if __name__ == "__main__":
    main()
