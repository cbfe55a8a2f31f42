"""One home for data: where the data sets (block and memory traces, the Silesia corpus, the real-kernel
captures) are found, whether they are whole, and how to get them (docs/data.md).

Every data set is listed in `data_registry.json` (shipped in the package) with its files, their sizes and
SHA-256. A data set `NAME` is the folder `ROOT/NAME`; the root is, first match wins:

1. the set's own folder from an older variable (`NANDSTACK_TRACES`, `NANDSTACK_CORPUS_DIR`,
   `NANDSTACK_KERNEL_SWAP` / `NANDSTACK_KSWAP_TRACES`, `NANDSTACK_CAPTURES`; `--captures DIR` sets these):
   a folder of the user's own files, not checked against the registry;
2. `--data DIR` (the CLI exports it as `$NANDSTACK_DATA`, so the Rust engine and worker processes see it);
3. `$NANDSTACK_DATA`;
4. with neither set: `../shared/traces` beside the source checkout, `../shared/traces` from the working
   directory, then the download cache (`nandstack data --fetch`), the first that holds the set's folder.

An experiment asks for its data with `require`, which raises `DataError` naming what is missing and how to
get it; nothing runs on part of a data set.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._core import NandstackError

#: The one setting: the folder holding `block/`, `memory/`, `compress/`, `kernel-swap/`, … .
DATA_ENV = "NANDSTACK_DATA"
#: The data sets, in the order `nandstack data` lists them.
NAMES = ("block", "memory", "compress", "kernel-swap", "kernel-zswap", "kernel-zram")
_REGISTRY_FILE = Path(__file__).with_name("data_registry.json")


class DataError(NandstackError):
    """A data set an experiment needs is missing, incomplete or does not verify; the message lists what
    and how to get it (`nandstack data`)."""


@dataclass(frozen=True)
class Location:
    """Where a data set was looked for: `path` (None when not found), how it was chosen, what was tried."""

    name: str
    path: Path | None
    origin: str
    tried: tuple[Path, ...] = ()
    user_folder: bool = False  # named by an older per-set variable: the user's own files


@dataclass
class Status:
    """One data set's state, for `nandstack data`."""

    name: str
    title: str
    location: Location
    missing: list[str] = field(default_factory=list)  # registry files absent or of the wrong size
    bad: list[str] = field(default_factory=list)  # present, right size, wrong SHA-256
    verified: bool | None = None  # None: not checked
    get: str = ""

    def as_dict(self) -> dict[str, Any]:
        loc = self.location
        return {
            "name": self.name,
            "title": self.title,
            "path": str(loc.path) if loc.path else None,
            "origin": loc.origin,
            "tried": [str(t) for t in loc.tried],
            "files": len(registry()[self.name]["files"]),
            "missing": self.missing,
            "bad": self.bad,
            "verified": self.verified,
            "get": self.get,
        }


_registry: dict[str, Any] | None = None


def registry() -> dict[str, Any]:
    """The data sets: name → {title, aliases, get, files: {file: {bytes, sha256[, url, source]}}}."""
    global _registry
    if _registry is None:
        _registry = json.loads(_REGISTRY_FILE.read_text(encoding="utf-8"))["sets"]
    return _registry


def set_root(path: str | os.PathLike[str]) -> Path:
    """Use `path` as the data root for this process and its children (what `--data DIR` does)."""
    root = Path(path).expanduser().resolve()
    os.environ[DATA_ENV] = str(root)
    return root


def cache_dir() -> Path:
    """Where `nandstack data --fetch` puts files with no root set, and where verification results are
    kept: `$XDG_CACHE_HOME/nandstack`, else `~/.cache/nandstack`."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "nandstack"


def default_roots() -> list[Path]:
    """The roots searched with no setting: beside the source checkout, from the working directory, the
    download cache."""
    checkout = Path(__file__).resolve().parents[3] / "shared" / "traces"
    here = (Path.cwd().parent / "shared" / "traces").resolve()
    roots = [checkout, here, cache_dir() / "traces"]
    return [r for i, r in enumerate(roots) if r not in roots[:i]]


def _env(name: str) -> str | None:
    value = os.environ.get(name)
    return value if value else None


def locate(name: str) -> Location:
    """Where data set `name` is (see the module doc for the order)."""
    entry = registry()[name]
    for alias in entry["aliases"]:
        if _env(alias):
            folder = Path(_env(alias) or "").expanduser()
            found = folder if folder.is_dir() else None
            return Location(name, found, f"${alias}", (folder,), user_folder=True)
    root = _env(DATA_ENV)
    if root:
        folder = Path(root).expanduser() / name
        return Location(name, folder if folder.is_dir() else None, f"--data or ${DATA_ENV}", (folder,))
    tried = tuple(r / name for r in default_roots())
    found = next((t for t in tried if t.is_dir()), None)
    return Location(name, found, "default search", tried)


def _absent(name: str, folder: Path, files: list[str]) -> list[str]:
    """The files of `files` not in `folder` with their registry size."""
    listed = registry()[name]["files"]
    out = []
    for f in files:
        try:
            size = (folder / f).stat().st_size
        except OSError:
            out.append(f)
            continue
        if f in listed and size != listed[f]["bytes"]:
            out.append(f"{f} ({size:,} bytes, not {listed[f]['bytes']:,})")
    return out


def public(name: str) -> bool:
    """Whether every file of data set `name` has a public URL (`nandstack data --fetch` can get it)."""
    return all("url" in f for f in registry()[name]["files"].values())


def how_to_get(name: str) -> str:
    return str(registry()[name]["get"])


def _missing_text(name: str, loc: Location, missing: list[str]) -> str:
    entry = registry()[name]
    if loc.path is None:
        where = ", ".join(str(t) for t in loc.tried) or "nowhere"
        head = f"data set `{name}` ({entry['title']}) not found (looked in {where}, via {loc.origin})"
    else:
        shown = ", ".join(missing[:8]) + (f", … ({len(missing) - 8} more)" if len(missing) > 8 else "")
        head = (
            f"data set `{name}` in {loc.path} is incomplete: {len(missing)} of "
            f"{len(entry['files'])} files missing or of the wrong size ({shown})"
        )
    return (
        f"{head}. How to get it: {entry['get']}. Then give the folder holding `{name}/` with --data DIR "
        f"or ${DATA_ENV} (`nandstack data` lists every data set)"
    )


def require(name: str, files: list[str] | None = None) -> Path:
    """The folder of data set `name`, holding `files` (default: every file the registry lists; a user
    folder named by an older variable needs only to exist unless `files` is given). Raises `DataError`
    naming what is missing and how to get it."""
    loc = locate(name)
    if loc.path is None:
        raise DataError(_missing_text(name, loc, []))
    wanted = files if files is not None else ([] if loc.user_folder else list(registry()[name]["files"]))
    missing = _absent(name, loc.path, wanted)
    if missing:
        raise DataError(_missing_text(name, loc, missing))
    return loc.path


def require_all(names: list[str]) -> dict[str, Path]:
    """`require` for each of `names`, raising one `DataError` that lists every set missing."""
    found: dict[str, Path] = {}
    errors = []
    for n in names:
        try:
            found[n] = require(n)
        except DataError as e:
            errors.append(str(e))
    if errors:
        raise DataError("; ".join(errors))
    return found


# --- verification -------------------------------------------------------------------------------------


def _verified_cache() -> Path:
    return cache_dir() / "verified.json"


def _load_cache() -> dict[str, Any]:
    try:
        loaded = json.loads(_verified_cache().read_text(encoding="utf-8"))
        return loaded if isinstance(loaded, dict) else {}
    except (OSError, ValueError):
        return {}


def _save_cache(cache: dict[str, Any]) -> None:
    path = _verified_cache()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(cache, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home: verification still works, it is just not remembered


def sha256_of(path: Path, cache: dict[str, Any] | None = None) -> str:
    """The file's SHA-256, from `cache` when its size and mtime are unchanged (then updated)."""
    st = path.stat()
    key = str(path.resolve())
    hit = (cache or {}).get(key)
    if isinstance(hit, list) and len(hit) == 3 and hit[:2] == [st.st_size, st.st_mtime_ns]:
        return str(hit[2])
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    if cache is not None:
        cache[key] = [st.st_size, st.st_mtime_ns, digest.hexdigest()]
    return digest.hexdigest()


def status(name: str, verify: bool = False, cache: dict[str, Any] | None = None) -> Status:
    """Data set `name`: where it is, which registry files are missing, and (with `verify`) which do not
    match their SHA-256."""
    entry = registry()[name]
    loc = locate(name)
    st = Status(name, entry["title"], loc, get=entry["get"])
    if loc.path is None:
        st.missing = list(entry["files"])
        return st
    st.missing = _absent(name, loc.path, list(entry["files"]))
    if verify:
        present = [f for f in entry["files"] if (loc.path / f).is_file() and f not in st.missing]
        st.bad = [f for f in present if sha256_of(loc.path / f, cache) != entry["files"][f]["sha256"]]
        st.verified = not st.bad and not st.missing
    return st


def statuses(verify: bool = False) -> list[Status]:
    """Every data set's `status`; verification results are remembered by path, size and mtime."""
    cache = _load_cache() if verify else None
    out = [status(n, verify, cache) for n in NAMES]
    if cache is not None:
        _save_cache(cache)
    return out


# --- fetching -----------------------------------------------------------------------------------------


def fetch(names: list[str], dest: Path | None = None) -> Path:
    """Download the public data sets `names` into `dest` (default: the root in use, else the cache) with
    pooch, checking every file's SHA-256; files already there and whole are kept. Returns the root."""
    import pooch

    root = dest or (Path(_env(DATA_ENV) or "") if _env(DATA_ENV) else cache_dir() / "traces")
    for name in names:
        files = registry()[name]["files"]
        if not public(name):
            raise DataError(f"data set `{name}` has no public copy: {how_to_get(name)}")
        store = pooch.create(
            path=root / name,
            base_url="",
            registry={f: f"sha256:{e['sha256']}" for f, e in files.items()},
            urls={f: e["url"] for f, e in files.items()},
        )
        for f in files:
            try:
                store.fetch(f)
            except Exception as e:  # network or hash failure: name the file and its source
                raise DataError(f"could not fetch {name}/{f} from {files[f]['url']}: {e}") from e
    return root
