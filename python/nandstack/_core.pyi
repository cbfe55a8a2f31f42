# Type stubs of the compiled module built from crates/nandstack-py (kept in sync by tests/test_stubs.py).
from typing import Callable

__version__: str
#: `pgo` for a profile-guided build (`make build-pgo`), else `release`.
__build__: str

class NandstackError(Exception):
    """Base class of every nandstack error."""

class ConfigError(NandstackError):
    """A config value is missing, unknown or invalid. Engine errors carry `key`."""

    key: str

class GeometryError(NandstackError):
    """The NAND geometry cannot be built."""

    field: str

class TraceError(NandstackError):
    """A trace line could not be parsed."""

    file: str
    line: int

class OutOfRangeError(NandstackError):
    """A request addresses space outside the device."""

class DeviceFullError(NandstackError):
    """The device ran out of free blocks."""

class InvariantError(NandstackError):
    """An internal invariant was violated (a bug)."""

class DeviceCommandError(NandstackError):
    """A device rejected a command (unsupported, or against its protocol)."""

class OutOfMemoryError(NandstackError, MemoryError):
    """Memory for a run could not be allocated (a NandstackError and a MemoryError)."""

    what: str
    bytes: int

def run(
    config_json: str,
    seed: int | None = None,
    verify: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
    series_csv: str | None = None,
) -> str:
    """Run one simulation from a JSON config; returns the report JSON. Releases the GIL while running.
    With `series_csv`, the time series is streamed to that CSV file instead of the report. An interrupt
    in the measured phase re-raises the exception with the partial report as its `partial_report`."""

def run_many(
    config_jsons: list[str],
    verify: bool = False,
    keep_last: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[str | NandstackError]:
    """Run several simulations as `run` runs each (the same reports); host programs that read the same
    reference streams run side by side, each stream generated once. One item per config, in order: the
    report JSON, or the engine's error as an exception object (not raised). `keep_last`: the last run
    keeps its aged device too (`keep_aged`). Ctrl-C stops every run and is raised."""

def default_config_toml() -> str:
    """The default config as commented TOML."""

def config_reference_markdown() -> str:
    """Markdown reference of every config key."""

def bench(name: str, quick: bool = False) -> str:
    """Run a built-in benchmark (GIL released); returns its report JSON."""

def validate_config(config_json: str) -> str:
    """Parse and validate a JSON config without running it (raises `ConfigError`/`GeometryError` naming
    the bad key); returns the effective config as JSON with every default filled in."""

def presets_json() -> str:
    """The presets: name, description and spec sheet of each, as JSON."""

def preset_toml(name: str) -> str:
    """A preset's config (TOML). Raises `ConfigError` for an unknown name."""

def trace_stats(path: str, format: str) -> str:
    """One pass over a block trace: counts, bytes, extent and time span, as JSON."""

def bench_host(quick: bool = False) -> str:
    """The host memory/swap model's benchmark (GIL released); returns its report JSON."""

def keep_aged(on: bool) -> None:
    """Keep the aged block or hybrid device of the runs that follow for a later run with the same
    aging (the sweep runner's groups; a few are kept, the least recently used leaving first); `False`
    (the default) keeps none."""

def forget_aged() -> None:
    """Drop the aged devices this process keeps (`keep_aged`)."""

def kswap_request_counts(path: str) -> str:
    """A kernel-swap capture's requests counted in Rust: `{"read": [[pages, n], ...], "write": [...],
    "sequential": [reads, writes], "discard_pages": n}` as JSON; raises for anything the Python reader
    might read otherwise."""

def kcswap_figures_json() -> str:
    """The kernel-zswap and kernel-zram figure lists (Rust's `kcswap`): `{"zswap": [...], "zram": [...],
    "bytes": [...]}` as JSON."""

def kswap_setup_json() -> str:
    """The kernel-swap captures' setup shared with Rust's `kswap::config`: `{"seed": …, "backend": …}` (the
    seed and `host.swap.backend`), as JSON."""

def ezswap_correlation(corpus_dir: str) -> str:
    """ezswap: the entropy-vs-compression-ratio correlation on the Silesia pages in `corpus_dir`, every
    compressor and both entropy samples, as JSON (GIL released)."""

def launch_correlation(workload_json: str, seed: int, max_pages: int) -> str:
    """ezswap: the paper's Fig. 5 and Fig. 6 correlations (leading-512-byte entropy against whole-page
    entropy and against the lzo ratio) on the pages of a `type = "launch"` workload table (`workload_json`,
    JSON) at run seed `seed`, at most `max_pages` pages; JSON back (GIL released)."""
