"""`nandstack live --compare`: the host model on the program the live run ran (memtouch with the same
arguments), on the same device, with the live run's memory limit and swap; its figures beside the
kernel's (the same figures the kernel-swap experiment compares: pages out/in, pages per request)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._core import ConfigError
from .experiments.kernel_swap import memtouch_workload

PATTERNS = ("uniform", "normal", "seq", "hot")


def memtouch_args(argv: list[str]) -> dict[str, Any]:
    """memtouch's `PAGES OPS PATTERN WRITE_PCT SEED` as the host model's workload (ConfigError when the
    program is not memtouch or its arguments are not ones the model knows)."""
    if not argv or Path(argv[0]).name.split("-")[0] != "memtouch":
        raise ConfigError(
            "--compare needs a program the host model knows: memtouch PAGES OPS PATTERN WRITE_PCT SEED"
        )
    if len(argv) != 6:
        raise ConfigError(
            "--compare: memtouch with exactly PAGES OPS PATTERN WRITE_PCT SEED (default content)"
        )
    _, pages, ops, pattern, write_pct, seed = argv
    if pattern not in PATTERNS:
        raise ConfigError(f"--compare: memtouch pattern `{pattern}` is not one of {', '.join(PATTERNS)}")
    try:
        return memtouch_workload(pages, ops, pattern, write_pct, seed)
    except ValueError:
        raise ConfigError(
            f"--compare: memtouch arguments {argv[1:]} are not numbers where numbers go"
        ) from None


def model_config(
    cfg: dict[str, Any], argv: list[str], limit_mib: int, swap_mib: int, queue: dict[str, Any]
) -> dict[str, Any]:
    """The host run of the live program: the same device, a cgroup with the same limit, swap of the same
    size at the device's start with the loop device's queue (`loop_queue`), the kernel-swap captures'
    reclaim costs."""
    solid = bool(queue["swap_solid_state"])
    model = {k: v for k, v in cfg.items() if k in ("seed", "device")}
    model["workload"] = {
        "kind": "host",
        "processes": [{"name": "memtouch", "cgroup": "live", "workload": memtouch_args(argv)}],
    }
    model["host"] = {
        "ram_mib": 2048,
        "cpus": 2,
        "swap": {"size_mib": swap_mib, "solid_state": solid},
        "readahead": {"policy": "vma" if solid else "cluster"},
        "costs": {"reclaim_scan_ns": 1000, "reclaim_write_ns": 3300},
        "cgroups": [{"name": "live", "limit_mib": limit_mib}],
    }
    if queue.get("max_request_kib"):
        model["host"]["swap"]["max_request_kib"] = int(queue["max_request_kib"])
    return model


def loop_queue(loop: str | None) -> dict[str, Any]:
    """What the kernel's block layer knows of the loop device: non-rotational (SWP_SOLIDSTATE) and its
    largest request (`max_sectors_kb`), both given to the model."""
    out: dict[str, Any] = {"swap_solid_state": False, "max_request_kib": None}
    if not loop:
        return out
    q = Path(f"/sys/block/{Path(loop).name}/queue")
    try:
        out["swap_solid_state"] = (q / "rotational").read_text().strip() == "0"
        out["max_request_kib"] = int((q / "max_sectors_kb").read_text())
    except (OSError, ValueError):
        pass
    return out


def compare(
    cfg: dict[str, Any],
    argv: list[str],
    limit_mib: int,
    swap_mib: int,
    queue: dict[str, Any],
    kernel: dict[str, float],
) -> dict[str, Any]:
    """Run the model; its figures, the kernel's and the model/kernel ratios."""
    from ._api import run as api_run
    from .experiments.kernel_swap import model_figures

    result = api_run(model_config(cfg, argv, limit_mib, swap_mib, queue), record=False)
    figures = model_figures(result.summary)
    ratios = {
        k: round(figures[k] / kernel[k], 4) if kernel.get(k) else None
        for k in ("pswpout", "pswpin", "write_pages_mean", "read_pages_mean")
    }
    return {**figures, "kernel": kernel, "model_over_kernel": ratios, "queue": queue}
