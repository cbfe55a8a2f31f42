"""`nandstack results`: list, filter, show, compare and export the runs in the results database."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ._term import format_frame, format_table

DEFAULT_LIMIT = 50


#: The options of `nandstack results` and of its subcommands, with their defaults. They may be given
#: before or after the subcommand (`results --db X export F` = `results export F --db X`), so the
#: parsers leave them unset (`argparse.SUPPRESS`) and each command fills in the defaults; an option the
#: subcommand does not take is an error wherever it stands (never silently ignored).
SHARED_DEFAULTS: dict[str, Any] = {
    "db": None,
    "where": None,
    "experiment": None,
    "sweep": None,
    "tag": None,
    "label": None,
    "columns": None,
    "limit": DEFAULT_LIMIT,
}
_FILTERS = {"db", "where", "experiment", "sweep", "tag", "label"}
#: Which shared options each subcommand takes (`None`: `nandstack results` without a subcommand).
ACCEPTS: dict[str | None, set[str]] = {
    None: set(SHARED_DEFAULTS),
    "list": set(SHARED_DEFAULTS),
    "export": _FILTERS,
    "show": {"db"},
    "compare": {"db"},
    "metrics": {"db"},
    "info": {"db"},
    "verify": set(),
}


def add_db_option(parser: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    parser.add_argument(
        "--db",
        type=Path,
        metavar="PATH",
        default=argparse.SUPPRESS if suppress else None,
        help="results database file (default: $NANDSTACK_DB, else $XDG_DATA_HOME/nandstack/results.duckdb, "
        "else ~/.local/share/nandstack/results.duckdb)",
    )


def _filters() -> argparse.ArgumentParser:
    """The filter options shared by `results`, `results list` and `results export`."""
    parent = argparse.ArgumentParser(add_help=False, argument_default=argparse.SUPPRESS)
    group = parent.add_argument_group("filters")
    group.add_argument(
        "--where",
        metavar="SQL",
        help="SQL condition over the `results` view (metric and run columns), e.g. --where 'waf > 3' "
        'or --where "iops > 1e5 AND seed = 1"',
    )
    group.add_argument("--experiment", metavar="NAME", help="only runs of this experiment")
    group.add_argument("--sweep", metavar="NAME", help="only runs of this sweep")
    group.add_argument("--tag", metavar="TAG", help="only runs carrying this tag")
    group.add_argument("--label", metavar="LABEL", help="only runs with this label")
    add_db_option(parent, suppress=True)
    return parent


def settle(args: argparse.Namespace) -> argparse.Namespace:
    """Check the shared options against the subcommand and fill in the defaults of those not given."""
    from ._core import ConfigError

    command = getattr(args, "results_command", None)
    accepted = ACCEPTS[command]
    given = sorted(k for k in SHARED_DEFAULTS if k in vars(args) and k not in accepted)
    if given:
        flags = ", ".join("--" + k for k in given)
        where = f"nandstack results {command}"
        raise ConfigError(f"{flags} does not apply to `{where}` (see `{where} --help`)")
    for key, default in SHARED_DEFAULTS.items():
        if key not in vars(args):
            setattr(args, key, default)
    return args


def add_parser(commands: Any) -> None:
    filters = _filters()
    listing = argparse.ArgumentParser(add_help=False, argument_default=argparse.SUPPRESS)
    listing.add_argument(
        "--columns",
        metavar="A,B,...",
        help="columns to show (default: run_id, created_at, source, experiment/sweep, label, waf, iops, "
        "latency p99s, wall_seconds)",
    )
    listing.add_argument("--limit", type=int, help=f"newest N runs (default {DEFAULT_LIMIT}; 0 = all)")
    results = commands.add_parser(
        "results",
        help="list, filter, compare and export recorded runs",
        description="The results database: every run of `nandstack run`, `sweep` and `reproduce` and of "
        "nandstack.run() (unless --no-record / record=False). Without a subcommand, lists the newest runs.",
        parents=[filters, listing],
        epilog="Examples: nandstack results --where 'waf > 3' --experiment gc-policies-vs-op; "
        "nandstack results compare 3fa2 91bc; nandstack results export runs.parquet --sweep demo",
    )
    results.set_defaults(func=cmd_list)
    sub = results.add_subparsers(title="subcommands", dest="results_command", metavar="<subcommand>")
    lst = sub.add_parser(
        "list",
        help="list runs (the default)",
        description="List recorded runs, newest first, optionally filtered.",
        parents=[filters, listing],
    )
    lst.set_defaults(func=cmd_list)

    show = sub.add_parser("show", help="print one run's summary", description="Print one run's summary.")
    show.add_argument("run_id", help="run id (a unique prefix is enough)")
    show.add_argument("--json", action="store_true", help="print the full report JSON (with the config)")
    show.add_argument("--config", action="store_true", help="print the run's effective config as TOML")
    show.add_argument(
        "--timeseries", type=Path, metavar="FILE", help="write the time series (.csv or .parquet)"
    )
    add_db_option(show, suppress=True)
    show.set_defaults(func=cmd_show)

    compare = sub.add_parser(
        "compare",
        help="compare runs side by side",
        description="Metrics of several runs side by side, after the config keys that differ between them.",
    )
    compare.add_argument("run_ids", nargs="+", metavar="RUN_ID", help="two or more run ids (prefixes)")
    compare.add_argument("--metrics", metavar="A,B,...", help="metrics to show (default: all present)")
    add_db_option(compare, suppress=True)
    compare.set_defaults(func=cmd_compare)

    export = sub.add_parser(
        "export",
        help="export runs to CSV or Parquet",
        description="Write the filtered runs (every metric column, params and config JSON) to a file.",
        parents=[filters],
    )
    export.add_argument("path", type=Path, help="output file: .parquet for Parquet, anything else CSV")
    export.set_defaults(func=cmd_export)

    metrics = sub.add_parser("metrics", help="list the metric columns", description="List metric columns.")
    add_db_option(metrics, suppress=True)
    metrics.set_defaults(func=cmd_metrics)

    verify = sub.add_parser(
        "verify",
        help="check output folders (complete, or an incomplete run)",
        description="Check folders written by `nandstack run --out` or `nandstack reproduce`: complete when "
        "manifest.json lists exactly the files present with matching SHA-256; a folder without a manifest "
        "is an incomplete run. Hidden `.NAME.tmp-*` siblings are runs in progress or killed ones (removed by "
        "the next run into NAME). Exit code 1 when any folder is not complete.",
    )
    verify.add_argument("folders", nargs="+", type=Path, metavar="DIR", help="output folders")
    verify.set_defaults(func=cmd_verify)

    info = sub.add_parser("info", help="database path, run count and schema", description="Database facts.")
    add_db_option(info, suppress=True)
    info.set_defaults(func=cmd_info)


def _db(args: argparse.Namespace) -> Any:
    from .results import ResultsDB

    return ResultsDB(settle(args).db)


def _filter_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "where": args.where,
        "experiment": args.experiment,
        "sweep": args.sweep,
        "tag": args.tag,
        "label": args.label,
    }


def cmd_list(args: argparse.Namespace) -> int:
    db = _db(args)
    if args.columns:
        columns = [c.strip() for c in args.columns.split(",") if c.strip()]
    else:
        from .results.db import DEFAULT_METRICS

        names = set(db.metric_names())
        columns = ["run_id", "created_at", "source", "experiment", "sweep", "label"]
        columns += [m for m in DEFAULT_METRICS if m in names]
    frame = db.runs(columns=columns, limit=args.limit or None, **_filter_kwargs(args))
    if frame.is_empty():
        print(f"no runs match (database: {db.path})", file=sys.stderr)
        return 0
    for column in ("experiment", "sweep", "label", "source"):  # drop all-empty identity columns
        if column in frame.columns and args.columns is None and frame[column].null_count() == frame.height:
            frame = frame.drop(column)
    if "created_at" in frame.columns:
        frame = frame.with_columns(frame["created_at"].dt.strftime("%Y-%m-%d %H:%M:%S"))
    print(format_frame(frame.columns, frame.iter_rows(), max_width=72))
    total = db.count()
    shown = f"{frame.height} of {total} runs" if frame.height < total else f"{total} runs"
    print(f"{shown} in {db.path}", file=sys.stderr)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from . import config

    db = _db(args)
    result = db.result(args.run_id)
    if args.json:
        print(result.to_json())
    elif args.config:
        sys.stdout.write(config.dumps(result.config))
    else:
        from .cli import summary_rows

        print(format_table([("run_id", result.run_id), ("config_hash", result.config_hash)]))
        print(format_table(summary_rows(result.summary)))
    if args.timeseries is not None:
        series = result.timeseries
        args.timeseries.parent.mkdir(parents=True, exist_ok=True)
        if args.timeseries.suffix.lower() in (".parquet", ".pq"):
            series.write_parquet(args.timeseries)
        else:
            series.write_csv(args.timeseries)
        print(f"wrote {args.timeseries} ({series.height} rows)", file=sys.stderr)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    db = _db(args)
    metrics = [m.strip() for m in args.metrics.split(",")] if args.metrics else None
    frame = db.compare(args.run_ids, metrics)
    print(format_frame(frame.columns, frame.iter_rows(), max_width=40))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    db = _db(args)
    rows = db.export(args.path, **_filter_kwargs(args))
    print(f"wrote {rows} runs to {args.path}", file=sys.stderr)
    return 0


def cmd_metrics(args: argparse.Namespace) -> int:
    for name in _db(args).metric_names():
        print(name)
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from ._output import verify_manifest

    settle(args)
    bad = 0
    for folder in args.folders:
        if not folder.is_dir():
            print(f"{folder}: not a folder", file=sys.stderr)
            bad += 1
            continue
        problems = _manifest_shape(folder)
        if not problems:
            try:
                problems = verify_manifest(folder)
            except (OSError, ValueError, TypeError, KeyError, AttributeError) as e:
                problems = [f"{folder}: cannot check the folder ({type(e).__name__}: {e})"]
        for p in problems:
            print(p)
        if not problems:
            print(f"{folder}: complete")
        bad += bool(problems)
    return 1 if bad else 0


#: Largest manifest `results verify` reads (a real one lists a few files: a few KiB).
MAX_MANIFEST_BYTES = 1 << 20


def _manifest_shape(folder: Path) -> list[str]:
    """Problems with the manifest file itself (too big, not JSON, wrong shape): one line naming it, so
    that a malformed manifest is a problem of its folder, never an internal error. Empty when its shape
    is right (or it is missing, which `verify_manifest` reports)."""
    import json

    from ._output import MANIFEST

    man = folder / MANIFEST
    if not man.is_file():
        return []
    try:
        with open(man, "rb") as f:
            data = f.read(MAX_MANIFEST_BYTES + 1)
    except OSError as e:
        return [f"{man}: cannot be read ({e.strerror or e})"]
    if len(data) > MAX_MANIFEST_BYTES:
        return [f"{man}: larger than {MAX_MANIFEST_BYTES >> 20} MiB: not a manifest nandstack wrote"]
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        return [f"{man}: unreadable manifest (not JSON: {str(e)[:200]})"]
    files = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(files, dict):
        return [f'{man}: malformed manifest: no "files" table of file name to {{"sha256": ...}}']
    for name, entry in files.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str):
            return [f'{man}: malformed manifest: entry "{name[:200]}" has no "sha256" text']
        if name.startswith("/") or ".." in Path(name).parts:
            return [f'{man}: malformed manifest: entry "{name[:200]}" points outside the folder']
    return []


def cmd_info(args: argparse.Namespace) -> int:
    from .results.db import SCHEMA, SCHEMA_VERSION

    db = _db(args)
    facts = [("path", str(db.path)), ("runs", db.count()), ("schema_version", SCHEMA_VERSION)]
    print(format_table(facts))
    print(SCHEMA.strip())
    return 0
