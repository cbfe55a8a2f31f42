"""Atomic output directories: a run writes into a temporary sibling of `--out`, writes `manifest.json`
last (the run id, the nandstack version, the config hash and every file's SHA-256), then renames the
directory into place. A reader therefore sees either the previous complete directory or the new complete
one; a directory without a manifest (a crash before the rename leaves only a hidden `.NAME.tmp-*`
sibling) is an incomplete run, and `verify_manifest` says so.

What may stand at `--out` (`check_out_dir`, the one check every writer of an output folder goes
through, before anything is written and again just before the folder is moved into place): nothing; an
empty folder; or, with `overwrite`, a folder a nandstack run wrote — one whose `manifest.json` names a
nandstack version (`is_nandstack_dir`). Anything else is refused and left untouched: a symbolic link
(never followed, dangling or not), a file, a device, a FIFO, a socket, a folder holding other things
(also a results folder of a version before manifests: remove it yourself), and the current folder, the
file-system root, the home folder or any folder above one of them. Concurrent runs into one `--out`
each publish a complete directory; the last rename wins.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ._core import NandstackError
from ._interrupt import cleanup_on_exit

__all__ = [
    "OutputError",
    "atomic_output_dir",
    "check_out_dir",
    "is_nandstack_dir",
    "staged_file",
    "verify_manifest",
    "write_manifest",
]

MANIFEST = "manifest.json"


class OutputError(NandstackError):
    """An output directory cannot be written (it exists and may not be replaced, or the file system
    refused)."""


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_manifest(folder: Path, info: Mapping[str, Any]) -> None:
    """Hash every file under `folder` (recursively, sorted) and write `manifest.json` with `info`."""
    files = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and p.name != MANIFEST:
            files[p.relative_to(folder).as_posix()] = {"sha256": _sha256(p), "bytes": p.stat().st_size}
    manifest = {**dict(info), "files": files}
    tmp = folder / (MANIFEST + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, folder / MANIFEST)


def verify_manifest(folder: str | os.PathLike[str]) -> list[str]:
    """Problems of an output directory (empty list: complete and intact): a missing manifest, files
    missing, extra or changed."""
    folder = Path(folder)
    man = folder / MANIFEST
    if not man.is_file():
        return [f"{folder}: no {MANIFEST}: an incomplete run"]
    try:
        listed = json.loads(man.read_text(encoding="utf-8"))["files"]
    except (ValueError, KeyError) as e:
        return [f"{man}: unreadable manifest ({e})"]
    problems = []
    present = {
        p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST
    }
    for name in sorted(set(listed) - present):
        problems.append(f"{folder}: {name} is listed in the manifest but missing")
    for name in sorted(present - set(listed)):
        problems.append(f"{folder}: {name} is not in the manifest")
    for name in sorted(present & set(listed)):
        if _sha256(folder / name) != listed[name]["sha256"]:
            problems.append(f"{folder}: {name} does not match its SHA-256 in the manifest")
    return problems


@contextlib.contextmanager
def staged_file(folder: Path, name: str) -> Iterator[Path]:
    """A path to give the engine for a file it streams (the time series): on Linux an anonymous file
    (`O_TMPFILE`) in `folder`, linked in as `name` when the block ends normally — a process killed
    meanwhile leaves no file behind; elsewhere simply `folder / name`."""
    fd = _anonymous_file(folder)
    if fd is None:
        yield folder / name
        return
    try:
        path = f"/proc/self/fd/{fd}"
        yield Path(path)
        if not _link_anonymous(path, folder / name):
            with open(path, "rb") as src, open(folder / name, "wb") as dst:
                shutil.copyfileobj(src, dst)
    finally:
        os.close(fd)


def _anonymous_file(folder: Path) -> int | None:
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return os.open(folder, flag | os.O_WRONLY, 0o644)
    except OSError:  # a file system without O_TMPFILE
        return None


def _link_anonymous(proc_path: str, target: Path) -> bool:
    """`linkat(AT_FDCWD, "/proc/self/fd/N", AT_FDCWD, target, AT_SYMLINK_FOLLOW)` (os.link cannot)."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        at_fdcwd, at_symlink_follow = -100, 0x400
        return (
            libc.linkat(at_fdcwd, proc_path.encode(), at_fdcwd, os.fsencode(target), at_symlink_follow) == 0
        )
    except (OSError, AttributeError):
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale_temps(out: Path) -> None:
    """Temporary siblings left by runs that died (their process is gone): unfinished `.tmp-*` ones and
    `.old-*` ones (a replaced directory a run had not finished deleting)."""
    for p in [*out.parent.glob(f".{out.name}.tmp-*"), *out.parent.glob(f".{out.name}.old-*")]:
        try:
            pid = int(p.name.rsplit("-", 2)[-2])
        except (ValueError, IndexError):
            continue
        if not _alive(pid):
            shutil.rmtree(p, ignore_errors=True)


@contextlib.contextmanager
def atomic_output_dir(
    out: str | os.PathLike[str], *, overwrite: bool, info: Mapping[str, Any] | None = None
) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Yield `(tmp, info)`: write the run's files into `tmp`; on a normal exit the manifest (with `info`,
    which the block may complete) is written and `tmp` replaces `out`. On an exception `tmp` is removed
    and nothing is published — except an interrupt whose block asked to publish (`info["publish"]`)."""
    out = check_out_dir(out, overwrite=overwrite)
    out.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(out)
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    meta: dict[str, Any] = dict(info or {})
    with cleanup_on_exit(tmp):
        try:
            yield tmp, meta
        except BaseException:
            if not meta.pop("publish", False):
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            _publish(tmp, out, meta, overwrite)
            raise
        meta.pop("publish", None)
        _publish(tmp, out, meta, overwrite)


def _publish(tmp: Path, out: Path, meta: Mapping[str, Any], overwrite: bool) -> None:
    try:
        _move_into_place(tmp, out, meta, overwrite)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _move_into_place(tmp: Path, out: Path, meta: Mapping[str, Any], overwrite: bool) -> None:
    write_manifest(tmp, meta)
    for _ in range(100):
        try:
            os.rename(tmp, out)  # atomic when `out` does not exist (or is an empty directory)
            return
        except OSError:
            if not os.path.lexists(out):
                continue
            check_out_dir(out, overwrite=overwrite)  # what stands there now (another run may have put it)
            old = out.parent / f".{out.name}.old-{os.getpid()}-{uuid.uuid4().hex[:8]}"
            try:
                os.rename(out, old)
            except OSError:
                continue  # another run moved it first
            with contextlib.suppress(OSError):
                os.rename(tmp, out)
                shutil.rmtree(old, ignore_errors=True)
                return
            shutil.rmtree(old, ignore_errors=True)
    raise OutputError(f"could not move the finished run into {out} (other runs kept replacing it)")


def is_nandstack_dir(folder: str | os.PathLike[str]) -> bool:
    """Whether `folder` (not a link) holds the `manifest.json` of a nandstack run: a JSON object with
    `nandstack_version` and `files` (what `write_manifest` writes; `verify_manifest` checks the rest)."""
    man = Path(folder) / MANIFEST
    if os.path.islink(folder) or not os.path.isdir(folder) or os.path.islink(man) or not man.is_file():
        return False
    try:
        data = json.loads(man.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "nandstack_version" in data and isinstance(data.get("files"), dict)


def check_out_dir(out: str | os.PathLike[str], *, overwrite: bool) -> Path:
    """`out` as a `Path` if a run may publish its folder there (see the module's docstring), else
    `OutputError` naming the path and why. Touches nothing."""
    shown = os.fspath(out)  # as the user wrote it (Path("./") would say ".")
    out = Path(out)
    if out.name in ("", ".", ".."):
        raise OutputError(f"{shown}: give --out a folder by name (not `.`, `..` or `/`)")
    here = Path(os.path.abspath(out))
    here = Path(os.path.realpath(here.parent)) / here.name  # the folders above it as they really are
    for name, special in (("the current folder", Path.cwd()), ("the home folder", Path.home())):
        special = Path(os.path.realpath(special))
        if here == special or here in special.parents:
            what = name if here == special else f"a folder above {name}"
            raise OutputError(f"{shown}: refusing to use {what} as an output folder")
    if here.parent == here:
        raise OutputError(f"{shown}: refusing to use the file-system root as an output folder")
    for _ in range(100):  # concurrent runs may replace the folder while it is examined: look again
        verdict = _what_stands(out, shown, overwrite)
        if verdict is not None:
            return out
    raise OutputError(f"{shown}: other runs kept replacing it while it was examined")


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _what_stands(out: Path, shown: str, overwrite: bool) -> bool | None:
    """True when a run may publish at `out`; `OutputError` when not; None when the folder changed while
    it was examined (another run moved it away or put its own there): examine again."""
    try:
        st = os.lstat(out)
    except FileNotFoundError:
        return True
    except OSError as e:
        raise OutputError(f"{shown}: cannot be examined ({e.strerror or e})") from None
    kind = _kind(st.st_mode)
    if kind == "link":
        raise OutputError(
            f"{shown} is a symbolic link: nandstack never writes through or replaces a link at --out; "
            "give the folder's own path"
        )
    if kind != "folder":
        raise OutputError(f"{shown} is {kind}, not a folder: nandstack only replaces a folder a run wrote")
    try:
        with os.scandir(out) as entries:
            empty = next(entries, None) is None
    except FileNotFoundError:
        return None
    ours = empty or is_nandstack_dir(out)
    try:
        if not _same(st, os.lstat(out)):
            return None
    except FileNotFoundError:
        return None
    if empty:
        return True  # an empty folder: nothing to lose
    if not ours:
        raise OutputError(
            f"{shown} is a folder nandstack did not write (no nandstack {MANIFEST}): refusing to replace it; "
            "choose another --out (a results folder from a version before manifests: remove it yourself)"
        )
    if not overwrite:
        raise OutputError(f"{shown} exists: pass --overwrite to replace it (a run replaces the folder whole)")
    return True


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular folder"
