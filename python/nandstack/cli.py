"""The `nandstack` command line: run, sweep, reproduce, results, bench, config, data, live.

Exit codes: 0 success, 2 usage or nandstack error (`error: <message>` on stderr, no traceback),
1 internal error (a bug: `error: internal error: ...`; `--debug` shows the traceback), 128 + the signal
when stopped by one (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP; see `_interrupt` for the deadline).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import _cli_data, _cli_experiments, _cli_live, _cli_results, _core, config
from . import _output as output
from ._api import Interrupted, Result
from ._api import run as api_run
from ._core import ConfigError
from ._interrupt import deadline_on_sigint, interrupt_exit_code, interrupt_message
from ._term import flatten, format_table, progress_bar

DEFAULT_OUT = Path("results") / "latest"
#: What `nandstack run` runs with neither a config file nor --preset (the README's main job).
DEFAULT_PRESET = "block-tlc-consumer"
EXIT_ERROR = 2
EXIT_INTERNAL = 1

#: Metrics shown first in the run summary, in this order (when present in the report).
SUMMARY_KEYS = (
    "waf",
    "host_write_bytes",
    "host_read_bytes",
    "flash_program_pages",
    "flash_read_pages",
    "flash_erases",
    "gc_migrated_pages",
    "erase_count.min",
    "erase_count.mean",
    "erase_count.max",
    "erase_count.stddev",
    "iops",
    "throughput_mb_per_s",
    "sim_seconds",
    "seed",
    "wall_seconds_precondition",
    "wall_seconds",
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    debug = bool(getattr(args, "debug", False))
    try:
        _cli_data.apply_data_flag(args)
        with deadline_on_sigint():
            return int(args.func(args) or 0)
    except _core.NandstackError as e:
        return _fail(str(e), debug)
    except MemoryError as e:  # nandstack.OutOfMemoryError is both; a plain one comes from Python code
        return _fail(str(e) or "out of memory", debug)
    except BrokenPipeError:  # stdout closed early, e.g. `nandstack config | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 1
    except OSError as e:
        where = f"{e.filename}: " if getattr(e, "filename", None) else ""
        return _fail(f"{where}{e.strerror or e}", debug)
    except KeyboardInterrupt:
        print(f"\n{interrupt_message()}", file=sys.stderr)
        return interrupt_exit_code()
    except Exception as e:  # a bug: say so in one line; --debug shows where
        _fail(
            f"internal error: {type(e).__name__}: {e} (a bug in nandstack; --debug shows the traceback)",
            debug,
        )
        return EXIT_INTERNAL


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nandstack",
        description="nandstack: an SSD/flash storage-stack simulator.",
        epilog="Run `nandstack <command> --help` for the options of a command.",
    )
    parser.add_argument(
        "--version", action="version", version=f"nandstack {_core.__version__} ({_core.__build__} build)"
    )
    parser.add_argument(
        "--debug", action="store_true", help="show the Python traceback of an error (before the command)"
    )
    commands = parser.add_subparsers(title="commands", dest="command", metavar="<command>", required=True)

    run = commands.add_parser(
        "run",
        help="run one simulation and write its report",
        description="Run one simulation of a whole stack (workload → host → device); print a summary and "
        "write summary.json, config.toml and timeseries.csv to --out. Without a config file or --preset it "
        f"runs the preset `{DEFAULT_PRESET}`.",
    )
    run.add_argument(
        "config",
        nargs="?",
        type=Path,
        help=f"TOML config file (default: the preset {DEFAULT_PRESET})",
    )
    run.add_argument(
        "--preset",
        metavar="NAME",
        help="run a named preset (device class + workload, see --list-presets); --set applies on top",
    )
    run.add_argument("--list-presets", action="store_true", help="list the presets and exit")
    run.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config value on a dotted path, e.g. --set device.ftl.gc.victim.policy=fifo "
        "--set workload.read_fraction=0.3 (repeatable; VALUE is read as TOML, else as a string)",
    )
    run.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"output directory (default: {DEFAULT_OUT}, replaced by each run); written atomically with "
        "a manifest.json listing every file's SHA-256",
    )
    run.add_argument(
        "--overwrite", action="store_true", help="replace an existing --out directory (refused otherwise)"
    )
    run.add_argument("--seed", type=int, help="override the config's seed")
    run.add_argument(
        "--trace",
        type=Path,
        metavar="PATH",
        help="replay a block trace in the measured phase (gz/bz2/xz/zst read transparently); needs --format",
    )
    run.add_argument(
        "--format",
        dest="trace_format",
        metavar="F",
        help="trace format: msr, blkparse, disksim, mqsim, ssdsim, fio, tencent, cloudphysics, systor17, "
        "heimdall, wiscsee, arc, hp_srt, u32_blocks (see docs/trace-formats.md)",
    )
    run.add_argument(
        "--lba",
        choices=("error", "wrap", "scale"),
        help="trace requests beyond the device: error (default), wrap, or scale the trace onto the device",
    )
    run.add_argument("--verify", action="store_true", help="check read-after-write versions and invariants")
    run.add_argument("--quiet", "-q", action="store_true", help="no progress and no summary table")
    record = run.add_argument_group("results database")
    record.add_argument(
        "--no-record", action="store_true", help="do not record the run in the results database"
    )
    record.add_argument(
        "--tag", dest="tags", action="append", default=[], metavar="TAG", help="tag (repeatable)"
    )
    record.add_argument("--label", metavar="TEXT", help="a label for the run")
    _cli_results.add_db_option(record)
    run.set_defaults(func=cmd_run)

    _cli_experiments.add_parsers(commands)
    _cli_results.add_parser(commands)
    _cli_data.add_parser(commands)
    _cli_live.add_parser(commands)

    bench = commands.add_parser(
        "bench", help="run a built-in benchmark", description="Run a built-in benchmark and print ops/s."
    )
    bench.add_argument(
        "name",
        nargs="?",
        default="all",
        help="benchmark name: ftl, timed, timed_queued, hybrid, compressed, host or all (default: all)",
    )
    bench.add_argument("--quick", action="store_true", help="short run (for smoke tests)")
    bench.add_argument("--json", action="store_true", help="print the raw JSON report")
    bench.set_defaults(func=cmd_bench)

    cfg = commands.add_parser(
        "config",
        help="print the default config or the config reference",
        description="Print the default config as commented TOML (default) or the reference of every key.",
    )
    which = cfg.add_mutually_exclusive_group()
    which.add_argument("--default", action="store_true", help="print the default config TOML (the default)")
    which.add_argument("--reference", action="store_true", help="print the config reference (Markdown)")
    cfg.set_defaults(func=cmd_config)
    _cli_data.add_data_flag(parser, commands)
    return parser


def trace_overrides(args: argparse.Namespace, table: str = "workload.trace", kind: bool = True) -> list[str]:
    """`--trace/--format/--lba` as `--set workload.trace.*` overrides (and `workload.kind = "trace"`
    unless `kind` is false)."""
    if args.trace is None:
        if args.trace_format or args.lba:
            raise ConfigError("--format and --lba apply to a trace: give --trace PATH too")
        return []
    if not args.trace_format:
        raise ConfigError("--trace needs --format (one of the formats listed in `nandstack run --help`)")
    out = [
        *(['workload.kind="trace"'] if kind else []),
        f"{table}.path={json.dumps(str(args.trace))}",
        f"{table}.format={json.dumps(args.trace_format)}",
    ]
    if args.lba:
        out.append(f"{table}.lba={json.dumps(args.lba)}")
    return out


def presets() -> list[dict[str, Any]]:
    """Every preset's name, description and spec sheet (`nandstack run --list-presets`)."""
    return json.loads(_core.presets_json())


def preset_config(name: str) -> dict[str, Any]:
    """A preset's config as a dict (raises `ConfigError` for an unknown name)."""
    from . import _toml

    return _toml.loads(_core.preset_toml(name))


def cmd_run(args: argparse.Namespace) -> int:
    if args.list_presets:
        print(format_table([(p["name"], p["description"]) for p in presets()]))
        return 0
    if args.preset and args.config:
        raise ConfigError("give a config file or --preset, not both")
    preset = args.preset or (None if args.config else DEFAULT_PRESET)
    base = preset_config(preset) if preset else None
    overrides = [*args.overrides, *trace_overrides(args)]
    if base is not None:
        effective = config.apply_overrides(base, overrides)
    else:
        effective = config.load_config(args.config, overrides)
    if args.trace is not None:  # --trace replaces the workload: other kinds' sections go
        for section in ("standin", "processes"):
            effective.get("workload", {}).pop(section, None)
    out: Path = args.out if args.out is not None else DEFAULT_OUT
    overwrite = args.overwrite or args.out is None
    from ._config_obj import config_hash

    info = {
        "nandstack_version": _core.__version__,
        "config_hash": config_hash(effective, args.seed),
        "command": "run",
    }
    interrupted = None
    with output.atomic_output_dir(out, overwrite=overwrite, info=info) as (tmp, meta):
        # The series streams into an anonymous file, linked into the folder once the run has ended.
        with progress_bar(args.quiet) as bar, output.staged_file(tmp, "timeseries.csv") as series:
            try:
                result = api_run(
                    effective,
                    seed=args.seed,
                    verify=args.verify,
                    progress=bar,
                    record=False,  # recorded below, once the run has finished, with source "cli"
                    series_csv=series,
                )
            except Interrupted as e:
                if e.result is None:
                    raise
                result, interrupted = e.result, e
        db_error = None
        if not args.no_record and interrupted is None:
            from .results import DatabaseError, ResultsDB

            try:  # a damaged database never costs the run's --out: reported after it is written
                ResultsDB(args.db).record(
                    result, source="cli", tags=args.tags, label=args.label, verify=args.verify
                )
            except DatabaseError as e:
                db_error = e
        meta["run_id"] = result.run_id
        meta["interrupted"] = interrupted is not None
        _write_run(tmp, result)
        # What this run publishes, named before the rename: a concurrent run may replace `out` after it.
        written = sorted({p.name for p in tmp.iterdir()} | {output.MANIFEST})
    if not args.quiet:
        print(format_table(summary_rows(result.summary)))
        spec = next((p.get("spec") for p in presets() if p["name"] == preset), None) if preset else None
        for line in human_summary(result.summary, spec, preset):
            print(line)
        print(f"wrote {', '.join(str(out / w) for w in written)}", file=sys.stderr)
        if result.run_id:
            print(
                f"recorded as run {result.run_id} (nandstack results show {result.run_id})", file=sys.stderr
            )
    if interrupted is not None:
        print(
            f'{interrupt_message()}: the partial run is in {out} (summary.json says "interrupted": true)',
            file=sys.stderr,
        )
        return interrupt_exit_code()
    if db_error is not None:
        return _fail(f"the run is in {out} but was not recorded: {db_error}", False)
    return 0


def _write_run(folder: Path, result: Result) -> None:
    """summary.json (without the time series), config.toml and, when the engine kept the series in
    memory, timeseries.csv (a streamed series is already there)."""
    summary = dict(result.summary)
    series = summary.pop("timeseries", None) or {}
    if series.get("rows"):
        (folder / "timeseries.csv").write_text(timeseries_csv(series), encoding="utf-8")
    (folder / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (folder / "config.toml").write_text(config.dumps(result.config), encoding="utf-8")


def timeseries_csv(series: dict[str, Any]) -> str:
    """The engine's `{columns, rows}` time series as CSV (empty cells for missing values)."""
    lines = [",".join(series["columns"])]
    for row in series["rows"]:
        lines.append(",".join("" if v is None else repr(float(v)) for v in row))
    return "\n".join(lines) + "\n"


def summary_rows(report: dict[str, Any]) -> list[tuple[str, Any]]:
    """The important metrics of a report, then every top-level latency figure, as (name, value) rows."""
    flat = flatten({k: v for k, v in report.items() if k not in ("config", "timeseries")})
    rows = [(key, flat[key]) for key in SUMMARY_KEYS if key in flat]
    for key, value in report.items():
        if "latency" in key and key not in SUMMARY_KEYS:
            rows += flatten(value, key + ".").items() if isinstance(value, dict) else [(key, value)]
    return rows


def _fmt_count(x: float) -> str:
    return f"{x / 1e6:.2f}M" if x >= 1e6 else (f"{x / 1e3:.1f}K" if x >= 1e3 else f"{x:.0f}")


def human_summary(report: dict[str, Any], spec: dict[str, Any] | None, preset: str | None) -> list[str]:
    """A few lines a person reads first: IOPS, MB/s, latency percentiles, WAF, and the drive class's
    spec sheet beside the measured figures."""
    lines = []
    device = report.get("device") or {}
    kind = device.get("kind", "block")
    what = f"preset {preset}" if preset else f"{kind} device"
    if report.get("iops") is not None:
        read_share = report.get("host_read_requests", 0) / max(1, report.get("requests", 1))
        lines.append(
            f"{what}: {_fmt_count(report['iops'])} IOPS ({read_share:.0%} reads), "
            f"{report.get('throughput_mb_per_s', 0.0):.0f} MB/s, WAF "
            + (f"{report['waf']:.2f}" if report.get("waf") is not None else "n/a")
        )
    else:
        lines.append(f"{what}: timing off; WAF " + (f"{report['waf']:.2f}" if report.get("waf") else "n/a"))
    for op in ("read", "write"):
        lat = report.get(f"{op}_latency_us")
        if lat and lat.get("count"):
            p50, p99, p999 = lat["p50"], lat["p99"], lat["p999"]
            lines.append(f"  {op} latency: p50 {p50:.0f} µs, p99 {p99:.0f} µs, p99.9 {p999:.0f} µs")
    host = report.get("host")
    if host:
        swap = host.get("swap", {})
        lines.append(f"  host: {swap.get('pswpout', 0)} pages swapped out, {swap.get('pswpin', 0)} in")
    if spec:
        figures = []
        if spec.get("random_read_iops"):
            figures.append(f"4K random read {_fmt_count(spec['random_read_iops'])} IOPS")
        if spec.get("random_write_iops"):
            figures.append(f"write {_fmt_count(spec['random_write_iops'])} IOPS")
        if spec.get("sequential_read_mb_per_s"):
            seq_r, seq_w = spec["sequential_read_mb_per_s"], spec.get("sequential_write_mb_per_s") or 0
            figures.append(f"sequential {seq_r:.0f}/{seq_w:.0f} MB/s")
        measured = _fmt_count(report["iops"]) + " IOPS" if report.get("iops") is not None else "n/a"
        lines.append(
            f"  spec sheet ({spec['drive']}, {spec['state']}): {', '.join(figures)} — measured here: "
            f"{measured} on this preset's workload (scaled device; see `nandstack run --list-presets`)"
        )
    return lines


def cmd_bench(args: argparse.Namespace) -> int:
    report = _core.bench(args.name, args.quick)
    if args.json:
        print(report)
        return 0
    results = json.loads(report)  # a list of results, one per benchmark (a single object is accepted too)
    results = results if isinstance(results, list) else [results]
    print("\n\n".join(format_table(flatten(r).items()) for r in results))
    print(f"\n(nandstack {_core.__version__}, {_core.__build__} build)")
    return 0


def cmd_config(args: argparse.Namespace) -> int:
    text = _core.config_reference_markdown() if args.reference else _core.default_config_toml()
    sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
    return 0


def _fail(message: str, debug: bool = False) -> int:
    if debug:
        traceback.print_exc()
    print(f"error: {message}", file=sys.stderr)
    return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
