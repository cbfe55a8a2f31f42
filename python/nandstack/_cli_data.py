"""`nandstack data`: each data set, where it was found, whether it verifies, how to get it; and the
global `--data DIR` flag (docs/data.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

DATA_HELP = "folder holding the data sets (block/, memory/, compress/, kernel-*/); beats $NANDSTACK_DATA"


def add_data_flag(parser: argparse.ArgumentParser, commands: Any) -> None:
    """`--data DIR` before or after any command."""
    parser.add_argument("--data", type=Path, metavar="DIR", help=DATA_HELP)
    for sub in dict.fromkeys(commands.choices.values()):
        sub.add_argument("--data", type=Path, metavar="DIR", default=argparse.SUPPRESS, help=DATA_HELP)


def apply_data_flag(args: argparse.Namespace) -> None:
    if getattr(args, "data", None) is not None:
        from . import data

        data.set_root(args.data)


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "data",
        help="list the data sets: where each is, whether it verifies, how to get it",
        description="List every data set the experiments use (block and memory traces, the Silesia "
        "corpus, the real-kernel captures): where it was found, whether its files are all there (and with "
        "--verify, whether their SHA-256 match the registry), and how to get it. Exit 0 when every set is "
        "found whole (and verifies, with --verify), else 3. See docs/data.md.",
    )
    p.add_argument("--verify", action="store_true", help="check every file's SHA-256 (cached by size+mtime)")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.add_argument(
        "--fetch",
        nargs="*",
        metavar="NAME",
        help="download the public data sets NAME (default: all public ones) from their source "
        "repositories into --data DIR / $NANDSTACK_DATA (else the cache), checking SHA-256",
    )
    p.set_defaults(func=cmd_data)


EXIT_INCOMPLETE = 3


def cmd_data(args: argparse.Namespace) -> int:
    from . import data

    if args.fetch is not None:
        names = args.fetch or [n for n in data.NAMES if data.public(n)]
        unknown = [n for n in names if n not in data.NAMES]
        if unknown:
            raise data.DataError(f"unknown data set(s) {', '.join(unknown)}; known: {', '.join(data.NAMES)}")
        root = data.fetch(names)
        print(f"fetched {', '.join(names)} into {root}", file=sys.stderr)
    rows = data.statuses(verify=args.verify)
    if args.json:
        print(json.dumps([r.as_dict() for r in rows], indent=1))
    else:
        for r in rows:
            _print(r)
    whole = all(r.location.path is not None and not r.missing and r.verified is not False for r in rows)
    return 0 if whole else EXIT_INCOMPLETE


def _print(r: Any) -> None:
    from . import data

    loc = r.location
    total = len(data.registry()[r.name]["files"])
    if loc.path is None:
        state = "MISSING"
        where = "looked in " + ", ".join(str(t) for t in loc.tried)
    else:
        where = f"{loc.path} (via {loc.origin}{', your own folder' if loc.user_folder else ''})"
        present = total - len(r.missing)
        state = f"{present}/{total} files"
        if r.verified is True:
            state += ", verified"
        elif r.verified is False:
            state += f", {len(r.bad)} do NOT match their SHA-256: {', '.join(r.bad[:5])}"
        if r.missing:
            state += f"; missing: {', '.join(r.missing[:5])}{' …' if len(r.missing) > 5 else ''}"
    print(f"{r.name:<13} {state}\n  {r.title}\n  where: {where}")
    if loc.path is None or r.missing or r.verified is False:
        print(f"  how to get it: {r.get}")
