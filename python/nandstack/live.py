"""Live mode's machinery: a real Linux kernel swaps onto the simulated SSD (docs/live.md).

The `nandstack-live` daemon serves the device model as a file over FUSE (outside the program's cgroup,
its memory locked); the file is attached to a loop device with direct I/O (no page cache between the
kernel's swap and the daemon), `mkswap`ed and `swapon`ed at the highest priority; the program runs in a
new memory cgroup with the limit. Every step is recorded in `/run/nandstack-live/<pid>/` and undone in
reverse order on every exit path; `cleanup()` undoes what a killed run left (its owner process is gone).
Nothing else of the machine — its own swap, loop devices, mounts or cgroups — is touched: everything
this module creates carries the owner's pid in its name.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ._core import NandstackError
from ._output import _alive

__all__ = ["LiveError", "Session", "cleanup", "daemon_binary", "leftovers", "machine_state", "preflight"]

RUN_ROOT = Path("/run/nandstack-live")
CGROUP_V1 = Path("/sys/fs/cgroup/memory")
CGROUP_V2 = Path("/sys/fs/cgroup")
CGROUP_PREFIX = "nandstack-live-"
#: The highest swap priority (swapon -p): the kernel fills this swap before any other.
SWAP_PRIORITY = 32767
TOOLS = ("losetup", "mkswap", "swapon", "swapoff", "umount")
DEV_FUSE = Path("/dev/fuse")
#: zswap's module parameters (`--zswap`): the run sets `compressor` and `enabled`, and restores them.
ZSWAP = Path("/sys/module/zswap/parameters")
ZSWAP_KEYS = ("compressor", "enabled")
LOOP_CONTROL = Path("/dev/loop-control")


class LiveError(NandstackError):
    """Live mode cannot run here (not root, no FUSE, no loop device, no usable cgroup) or a setup step
    failed; the message says which and what to do."""


# ---- what the machine offers -------------------------------------------------------------------------


def cgroup_kind() -> str | None:
    """'v1' (a memory hierarchy at /sys/fs/cgroup/memory), 'v2' (the unified hierarchy with the memory
    controller enabled for children) or None."""
    if (CGROUP_V1 / "memory.limit_in_bytes").exists() and (CGROUP_V1 / "cgroup.procs").exists():
        return "v1"
    controllers = CGROUP_V2 / "cgroup.subtree_control"
    with contextlib.suppress(OSError):
        if "memory" in controllers.read_text().split():
            return "v2"
    return None


def preflight() -> str:
    """Check that live mode can run; returns the cgroup kind. Raises `LiveError` naming the first thing
    missing."""
    if os.geteuid() != 0:
        raise LiveError(
            "live mode needs root: it mounts a FUSE file system, attaches a loop device, turns swap on and "
            "creates a memory cgroup (run it with sudo)"
        )
    if not DEV_FUSE.exists():
        raise LiveError(
            f"no {DEV_FUSE}: this kernel has no FUSE (modprobe fuse, or a kernel with CONFIG_FUSE_FS)"
        )
    if not LOOP_CONTROL.exists():
        raise LiveError(
            f"no {LOOP_CONTROL}: this kernel has no loop devices (modprobe loop, or CONFIG_BLK_DEV_LOOP)"
        )
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        raise LiveError(f"missing tool(s) {', '.join(missing)} (Debian: apt-get install util-linux mount)")
    kind = cgroup_kind()
    if kind is None:
        raise LiveError(
            f"no usable memory cgroup: neither cgroup v1's {CGROUP_V1} nor cgroup v2 with the memory "
            f"controller enabled in {CGROUP_V2}/cgroup.subtree_control (live mode does not change the "
            "machine's cgroup setup)"
        )
    return kind


def daemon_binary() -> Path:
    """The `nandstack-live` daemon: $NANDSTACK_LIVE_BIN, else on PATH, else the checkout's cargo build."""
    env = os.environ.get("NANDSTACK_LIVE_BIN")
    if env:
        if not os.access(env, os.X_OK):
            raise LiveError(f"NANDSTACK_LIVE_BIN={env}: not an executable file")
        return Path(env)
    found = shutil.which("nandstack-live")
    if found:
        return Path(found)
    repo = Path(__file__).resolve().parents[2]
    for profile in ("release", "debug"):
        p = repo / "target" / profile / "nandstack-live"
        if p.is_file() and os.access(p, os.X_OK):
            return p
    raise LiveError(
        "the nandstack-live daemon is not built: run `make build` (or `cargo build --release -p "
        "nandstack-live`), or point NANDSTACK_LIVE_BIN at it"
    )


def machine_state() -> dict[str, list[str]]:
    """What a run must leave as it found: zswap's parameters, swap areas, loop devices, FUSE mounts,
    memory cgroups."""

    def lines(*cmd: str) -> list[str]:
        out = subprocess.run(cmd, capture_output=True, text=True, check=False).stdout
        return sorted(line for line in out.splitlines() if line.strip())

    mounts = [m for m in Path("/proc/self/mounts").read_text().splitlines() if " fuse" in m]
    kind = cgroup_kind()
    root = CGROUP_V1 if kind == "v1" else CGROUP_V2
    groups = sorted(p.name for p in root.iterdir() if p.is_dir()) if kind else []
    return {
        "zswap": [f"{k}={v}" for k, v in zswap_params().items()],
        "swaps": Path("/proc/swaps").read_text().splitlines()[1:],
        "loops": lines("losetup", "-a"),
        "fuse_mounts": sorted(mounts),
        "cgroups": groups,
    }


# ---- one run's resources ------------------------------------------------------------------------------


def _run(*cmd: str, check: bool = True) -> str:
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if check and p.returncode != 0:
        raise LiveError(f"`{' '.join(cmd)}` failed: {(p.stderr or p.stdout).strip() or p.returncode}")
    return p.stdout.strip()


@dataclass
class Resources:
    """What one run set up (all optional: a run may die between any two steps)."""

    owner: int
    cgroup_kind: str = "v1"
    daemon_pid: int | None = None
    loop: str | None = None
    swap_on: bool = False
    cgroup: str | None = None
    #: zswap's parameters before the run changed them (None: not changed).
    zswap_saved: dict[str, str] | None = None
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def folder(self) -> Path:
        return RUN_ROOT / str(self.owner)

    @property
    def mount(self) -> Path:
        return self.folder / "mnt"

    def save(self) -> None:
        state = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "extra"}
        tmp = self.folder / "state.json.tmp"
        tmp.write_text(json.dumps(state))
        os.replace(tmp, self.folder / "state.json")

    @classmethod
    def load(cls, folder: Path) -> Resources:
        try:
            state = json.loads((folder / "state.json").read_text())
            return cls(**{k: state[k] for k in state if k in cls.__dataclass_fields__})
        except (OSError, ValueError, TypeError):
            return cls(owner=int(folder.name))


def _mounted(path: Path) -> bool:
    target = str(path)
    for line in Path("/proc/self/mounts").read_text().splitlines():
        parts = line.split()
        if len(parts) > 1 and parts[1] == target:
            return True
    return False


def _swapped_on(dev: str) -> bool:
    return any(line.split()[0] == dev for line in Path("/proc/swaps").read_text().splitlines()[1:])


def _loops_backed_by(folder: Path) -> list[str]:
    out = _run("losetup", "-a", check=False)
    loops = []
    for line in out.splitlines():  # "/dev/loop0: [0045]:2 (/run/nandstack-live/123/mnt/swap)"
        dev, _, rest = line.partition(":")
        if str(folder) + "/" in rest:
            loops.append(dev)
    return loops


def _cgroup_path(kind: str, name: str) -> Path:
    return (CGROUP_V1 if kind == "v1" else CGROUP_V2) / name


def _empty_cgroup(path: Path, timeout: float = 10.0) -> None:
    """Kill every process in the cgroup and wait until it is empty."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            pids = [int(p) for p in (path / "cgroup.procs").read_text().split()]
        except OSError:
            return
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def teardown(res: Resources, keep_files: bool = False) -> list[str]:
    """Undo every step `res` records, in reverse order; returns what could not be undone (empty: all)."""
    problems: list[str] = []

    def step(what: str, fn: object) -> None:
        try:
            fn()  # type: ignore[operator]
        except (OSError, LiveError, subprocess.SubprocessError) as e:
            problems.append(f"{what}: {e}")

    cg = _cgroup_path(res.cgroup_kind, res.cgroup) if res.cgroup else None
    if cg is not None and cg.exists():
        step("stopping the program's processes", lambda: _empty_cgroup(cg))
    loops = ([res.loop] if res.loop else []) + _loops_backed_by(res.folder)
    for loop in dict.fromkeys(loops):
        if _swapped_on(loop):
            step(f"swapoff {loop}", lambda loop=loop: _run("swapoff", loop))
        step(f"losetup -d {loop}", lambda loop=loop: _detach(loop))
    if res.zswap_saved:
        step("restoring zswap's parameters", lambda: _set_zswap(res.zswap_saved or {}))
    if _mounted(res.mount):
        step(f"umount {res.mount}", lambda: _unmount(res.mount))
    if res.daemon_pid is not None:
        step("stopping the daemon", lambda: _stop_daemon(res.daemon_pid))
    if cg is not None and cg.exists():
        step(f"rmdir {cg}", lambda: _rmdir_retry(cg))
    if not problems and not keep_files:
        shutil.rmtree(res.folder, ignore_errors=True)
        with contextlib.suppress(OSError):
            RUN_ROOT.rmdir()  # only when no other run is using it
    return problems


def zswap_params() -> dict[str, str]:
    """zswap's `compressor` and `enabled` now ({} when the kernel has no zswap)."""
    out = {}
    for k in ZSWAP_KEYS:
        with contextlib.suppress(OSError):
            out[k] = (ZSWAP / k).read_text().strip()
    return out


def _set_zswap(values: dict[str, str]) -> None:
    """Write zswap's parameters (compressor first, then enabled), each only when it differs."""
    now = zswap_params()
    for k in ZSWAP_KEYS:
        if k in values and now.get(k) != values[k]:
            (ZSWAP / k).write_text(values[k])


def _detach(loop: str) -> None:
    out = _run("losetup", "-a", check=False)
    if any(line.startswith(loop + ":") for line in out.splitlines()):
        _run("losetup", "-d", loop)


def _unmount(mnt: Path) -> None:
    p = subprocess.run(["umount", str(mnt)], capture_output=True, text=True, check=False)
    if p.returncode != 0 and _mounted(mnt):
        _abort_fuse(mnt)
        _run("umount", "-l", str(mnt))


def _abort_fuse(mnt: Path) -> None:
    """A FUSE mount whose daemon died: abort its connection so that nothing waits on it."""
    with contextlib.suppress(OSError, ValueError):
        dev = os.stat(mnt).st_dev
        Path(f"/sys/fs/fuse/connections/{os.minor(dev)}/abort").write_text("1")


def _stop_daemon(pid: int | None, timeout: float = 10.0) -> None:
    if pid is None:
        return
    deadline = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        time.sleep(0.05)
    if _alive(pid) and _is_daemon(pid):
        os.kill(pid, signal.SIGKILL)


def _is_daemon(pid: int) -> bool:
    try:
        return "nandstack-live" in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False


def _rmdir_retry(path: Path, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            path.rmdir()
            return
        except OSError:
            if time.monotonic() > deadline or not path.exists():
                raise
            time.sleep(0.05)


def leftovers() -> list[Resources]:
    """What runs whose owner process is gone left behind (their folders and their named cgroups)."""
    found: dict[int, Resources] = {}
    if RUN_ROOT.is_dir():
        for d in RUN_ROOT.iterdir():
            if d.name.isdigit() and not _alive(int(d.name)):
                found[int(d.name)] = Resources.load(d)
    kind = cgroup_kind()
    if kind:
        root = CGROUP_V1 if kind == "v1" else CGROUP_V2
        for g in root.glob(CGROUP_PREFIX + "*"):
            pid = g.name[len(CGROUP_PREFIX) :]
            if pid.isdigit() and not _alive(int(pid)):
                r = found.setdefault(int(pid), Resources(owner=int(pid)))
                r.cgroup, r.cgroup_kind = g.name, kind
    return list(found.values())


def cleanup() -> list[str]:
    """Undo what killed runs left; returns one line per run cleaned, raises `LiveError` if some step
    could not be undone."""
    done, problems = [], []
    for res in leftovers():
        p = teardown(res)
        problems += p
        done.append(f"cleaned up after run {res.owner} ({res.folder})" + (" with problems" if p else ""))
    if problems:
        raise LiveError("cleanup could not undo everything:\n  " + "\n  ".join(problems))
    return done


# ---- setting up -------------------------------------------------------------------------------------


@dataclass
class Options:
    config_json: str
    swap_bytes: int
    limit_bytes: int
    time_scale: float = 1.0
    verify: bool = False
    trace: bool = True
    #: zswap's compressor for the run (None: zswap left as it is).
    zswap: str | None = None


class Session:
    """The context of one live run: `with Session(opts) as s: s.run(argv)`. Leaving the block, by any
    exit, tears everything down (`teardown`); the daemon's report and trace stay readable in
    `s.report_path` / `s.trace_path` until `s.discard()`."""

    def __init__(self, opts: Options) -> None:
        self.opts = opts
        self.res = Resources(owner=os.getpid(), cgroup_kind=preflight())
        stale = [r.owner for r in leftovers()]
        if stale:
            raise LiveError(
                f"a killed live run left swap/loop/mount/cgroup state (run(s) {stale}): "
                "run `nandstack live --cleanup` first"
            )
        self.daemon: subprocess.Popen[bytes] | None = None
        self.problems: list[str] = []

    @property
    def report_path(self) -> Path:
        return self.res.folder / "report.json"

    @property
    def trace_path(self) -> Path:
        return self.res.folder / "trace.csv"

    def __enter__(self) -> Session:
        try:
            self._set_up()
        except BaseException:
            self._tear_down()
            self.discard()
            raise
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self._tear_down()
        if exc_type is not None:  # nobody will read the report: leave nothing behind
            self.discard()

    def _tear_down(self) -> None:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            self.stop()
            self.problems = teardown(self.res, keep_files=True)
            if self.daemon is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.daemon.wait(timeout=10)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def discard(self) -> None:
        if not self.problems:
            shutil.rmtree(self.res.folder, ignore_errors=True)
            with contextlib.suppress(OSError):
                RUN_ROOT.rmdir()

    def _set_up(self) -> None:
        res = self.res
        res.mount.mkdir(parents=True, exist_ok=True)
        (res.folder / "config.json").write_text(self.opts.config_json)
        res.save()
        self._start_daemon()
        res.loop = _run("losetup", "--direct-io=on", "--show", "-f", str(res.mount / "swap"))
        res.save()
        if self.opts.zswap:
            self._enable_zswap(self.opts.zswap)
        _run("mkswap", res.loop)
        _run("swapon", "-p", str(SWAP_PRIORITY), res.loop)
        res.swap_on = True
        res.save()
        name = f"{CGROUP_PREFIX}{res.owner}"
        path = _cgroup_path(res.cgroup_kind, name)
        path.mkdir()
        res.cgroup = name
        res.save()
        limit = str(self.opts.limit_bytes)
        (path / ("memory.limit_in_bytes" if res.cgroup_kind == "v1" else "memory.max")).write_text(limit)

    def _enable_zswap(self, compressor: str) -> None:
        if not (ZSWAP / "enabled").exists():
            raise LiveError(f"--zswap: this kernel has no zswap ({ZSWAP} is missing)")
        self.res.zswap_saved = zswap_params()
        self.res.save()
        try:
            _set_zswap({"compressor": compressor, "enabled": "Y"})
        except OSError as e:
            raise LiveError(
                f"--zswap {compressor}: the kernel refused it ({e.strerror}); compressors it has: "
                "see /proc/crypto (e.g. lzo, lz4, zstd)"
            ) from None

    def _start_daemon(self) -> None:
        res, o = self.res, self.opts
        cmd = [
            str(daemon_binary()),
            "--config", str(res.folder / "config.json"),
            "--mount", str(res.mount),
            "--size", str(o.swap_bytes),
            "--report", str(self.report_path),
            "--time-scale", repr(o.time_scale),
        ]  # fmt: skip
        if o.trace:
            cmd += ["--trace", str(self.trace_path)]
        if o.verify:
            cmd.append("--verify")
        # Its own session: a Ctrl-C at the terminal reaches the program and this process, not the daemon,
        # which must keep serving the swap until it is off.
        with (res.folder / "daemon.log").open("wb") as log:
            self.daemon = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        res.daemon_pid = self.daemon.pid
        res.save()
        deadline = time.monotonic() + 30
        while not _mounted(res.mount):
            if self.daemon.poll() is not None:
                msg = (res.folder / "daemon.log").read_text(errors="replace").strip()
                raise LiveError(msg.removeprefix("nandstack-live: error: ") or "the daemon exited")
            if time.monotonic() > deadline:
                raise LiveError("the nandstack-live daemon did not mount its file system within 30 s")
            time.sleep(0.02)

    def control(self, word: str) -> None:
        with open(self.res.mount / "control", "w") as f:
            f.write(word)

    def stop(self) -> None:
        """End the measured window (the daemon writes its report); a no-op when already stopped or the
        daemon is not serving."""
        if self.res.extra.get("stopped") or not _mounted(self.res.mount):
            return
        if self.daemon is None or self.daemon.poll() is not None:
            return
        with contextlib.suppress(OSError):
            self.control("stop")
            self.res.extra["stopped"] = True

    def join_cgroup(self) -> None:
        """In the child (between fork and exec): move into the run's cgroup."""
        path = _cgroup_path(self.res.cgroup_kind, str(self.res.cgroup))
        with open(path / "cgroup.procs", "w") as f:
            f.write(str(os.getpid()))

    def cgroup_stat(self) -> dict[str, int]:
        path = _cgroup_path(self.res.cgroup_kind, str(self.res.cgroup))
        out: dict[str, int] = {}
        with contextlib.suppress(OSError):
            for line in (path / "memory.stat").read_text().splitlines():
                k, _, v = line.partition(" ")
                if v.strip().isdigit():
                    out[k] = int(v)
            peak = "memory.max_usage_in_bytes" if self.res.cgroup_kind == "v1" else "memory.peak"
            if (path / peak).exists():
                out["max_usage_bytes" if self.res.cgroup_kind == "v1" else "peak_bytes"] = int(
                    (path / peak).read_text()
                )
        return out


def vmstat() -> dict[str, int]:
    out = {}
    for line in Path("/proc/vmstat").read_text().splitlines():
        k, _, v = line.partition(" ")
        if k in ("pswpin", "pswpout") or k.startswith("zswp"):
            out[k] = int(v)
    return out


@contextlib.contextmanager
def stop_signals() -> Iterator[None]:
    """Ctrl-C and SIGTERM raise `KeyboardInterrupt` inside the block (so the teardown runs) and the CLI's
    own Ctrl-C deadline (which would end the process before the teardown) is switched off."""
    with contextlib.suppress(ValueError):
        signal.set_wakeup_fd(-1)

    def raise_interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    old_int = signal.signal(signal.SIGINT, raise_interrupt)
    old_term = signal.signal(signal.SIGTERM, raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)
