#!/usr/bin/env python3
"""Record the figures of every preset and of the host-model experiments, and compare two recordings byte
for byte: the proof that a refactoring moved code without changing behaviour.

    python tools/identical.py record DIR [--fast]     # run everything, write the figures to DIR
    python tools/identical.py compare BASE NEW        # byte-compare two recordings (first differences)
    python tools/identical.py check BASE [--fast]     # record into a temporary folder, compare with BASE
    ... compare|check ... --ignore KEY                # drop JSON key KEY at any depth on both sides

What is recorded (run with the python whose `nandstack` is the build under test):
- every preset's `summary.json` (`nandstack run --preset NAME`);
- `reproduce kernel-swap`, `kernel-zswap`, `kernel-zram` (full) and `diss`, `znswap`, `ezswap` (`--quick`):
  every CSV table and `report.json`.

Left out because they are wall-clock or host-specific, not figures: every key named `wall_*` at any depth
(run time, rates per wall second, CPU seconds), and in `report.json` `date`, `version` and `git_commit`.
Plots (PNG/SVG) are drawn from the CSV tables and are not compared.

`--ignore KEY` (repeatable) compares JSON files without KEY at any depth, for keys a change adds on
purpose and names in its commit message (a new config key echoed in every summary, and the config hashes
that change with it; a new report key).

`--fast` records the presets and `kernel-swap` only (about 3 minutes); the full set about 6–11 minutes
(docs/testing.md, "Byte-identical figures across a refactoring").
"""

from __future__ import annotations

import argparse
import difflib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KERNEL = ["kernel-swap", "kernel-zswap", "kernel-zram"]
QUICK = ["diss", "znswap", "ezswap"]
REPORT_DROPPED = {"date", "version", "git_commit"}


def _strip_wall(value):
    """The value without wall-clock keys (`wall_*` at any depth)."""
    if isinstance(value, dict):
        return {k: _strip_wall(v) for k, v in value.items() if not k.startswith("wall_")}
    if isinstance(value, list):
        return [_strip_wall(v) for v in value]
    return value


def _write_json(value, path: Path) -> None:
    path.write_text(json.dumps(value, indent=1, sort_keys=True) + "\n")


def _nandstack(*args: str) -> None:
    cmd = [sys.executable, "-m", "nandstack", *args]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"identical: `{' '.join(cmd)}` failed ({done.returncode}):\n{done.stderr[-3000:]}")


def _presets() -> list[str]:
    out = subprocess.run(
        [sys.executable, "-m", "nandstack", "run", "--list-presets"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def record(dest: Path, fast: bool) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="identical-") as tmp:
        work = Path(tmp)
        for name in _presets():
            t0 = time.monotonic()
            _nandstack("run", "--preset", name, "--out", str(work / name), "--no-record", "--quiet")
            summary = json.loads((work / name / "summary.json").read_text())
            (dest / "presets").mkdir(exist_ok=True)
            _write_json(_strip_wall(summary), dest / "presets" / f"{name}.json")
            print(f"preset {name}: {time.monotonic() - t0:.1f} s", flush=True)
        experiments = [(e, False) for e in (KERNEL[:1] if fast else KERNEL)]
        experiments += [] if fast else [(e, True) for e in QUICK]
        for name, quick in experiments:
            t0 = time.monotonic()
            out = work / f"reproduce-{name}"
            _nandstack(
                "reproduce",
                name,
                "--out",
                str(out),
                "--no-record",
                "--quiet",
                *(["--quick"] if quick else []),
            )
            target = dest / "reproduce" / name
            target.mkdir(parents=True, exist_ok=True)
            for csv in sorted(out.glob("*.csv")):
                shutil.copyfile(csv, target / csv.name)
            report = json.loads((out / "report.json").read_text())
            report = {k: v for k, v in report.items() if k not in REPORT_DROPPED}
            _write_json(_strip_wall(report), target / "report.json")
            print(f"reproduce {name}{' --quick' if quick else ''}: {time.monotonic() - t0:.1f} s", flush=True)


def _without(value, keys: frozenset[str]):
    """`value` without the JSON keys `keys` at any depth."""
    if isinstance(value, dict):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_without(v, keys) for v in value]
    return value


def _bytes(path: Path, ignore: frozenset[str]) -> bytes:
    """The file's bytes; a JSON file re-serialised without the `ignore` keys when there are any."""
    raw = path.read_bytes()
    if not ignore or path.suffix != ".json":
        return raw
    return (json.dumps(_without(json.loads(raw), ignore), indent=1, sort_keys=True) + "\n").encode()


def compare(base: Path, new: Path, max_lines: int = 30, ignore: frozenset[str] = frozenset()) -> bool:
    """True when every file of `new` equals `base`'s byte for byte (and no file is missing on either side
    among the parts `new` recorded); prints the first differences otherwise. JSON keys in `ignore` are
    dropped at any depth on both sides first."""
    new_files = {p.relative_to(new) for p in new.rglob("*") if p.is_file()}
    base_files = {p.relative_to(base) for p in base.rglob("*") if p.is_file()}
    recorded_parts = {p.parts[:2] if p.parts[0] == "reproduce" else p.parts[:1] for p in new_files}
    base_in_parts = {
        p for p in base_files if (p.parts[:2] if p.parts[0] == "reproduce" else p.parts[:1]) in recorded_parts
    }
    same = True
    for missing in sorted(base_in_parts - new_files):
        print(f"MISSING in {new}: {missing}")
        same = False
    for extra in sorted(new_files - base_files):
        print(f"EXTRA in {new}: {extra}")
        same = False
    for rel in sorted(new_files & base_files):
        a, b = _bytes(base / rel, ignore), _bytes(new / rel, ignore)
        if a == b:
            continue
        same = False
        print(f"DIFFERS: {rel}")
        diff = difflib.unified_diff(
            a.decode(errors="replace").splitlines(),
            b.decode(errors="replace").splitlines(),
            "before",
            "after",
            n=1,
        )
        for i, line in enumerate(diff):
            if i >= max_lines:
                print("  ...")
                break
            print("  " + line[:200])
    compared = len(new_files & base_files)
    ignored = f", ignoring {', '.join(sorted(ignore))}" if ignore else ""
    print(f"{'IDENTICAL' if same else 'DIFFERENT'}: {compared} files compared ({base} vs {new}{ignored})")
    return same


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    rec = sub.add_parser("record", help="run everything and write the figures to DIR")
    rec.add_argument("dir", type=Path)
    rec.add_argument("--fast", action="store_true", help="presets and kernel-swap only")
    cmp_ = sub.add_parser("compare", help="byte-compare two recordings")
    cmp_.add_argument("base", type=Path)
    cmp_.add_argument("new", type=Path)
    chk = sub.add_parser("check", help="record into a temporary folder and compare with BASE")
    chk.add_argument("base", type=Path)
    chk.add_argument("--fast", action="store_true", help="presets and kernel-swap only")
    chk.add_argument("--keep", type=Path, help="record into this folder instead of a temporary one")
    for p in (cmp_, chk):
        p.add_argument("--ignore", action="append", default=[], metavar="KEY", help="drop JSON key KEY")
    args = parser.parse_args()
    ignore = frozenset(getattr(args, "ignore", []))
    t0 = time.monotonic()
    if args.cmd == "record":
        record(args.dir, args.fast)
        print(f"recorded in {time.monotonic() - t0:.0f} s")
    elif args.cmd == "compare":
        sys.exit(0 if compare(args.base, args.new, ignore=ignore) else 1)
    else:
        with tempfile.TemporaryDirectory(prefix="identical-new-") as tmp:
            dest = args.keep or Path(tmp)
            record(dest, args.fast)
            same = compare(args.base, dest, ignore=ignore)
        print(f"checked in {time.monotonic() - t0:.0f} s")
        sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
