"""nandstack: an SSD/flash storage-stack simulator (Rust engine, Python front end).

Usage: `nandstack.run(set=["workload.requests=20000"], seed=1)["waf"]`; see `nandstack.run`.
"""

from ._api import ProgressCallback, Result, run
from ._core import (
    ConfigError,
    DeviceFullError,
    GeometryError,
    InvariantError,
    NandstackError,
    OutOfRangeError,
    TraceError,
    __version__,
)
from .config import default_config, load_config

__all__ = [
    "ConfigError",
    "DeviceFullError",
    "GeometryError",
    "InvariantError",
    "NandstackError",
    "OutOfRangeError",
    "ProgressCallback",
    "Result",
    "TraceError",
    "__version__",
    "default_config",
    "load_config",
    "run",
]
