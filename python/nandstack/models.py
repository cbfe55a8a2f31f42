"""The other simulation models behind the same engine: the host memory/swap model (`run_host`,
docs/model-host.md) and the hybrid SLC/QLC SSD with its SLC-cache managers (`run_hybrid`, docs/hybrid.md).
Both take a config dict (their own schemas; unknown keys are errors naming the key) and return the report
as a dict. The GIL is released while they run; Ctrl-C raises `KeyboardInterrupt`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Callable

from . import _core

__all__ = ["hybrid_default_config", "run_host", "run_hybrid"]

Progress = Callable[[str, int, int], None]


def run_host(
    config: Mapping[str, Any],
    *,
    seed: int | None = None,
    verify: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run the host memory/swap model (processes, cgroups, LRU reclaim, swap, page cache) on a device."""
    return json.loads(_core.run_host(json.dumps(dict(config)), seed, verify, progress))


def run_hybrid(
    config: Mapping[str, Any],
    *,
    seed: int | None = None,
    verify: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run the hybrid SLC/QLC SSD with the SLC-cache manager named in `config["manager"]["kind"]`."""
    return json.loads(_core.run_hybrid(json.dumps(dict(config)), seed, verify, progress))


def hybrid_default_config() -> dict[str, Any]:
    """The hybrid simulation's default config with every key filled in."""
    return json.loads(_core.hybrid_default_config_json())
