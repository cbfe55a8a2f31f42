"""Config and trace fuzzing for the reliability suite (tests/test_fuzz.py; docs/testing.md).

A mutated config starts from a tiny base of the kind the mutated key belongs to (block, hybrid, zoned,
host programs or a trace replay) and sets one to three keys — every key of the config reference is a
candidate, generated from the engine's own reference, so new keys are fuzzed as soon as they exist — to
extreme values of its type (0, −1, 2^32, 2^63 − 1, 1e300, NaN, ±inf, huge strings, wrong types, unknown
enum names). The contract checked: a named error (exit 2 and one `error:` line; a `NandstackError` from
Python) or a clean run, within a time bound — a run still going at the bound must stop on Ctrl-C within
`SIGINT_SECONDS` with exit 130 (`Interrupted` from Python). Never a signal death, a traceback, a panic
message or a hang.
"""

from __future__ import annotations

import copy
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Seconds a fuzzed run may take before it is sent Ctrl-C, and seconds it then has to exit.
RUN_SECONDS = float(os.environ.get("NANDSTACK_FUZZ_RUN_SECONDS", "4"))
SIGINT_SECONDS = 5.0

_GEOMETRY = {
    "channels": 1,
    "chips_per_channel": 1,
    "dies_per_chip": 1,
    "planes_per_die": 1,
    "blocks_per_plane": 64,
    "pages_per_block": 32,
    "page_size_bytes": 4096,
}
BLOCK: dict[str, Any] = {
    "device": {"geometry": dict(_GEOMETRY), "ftl": {"over_provisioning": 0.25}},
    "workload": {"requests": 3000},
}
HYBRID: dict[str, Any] = {
    "device": {
        "kind": "hybrid",
        "hybrid": {"total_blocks": 256, "page_bytes": 4096, "over_provisioning": 0.5},
    },
    "workload": {"kind": "standin", "standin": {"name": "pc", "scale": 0.0005}},
}
ZONED: dict[str, Any] = {
    "device": {"kind": "zoned"},
    "workload": {"requests": 3000},
    "precondition": {"fill_fraction": 0.5, "warmup_capacity_multiples": 0.0},
}
HOST: dict[str, Any] = {
    "workload": {
        "kind": "host",
        "processes": [
            {
                "name": "m",
                "workload": {
                    "type": "memtouch",
                    "pages": 2048,
                    "ops": 3000,
                    "pattern": "uniform",
                    "write_pct": 50,
                    "seed": 1,
                },
            }
        ],
    },
    "host": {"ram_mib": 8, "swap": {"size_mib": 64}},
    "device": {"geometry": {**_GEOMETRY, "blocks_per_plane": 1024}, "ftl": {"over_provisioning": 0.25}},
}


def trace_base(path: Path) -> dict[str, Any]:
    """A replay of the MSR trace at `path` (see `write_msr_trace`) on the tiny block device."""
    return {
        "device": copy.deepcopy(BLOCK["device"]),
        "workload": {
            "kind": "trace",
            "io": {"mode": "open_loop"},
            "trace": {"path": str(path), "format": "msr", "lba": "wrap"},
        },
        "precondition": {"warmup_capacity_multiples": 0.0},
    }


def write_msr_trace(path: Path, rows: int = 2000) -> Path:
    """An MSR trace of 4 KiB writes and reads, 1 ms apart, a few rows out of order."""
    lines = []
    for i in range(rows):
        t = 128166372000000000 + i * 10_000 + (15_000 if i % 50 == 7 else 0)
        op = "Read" if i % 4 == 3 else "Write"
        lines.append(f"{t},hm,0,{op},{(i * 7919 % 1024) * 4096},4096,100")
    path.write_text("\n".join(lines) + "\n")
    return path


@dataclass(frozen=True)
class Key:
    """A key of the config reference: its section (dotted), the variant it belongs to (a tagged
    section's `type`/`policy` value), its name, the reference's type column and its default (JSON text,
    or empty)."""

    section: str
    variant: tuple[str, str] | None
    name: str
    type: str
    default: str = ""


def reference_keys() -> list[Key]:
    """Every key of the config reference (`nandstack config --reference`)."""
    from nandstack import _core

    keys: list[Key] = []
    section, variant = "", None
    for line in _core.config_reference_markdown().splitlines():
        m = re.match(r"^## (?:top level|\[\[?([^\]]+)\]\]?)(?: with `(\w+) = \"(\w+)\"`)?", line)
        if m:
            section = m.group(1) or ""
            variant = (m.group(2), m.group(3)) if m.group(2) else None
            continue
        m = re.match(r"^\| `([^`]+)` \| ([^|]*) \| ([^|]*) \|", line)
        if m:
            default = m.group(3).strip().strip("`")
            keys.append(Key(section, variant, m.group(1), m.group(2).strip(), default))
    return keys


INTS = [
    0,
    1,
    -1,
    2,
    7,
    1000,
    10**6,
    10**9,
    2**31 - 1,
    2**32 - 1,
    2**32,
    2**40,
    2**44,
    2**53,
    2**63 - 1,
    -(2**63),
]
FLOATS = [0.0, -0.0, 1e-300, 1e-9, 0.5, 0.999999, 1.0, 1.5, 100.0, 1e6, 1e18, 1e300, -1.0]
FLOATS += [float("nan"), float("inf"), float("-inf")]
STRINGS = ["", "x" * 5000, "/nonexistent/file", "é\u0000\u202e", "no/such/folder/file"]
ARRAYS: list[Any] = [[], [1] * 1000, ["x"], [{"bytes": 2**62, "weight": 1}], [[]]]


def _default_number(key: Key) -> float | None:
    try:
        value = json.loads(key.default)
    except ValueError:
        return None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def value_for(key: Key, rng: random.Random) -> Any:
    """Half the time an extreme or wrong value; else a plausible one (the default scaled up or down,
    small numbers), which lets more configs run and reach deeper states."""
    if rng.random() < 0.5 or not ("integer" in key.type or "number" in key.type):
        return extreme_value(key.type, rng)
    default = _default_number(key)
    if default is not None and default != 0 and rng.random() < 0.6:
        value = default * rng.choice([0.5, 2, 3, 10, 100])
        return int(value) if "integer" in key.type else value
    if "integer" in key.type:
        return rng.choice([0, 1, 2, 3, 4, 8, 16, 64, 100, 1000])
    return rng.choice([0.0, 0.01, 0.1, 0.25, 0.5, 0.9, 1.0, 2.0, 10.0])


def extreme_value(type_: str, rng: random.Random) -> Any:
    """An extreme or wrong value for a key of the reference type `type_`."""
    if type_.startswith("`"):
        names = re.findall(r"`([^`]+)`", type_)
        return rng.choice([*names, *names, "bogus", 7, ""])
    if rng.random() < 0.08:  # the wrong type altogether
        return rng.choice([{}, "x", [1], True, 1.5])
    if "integer" in type_:
        return rng.choice(INTS)
    if "number" in type_:
        return rng.choice(FLOATS + INTS[:6])
    if "boolean" in type_:
        return rng.choice([True, False, 3])
    if "string" in type_:
        return rng.choice(STRINGS)
    if "array" in type_:
        return rng.choice(ARRAYS)
    return rng.choice([{}, 1, "x"])


def _base(section: str, trace_path: Path, rng: random.Random) -> dict[str, Any]:
    if section.startswith(("device.hybrid", "device.manager")) or section == "pretrain":
        return HYBRID
    if section.startswith("device.zoned"):
        return ZONED
    if section.startswith("host") or "processes" in section:
        return HOST
    if section.startswith("workload.trace"):
        return trace_base(trace_path)
    if section.startswith("run"):
        return rng.choice([BLOCK, HOST, trace_base(trace_path)])
    return BLOCK


def _set(config: dict[str, Any], key: Key, value: Any) -> str:
    """Set `key` to `value` in `config` (creating tables; arrays of tables get one element)."""
    parts = [p for p in key.section.split(".") if p]
    if key.section.startswith("workload.processes"):
        processes = _table(config, "workload").get("processes")
        if not (isinstance(processes, list) and processes and isinstance(processes[0], dict)):
            processes = config["workload"]["processes"] = [{"name": "p"}]
        table = processes[0]
        for p in parts[2:]:
            table = _table(table, p)
    elif key.section in ("workload.request_sizes", "host.cgroups"):
        head, name = key.section.split(".")
        element = (
            {"bytes": 4096, "weight": 1.0} if name == "request_sizes" else {"name": "g", "limit_pages": 512}
        )
        _table(config, head)[name] = [element]
        table = element
    else:
        table = config
        for p in parts:
            table = _table(table, p)
    if key.variant:
        table[key.variant[0]] = key.variant[1]
    table[key.name] = value
    return f"{key.section + '.' if key.section else ''}{key.name}={value!r}"[:160]


def _table(parent: dict[str, Any], name: str) -> dict[str, Any]:
    """`parent[name]` as a table (replacing a value of another type)."""
    child = parent.get(name)
    if not isinstance(child, dict):
        child = parent[name] = {}
    return child


def mutate(rng: random.Random, keys: list[Key], trace_path: Path) -> tuple[dict[str, Any], str]:
    """A base config with one to three keys of one part of the schema set to extreme values."""
    first = rng.choice(keys)
    config = copy.deepcopy(_base(first.section, trace_path, rng))
    near = [k for k in keys if k.section.split(".")[:2] == first.section.split(".")[:2]]
    done = [_set(config, first, value_for(first, rng))]
    for _ in range(rng.choice([0, 0, 1, 2])):
        key = rng.choice(near)
        done.append(_set(config, key, value_for(key, rng)))
    return config, "; ".join(done)


def _child_env() -> dict[str, str]:
    return {**os.environ, "RUST_BACKTRACE": "0"}


def _default_sigint() -> None:
    """The child handles Ctrl-C itself even if this process was started with SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@dataclass
class Outcome:
    ok: bool
    what: str  # "ran", "error", "interrupted", or what went wrong
    detail: str


BAD_OUTPUT = ("Traceback (most recent call last)", "panicked at", "internal error", "RUST_BACKTRACE")


def popen(args: list[str], cwd: Path, **kw: Any) -> subprocess.Popen:
    """`python -m nandstack ARGS` in `cwd`, no input, its output read as text (`kw` to `Popen`)."""
    return subprocess.Popen(
        [sys.executable, "-m", "nandstack", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def run_cli(args: list[str], cwd: Path, run_seconds: float = RUN_SECONDS) -> Outcome:
    """`python -m nandstack ARGS` with the contract above."""
    proc = popen(args, cwd, errors="replace", env=_child_env(), preexec_fn=_default_sigint)
    interrupted = False
    try:
        _, err = proc.communicate(timeout=run_seconds)
    except subprocess.TimeoutExpired:
        interrupted = True
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=SIGINT_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
            return Outcome(False, "hang: still running after Ctrl-C", err[-2000:])
    rc = proc.returncode
    if rc < 0:
        return Outcome(False, f"killed by signal {-rc}", err[-2000:])
    for bad in BAD_OUTPUT:
        if bad in err:
            return Outcome(False, f"`{bad}` on stderr", err[-3000:])
    if interrupted:
        return Outcome(rc == 130, "interrupted" if rc == 130 else f"exit {rc} after Ctrl-C", err[-500:])
    if rc == 0:
        return Outcome(True, "ran", "")
    last = err.strip().split("\n")[-1]
    if rc == 2 and last.startswith("error: "):
        return Outcome(True, "error", last)
    return Outcome(False, f"exit {rc}", err[-2000:])


#: Runs configs given as JSON lines on stdin through `nandstack.run`, one JSON outcome line per config.
API_DRIVER = r"""
import json, sys, time, traceback
import nandstack

limit = float(sys.argv[1])
for line in sys.stdin:
    config = json.loads(line)
    start = time.monotonic()
    print(json.dumps({"started": True}), flush=True)

    def deadline(phase, done, total):
        if time.monotonic() - start > limit:
            raise KeyboardInterrupt

    try:
        nandstack.run(config, record=False, progress=deadline)
        out = {"ok": True, "what": "ran"}
    except nandstack.Interrupted:
        out = {"ok": True, "what": "interrupted"}
    except nandstack.NandstackError as e:
        out = {"ok": True, "what": "error", "detail": f"{type(e).__name__}: {e}"[:300]}
    except BaseException as e:
        out = {"ok": False, "what": type(e).__name__, "detail": traceback.format_exc()[-3000:]}
    out["seconds"] = time.monotonic() - start
    print(json.dumps(out), flush=True)
"""


def run_api(configs: list[dict[str, Any]], cwd: Path, run_seconds: float = RUN_SECONDS) -> list[Outcome]:
    """Run `configs` through `nandstack.run` in one child interpreter working in `cwd` (files a config
    names are written there; a crash names the config it died on); each stops itself (progress
    callback) after `run_seconds`."""
    proc = subprocess.Popen(
        [sys.executable, "-c", API_DRIVER, str(run_seconds)],
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_child_env(),
        preexec_fn=_default_sigint,
    )
    assert proc.stdin is not None and proc.stdout is not None
    outcomes: list[Outcome] = []
    for config in configs:
        proc.stdin.write(json.dumps(config, allow_nan=True) + "\n")
        proc.stdin.flush()
        started = proc.stdout.readline()
        line = proc.stdout.readline() if started else ""
        if not line:
            proc.kill()
            _, err = proc.communicate()
            outcomes.append(Outcome(False, f"the interpreter died (exit {proc.returncode})", err[-3000:]))
            return outcomes
        out = json.loads(line)
        slow = out["seconds"] > run_seconds + SIGINT_SECONDS
        ok = out["ok"] and not slow
        what = out["what"] + (f" after {out['seconds']:.1f} s" if slow else "")
        outcomes.append(Outcome(ok, what, out.get("detail", "")))
    proc.communicate(timeout=30)  # closes stdin, drains and closes stdout and stderr
    return outcomes


def corrupt(data: bytes, rng: random.Random) -> bytes:
    """`data` with a few bytes flipped, lines duplicated or cut, or garbage appended."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        choice = rng.random()
        if choice < 0.3 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif choice < 0.5:
            b[rng.randrange(len(b) + 1) :] = b""
        elif choice < 0.7:
            b += bytes(rng.randrange(256) for _ in range(rng.randint(1, 300)))
        elif choice < 0.85:
            b += b"\n" + b"9" * rng.choice([20, 40, 400]) + b",x,-1,Write,1e999,nan\n"
        else:
            b = b * 2
    return bytes(b)


def timed(f: Any, *args: Any) -> tuple[Any, float]:
    start = time.monotonic()
    out = f(*args)
    return out, time.monotonic() - start
