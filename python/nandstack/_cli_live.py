"""`nandstack live`: run a real program under a memory limit with the kernel's swap on the simulated SSD,
in real time, and report the device's figures beside the kernel's (docs/live.md)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import _core, live
from . import _output as output
from ._core import ConfigError

DEFAULT_OUT = Path("results") / "live"
DEFAULT_PRESET = "block-tlc-consumer"
PAGE = 4096


def add_parser(commands: Any) -> None:
    p = commands.add_parser(
        "live",
        help="run a real program with the kernel's swap on the simulated SSD, in real time (root)",
        description="Serve the device a config describes as a file over FUSE in real time, attach it with "
        "direct I/O as the highest-priority swap, run COMMAND in a new memory cgroup with --memory-limit, "
        "then undo every step and report the device's summary, the kernel's swap figures and COMMAND's exit "
        "status. Needs root, /dev/fuse, loop devices and a memory cgroup. See docs/live.md.",
    )
    p.add_argument(
        "--config", type=Path, metavar="FILE", help=f"TOML config file (default: the preset {DEFAULT_PRESET})"
    )
    p.add_argument("--preset", metavar="NAME", help="device from a named preset (block or hybrid drives)")
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config value",
    )
    p.add_argument("--swap-size", type=int, default=512, metavar="MiB", help="swap area size (default 512)")
    p.add_argument(
        "--memory-limit",
        type=int,
        default=64,
        metavar="MiB",
        help="the program's memory cgroup limit (default 64)",
    )
    p.add_argument(
        "--time-scale",
        type=float,
        default=1.0,
        metavar="X",
        help="wall seconds per device second: 2 makes the drive twice as slow, 0.5 twice as fast (default 1)",
    )
    p.add_argument(
        "--zswap",
        metavar="COMPRESSOR",
        help="turn zswap on with this compressor (lzo, lz4, zstd, ...) for the run; restored afterwards",
    )
    p.add_argument("--verify", action="store_true", help="check every read against the last write")
    p.add_argument(
        "--compare", action="store_true", help="also run the host model on the same program (memtouch)"
    )
    p.add_argument(
        "--out", type=Path, help=f"output directory (default: {DEFAULT_OUT}, replaced by each run)"
    )
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out directory")
    p.add_argument("--no-record", action="store_true", help="do not record the run in the results database")
    p.add_argument("--cleanup", action="store_true", help="undo what a killed live run left, then exit")
    p.add_argument("--quiet", "-q", action="store_true", help="no summary table")
    from ._cli_results import add_db_option

    add_db_option(p)
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]: the program to run")
    p.set_defaults(func=cmd_live)


def effective_config(args: argparse.Namespace) -> dict[str, Any]:
    """The checked config (every default filled in); refuses a zoned device."""
    from . import config
    from .cli import preset_config

    if args.preset and args.config:
        raise ConfigError("give a config file or --preset, not both")
    preset = args.preset or (None if args.config else DEFAULT_PRESET)
    if preset:
        cfg = config.apply_overrides(preset_config(preset), args.overrides)
    else:
        cfg = config.load_config(args.config, args.overrides)
    return checked_config(cfg)


def checked_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """The drive of `cfg`, checked, every default filled in (the workload and the host are the real
    program and the real kernel: only `seed` and `device` are kept); refuses a zoned drive."""
    cfg = {k: v for k, v in cfg.items() if k in ("seed", "device")}
    if cfg.get("device", {}).get("kind") == "zoned":
        raise live.LiveError(
            "a zoned device cannot hold Linux swap without the ZNSwap kernel patch (swap writes in place); "
            "live mode serves block and hybrid drives — use a block or hybrid preset"
        )
    checked: dict[str, Any] = json.loads(_core.validate_config(json.dumps(cfg)))
    return checked


def program(argv: list[str]) -> list[str]:
    """COMMAND with its executable found; `memtouch` (the kernel-swap captures' program) is compiled from
    ../shared/tools/memtouch.c when it is not on PATH."""
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise ConfigError(
            "give the program to run after `--`, e.g. nandstack live -- memtouch 32768 100000 uniform 50 1"
        )
    exe = shutil.which(argv[0])
    if exe is None and argv[0] == "memtouch":
        exe = str(memtouch_binary())
    if exe is None:
        raise ConfigError(f"`{argv[0]}`: no such program on PATH")
    return [exe, *argv[1:]]


def memtouch_source() -> Path:
    from . import data

    candidates = [Path(os.environ.get("NANDSTACK_MEMTOUCH_SRC", "/nonexistent"))]
    candidates += [root.parent / "tools" / "memtouch.c" for root in data.default_roots()]
    for c in candidates:
        if c.is_file():
            return c
    raise live.LiveError(
        "memtouch is not on PATH and memtouch.c was not found (../shared/tools/memtouch.c beside the "
        "checkout, or $NANDSTACK_MEMTOUCH_SRC)"
    )


def memtouch_binary() -> Path:
    """memtouch compiled into the cache (once per source version)."""
    from . import data

    src = memtouch_source()
    out = data.cache_dir() / "bin" / f"memtouch-{int(src.stat().st_mtime)}-{src.stat().st_size}"
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            raise live.LiveError("compiling memtouch needs a C compiler (cc); apt-get install gcc")
        tmp = out.with_suffix(f".tmp{os.getpid()}")
        p = subprocess.run([cc, "-O2", "-o", str(tmp), str(src), "-lm"], capture_output=True, text=True)
        if p.returncode != 0:
            raise live.LiveError(f"compiling {src} failed: {p.stderr.strip()}")
        os.replace(tmp, out)
    return out


def run_program(session: live.Session, argv: list[str], log: Path) -> dict[str, Any]:
    """Run `argv` in the session's cgroup; the kernel's figures around it and its exit status."""
    before = live.vmstat()
    session.control("start")
    t0 = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, preexec_fn=session.join_cgroup)
        rc = proc.wait()
    wall = time.monotonic() - t0
    after = live.vmstat()
    stat = session.cgroup_stat()
    session.stop()
    from ._live_compare import loop_queue

    queue = loop_queue(session.res.loop)
    delta = {k: after[k] - before.get(k, 0) for k in after}
    return {
        "kernel": {
            **delta,
            "vmstat_scope": "system-wide deltas over the program's run",
            "memory_stat": stat,
            "cgroup": session.res.cgroup_kind,
            **queue,
        },
        "command": {
            "argv": argv,
            "exit_status": rc,
            "wall_seconds": round(wall, 3),
            "output_tail": log.read_text(errors="replace")[-500:].strip(),
        },
    }


def _consistency(report: dict[str, Any], kernel: dict[str, Any]) -> dict[str, Any]:
    wrote = report["host_write_bytes"] / PAGE
    read = report["host_read_bytes"] / PAGE
    out = kernel["pswpout"]
    return {
        "device_written_4k_pages": wrote,
        "device_read_4k_pages": read,
        "written_over_pswpout": round(wrote / out, 4) if out else None,
        "read_over_pswpin": round(read / kernel["pswpin"], 4) if kernel["pswpin"] else None,
    }


def cmd_live(args: argparse.Namespace) -> int:
    if args.cleanup:
        live.preflight()
        lines = live.cleanup()
        print("\n".join(lines) if lines else "nothing to clean up")
        return 0
    cfg = effective_config(args)
    argv = program(args.command)
    if args.swap_size <= 0 or args.memory_limit <= 0:
        raise ConfigError("--swap-size and --memory-limit are MiB > 0")
    if not args.time_scale > 0:
        raise ConfigError("--time-scale must be > 0")
    if args.compare:
        from ._live_compare import memtouch_args

        memtouch_args(argv)  # refused before the run, not after it
    plan = Plan(cfg, argv, args.memory_limit, args.swap_size, args.time_scale, args.verify, args.zswap)
    out: Path = args.out if args.out is not None else DEFAULT_OUT
    from ._config_obj import config_hash

    info = {"nandstack_version": _core.__version__, "config_hash": config_hash(cfg, None), "command": "live"}
    with (
        live.stop_signals(),
        output.atomic_output_dir(out, overwrite=args.overwrite or args.out is None, info=info) as (
            tmp,
            meta,
        ),
    ):
        summary = run_live(plan, tmp)
        if args.compare:
            summary["model"] = _compare(plan, summary, tmp)
        (tmp / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        from . import config as config_mod

        (tmp / "config.toml").write_text(config_mod.dumps(cfg))
        if not args.no_record:
            from ._api import Result
            from .results import ResultsDB

            result = Result(summary, cfg)
            ResultsDB(args.db).record(result, source="live", verify=args.verify)
            meta["run_id"] = result.run_id
    if not args.quiet:
        _print(summary, out)
    return 0 if summary["command"]["exit_status"] == 0 else 1


@dataclass
class Plan:
    """One live run: the checked config (its drive), the program, the limit and swap size (MiB)."""

    cfg: dict[str, Any]
    argv: list[str]
    memory_limit: int
    swap_size: int
    time_scale: float = 1.0
    verify: bool = False
    zswap: str | None = None


def run_live(plan: Plan, folder: Path) -> dict[str, Any]:
    """Set up, run `plan.argv`, tear down; the summary. Writes `command.log`, `trace.csv.gz` and
    `trace.json` into `folder` (a kernel-swap captures folder)."""
    opts = live.Options(
        config_json=json.dumps(plan.cfg),
        swap_bytes=plan.swap_size << 20,
        limit_bytes=plan.memory_limit << 20,
        time_scale=plan.time_scale,
        verify=plan.verify,
        zswap=plan.zswap,
    )
    session = live.Session(opts)
    with session:
        facts = run_program(session, plan.argv, folder / "command.log")
    try:
        summary = _summary(session, facts, plan)
        _write_trace(session.trace_path, folder, summary, plan)
    finally:
        session.discard()
    if session.problems:
        raise live.LiveError("teardown could not undo everything:\n  " + "\n  ".join(session.problems))
    return summary


def kernel_side(folder: Path) -> dict[str, float]:
    """The kernel-swap experiment's figures of a live run's trace (pages out/in, pages per request)."""
    from .experiments.kernel_swap import Capture, kernel_figures

    meta = json.loads((folder / "trace.json").read_text())
    return kernel_figures(Capture("trace", meta), folder)


def _summary(session: live.Session, facts: dict[str, Any], plan: Plan) -> dict[str, Any]:
    try:
        report = json.loads(session.report_path.read_text())
    except (OSError, ValueError) as e:
        log = session.res.folder / "daemon.log"
        detail = log.read_text(errors="replace").strip() if log.exists() else ""
        rc = session.daemon.returncode if session.daemon is not None else None
        how = f"killed by signal {-rc}" if rc is not None and rc < 0 else f"exit status {rc}"
        raise live.LiveError(
            f"the nandstack-live daemon died during the run ({how}) and left no report ({e}); "
            f"everything was torn down. {detail}".strip()
        ) from None
    report.pop("config", None)
    kernel = facts["kernel"]
    kernel["memory_limit_bytes"] = plan.memory_limit << 20
    kernel["swap_bytes"] = plan.swap_size << 20
    kernel["swap_priority"] = live.SWAP_PRIORITY
    kernel["zswap"] = {"enabled": True, "compressor": plan.zswap} if plan.zswap else {"enabled": False}
    kernel.update(_consistency(report, kernel))
    report["kernel"] = kernel
    report["command"] = facts["command"]
    if report.get("live", {}).get("model_errors"):
        raise live.LiveError(f"the device model refused requests: {report['live']['first_model_error']}")
    return report


def _write_trace(src: Path, folder: Path, summary: dict[str, Any], plan: Plan) -> None:
    """The requests as a kernel-swap capture: `trace.csv.gz` (time_s,op,sector,sectors,comm) and
    `trace.json` (the captures' metadata), so the folder reads as a captures folder."""
    import gzip

    if not src.exists():
        raise live.LiveError(f"the daemon wrote no trace ({src})")
    raw = (folder / "trace.csv.gz").open("wb")
    with raw, src.open("rb") as f, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as g:  # byte-stable
        shutil.copyfileobj(f, g)
    k, c = summary["kernel"], summary["command"]
    meta = {
        "command": [Path(c["argv"][0]).name.split("-")[0], *c["argv"][1:]],
        "memory_limit_mb": plan.memory_limit,
        "swap_mb": plan.swap_size,
        "discard": "none",
        "kernel": os.uname().release,
        "wall_s": c["wall_seconds"],
        "vmstat_delta_system_wide": {"pswpin": k["pswpin"], "pswpout": k["pswpout"]},
        "command_output": c["output_tail"],
        "recorder": "nandstack live (the daemon's FUSE requests: offsets and sizes as the loop device "
        "sent them)",
    }
    (folder / "trace.json").write_text(json.dumps(meta, indent=1) + "\n")


def _compare(plan: Plan, summary: dict[str, Any], folder: Path) -> dict[str, Any]:
    from ._live_compare import compare

    k = summary["kernel"]
    queue = {"swap_solid_state": k["swap_solid_state"], "max_request_kib": k["max_request_kib"]}
    return compare(plan.cfg, plan.argv, plan.memory_limit, plan.swap_size, queue, kernel_side(folder))


def _print(summary: dict[str, Any], out: Path) -> None:
    from ._term import format_table

    k, c, lv = summary["kernel"], summary["command"], summary["live"]
    rows = [
        ("command exit status", c["exit_status"]),
        ("command wall seconds", c["wall_seconds"]),
        ("kernel pswpout (pages)", k["pswpout"]),
        ("device written (4 KiB pages)", round(k["device_written_4k_pages"])),
        ("kernel pswpin (pages)", k["pswpin"]),
        ("device read (4 KiB pages)", round(k["device_read_4k_pages"])),
        ("device requests", summary["requests"]),
        ("waf", summary.get("waf")),
        ("reply lag p99 (µs)", (lv.get("lag_us") or {}).get("p99")),
        ("replies late by > 1 ms", lv["late_replies_over_1ms"]),
    ]
    if "model" in summary:
        rows += [("model pswpout", summary["model"]["pswpout"]), ("model pswpin", summary["model"]["pswpin"])]
    print(format_table(rows))
    print(f"wrote {out}", file=sys.stderr)
