"""nandstack: an SSD/flash storage-stack simulator (Rust engine, Python front end).

    import nandstack
    result = nandstack.run(set=["workload.requests=20000"], seed=1)
    result.waf, result.write_latency.p99, result.timeseries  # typed views; a polars DataFrame

`run` records every run in the results database (`nandstack.ResultsDB`; `record=False` to skip);
`Config` is a validated config; `workloads` builds named workloads; `sweep` runs parameter grids;
`experiments` holds the reproducible experiments behind `nandstack reproduce`. See docs/python.md.
"""

from . import workloads
from ._api import Interrupted, ProgressCallback, Result, run
from ._config_obj import Config, config_hash
from ._core import (
    ConfigError,
    DeviceCommandError,
    DeviceFullError,
    GeometryError,
    InvariantError,
    NandstackError,
    OutOfMemoryError,
    OutOfRangeError,
    TraceError,
    __version__,
)
from ._summary import Device, Latency
from .config import default_config, load_config
from .data import DataError
from .results import DatabaseError, ResultsDB

__all__ = [
    "Config",
    "ConfigError",
    "DataError",
    "DatabaseError",
    "Device",
    "DeviceCommandError",
    "DeviceFullError",
    "GeometryError",
    "Interrupted",
    "InvariantError",
    "Latency",
    "NandstackError",
    "OutOfMemoryError",
    "OutOfRangeError",
    "ProgressCallback",
    "Result",
    "ResultsDB",
    "TraceError",
    "__version__",
    "config_hash",
    "default_config",
    "load_config",
    "run",
    "workloads",
]
