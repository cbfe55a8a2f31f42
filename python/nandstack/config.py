"""Load a config (a TOML file or the built-in default) and apply `key=value` overrides on dotted paths.

Keys are not validated here: the engine rejects unknown keys with a message that names them.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Iterable, Mapping
from typing import Any, Union

from . import _core, _toml
from ._core import ConfigError

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "Overrides",
    "apply_overrides",
    "check_depth",
    "default_config",
    "dumps",
    "load_config",
    "parse_override",
    "read_text",
    "set_path",
]

#: Deepest nesting a config may have: tables, lists and inline tables each count one level, and so does
#: each part of a dotted key (`a.b.c` is three). Real configs use about six; deeper input is refused by
#: name before anything recurses over it (docs/reliability.md, "Hostile files and databases").
MAX_DEPTH = 64
#: Largest config or sweep spec file read, bytes: a path that never ends (`/dev/zero`) is refused.
MAX_FILE_BYTES = 16 << 20

#: `["device.ftl.gc.victim.policy=fifo", ...]`, or a mapping of dotted key to an already-typed value.
Overrides = Union[Iterable[str], Mapping[str, Any]]


def default_config() -> dict[str, Any]:
    """The built-in default config (what `nandstack run` uses without a file)."""
    return _toml.loads(_core.default_config_toml())


def load_config(path: str | os.PathLike[str] | None = None, overrides: Overrides = ()) -> dict[str, Any]:
    """Read the TOML file at `path` (or the default config when `None`) and apply `overrides`.

    Raises `FileNotFoundError`/`OSError` for unreadable files and `ConfigError` for bad TOML or overrides.
    """
    config = default_config() if path is None else loads_toml(read_text(path), os.fspath(path))
    return apply_overrides(config, overrides)


def loads_toml(text: str, where: str) -> dict[str, Any]:
    """Parse TOML text read from `where` (a file name) and check its depth: `ConfigError` naming `where`
    for bad TOML or nesting deeper than `MAX_DEPTH`."""
    try:
        data = _toml.loads(text)
    except _toml.TOMLDecodeError as e:
        raise _error(f"{where}: invalid TOML: {e}") from None
    except RecursionError:
        raise _error(f"{where}: nested deeper than the limit of {MAX_DEPTH} levels (MAX_DEPTH)") from None
    check_depth(data, where)
    return data


def check_depth(value: Any, where: str, prefix: tuple[str, ...] = ()) -> None:
    """Refuse `value` (with `prefix` the dotted key it sits under) if tables and lists nest in it deeper
    than `MAX_DEPTH`: a `ConfigError` naming `where` and the key where the limit is crossed. Iterative,
    so it cannot itself run out of stack."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(value, prefix)]
    while stack:
        item, path = stack.pop()
        if len(path) > MAX_DEPTH:
            key = ".".join(path[:MAX_DEPTH])
            raise _error(
                f"{where}: `{_clip(key)}...` is nested deeper than the limit of {MAX_DEPTH} levels "
                "(MAX_DEPTH); no config needs more than a handful",
                key,
            )
        if isinstance(item, Mapping):
            stack.extend((v, (*path, str(k))) for k, v in item.items())
        elif isinstance(item, (list, tuple)):
            stack.extend((v, (*path, f"[{i}]")) for i, v in enumerate(item))


def read_text(path: str | os.PathLike[str]) -> str:
    """The text of a config or spec file: `OSError` if it cannot be read, `ConfigError` naming the file and
    the byte offset if it is not UTF-8 (a TOML file must be)."""
    with open(path, "rb") as f:
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise _error(
            f"{os.fspath(path)}: larger than {MAX_FILE_BYTES >> 20} MiB (MAX_FILE_BYTES); "
            "is this a config file?"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise _error(
            f"{os.fspath(path)}: line {line}: not UTF-8 text (byte {e.start} is {data[e.start]:#04x}); "
            "a config file is UTF-8 TOML"
        ) from None


def apply_overrides(config: dict[str, Any], overrides: Overrides) -> dict[str, Any]:
    """Apply overrides in order (later ones win) to `config` in place; returns `config`."""
    if isinstance(overrides, Mapping):
        pairs = [(split_key(_key_text(k)), v) for k, v in overrides.items()]
    else:
        if isinstance(overrides, str):
            raise TypeError("overrides must be a list of 'key=value' strings, not a single string")
        pairs = [parse_override(_key_text(item)) for item in overrides]
    for path, value in pairs:
        check_depth(value, "override", tuple(path))
        set_path(config, path, value)
    return config


def parse_override(item: str) -> tuple[list[str], Any]:
    """Parse `key.path=value`. The value is read as a TOML value if it is one (`8`, `0.3`, `true`,
    `"text"`, `[1, 2]`), else kept as the raw string (`greedy`). Dates stay strings."""
    key, sep, raw = item.partition("=")
    if not sep:
        raise _error(
            f"override `{item}` is not of the form key=value (e.g. device.ftl.gc.victim.policy=fifo)", key
        )
    return split_key(key), _parse_value(raw.strip(), key.strip())


def split_key(key: str) -> list[str]:
    """Split a dotted TOML key (`a.b.c`, quoted parts allowed: `a."b.c"`) into its parts (at most
    `MAX_DEPTH`)."""
    key = _key_text(key).strip()
    try:
        parsed: Any = _toml.loads(f"{key} = 0")
    except _toml.TOMLDecodeError:
        raise _error(f"invalid config key `{_clip(key)}` in override", key) from None
    parts: list[str] = []
    while isinstance(parsed, dict):
        (name, parsed), *_ = parsed.items()
        parts.append(name)
    if len(parts) > MAX_DEPTH:
        raise _error(
            f"config key `{_clip(key)}` has {len(parts)} parts, more than the limit of {MAX_DEPTH} "
            "(MAX_DEPTH); no config nests that deep",
            ".".join(parts[:MAX_DEPTH]),
        )
    return parts


def _key_text(key: Any) -> str:
    """A config key given from Python must be a string: a `ConfigError` naming it otherwise."""
    if not isinstance(key, str):
        raise _error(
            f"config key {key!r} is a {type(key).__name__}: keys are dotted strings such as "
            "`device.ftl.over_provisioning`",
            repr(key),
        )
    return key


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def set_path(config: dict[str, Any], path: list[str], value: Any) -> None:
    """Set `config[path[0]][path[1]]... = value`, creating missing tables on the way."""
    table = config
    for i, part in enumerate(path[:-1]):
        child = table.setdefault(part, {})
        if not isinstance(child, dict):
            where = ".".join(path[: i + 1])
            dotted = ".".join(path)
            raise _error(f"cannot set `{dotted}`: `{where}` is a value ({child!r}), not a table", dotted)
        table = child
    table[path[-1]] = value


def dumps(config: Mapping[str, Any]) -> str:
    """The config as TOML text. `None` values (unset optional keys of a normalized config) are left out:
    TOML has no null, and an absent key means the same thing."""
    return _toml.dumps(_without_none(dict(config)))


def _without_none(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value


def _parse_value(raw: str, key: str = "") -> Any:
    try:
        value = _toml.loads(f"v = {raw}")["v"]
    except _toml.TOMLDecodeError:
        return raw
    except RecursionError:
        raise _error(
            f"override `{_clip(key)}`: value `{_clip(raw)}` is nested deeper than the limit of "
            f"{MAX_DEPTH} levels (MAX_DEPTH)",
            key,
        ) from None
    if isinstance(value, (_dt.date, _dt.time)):  # datetime is a date subclass
        return raw
    return value


def _error(msg: str, key: str = "") -> ConfigError:
    """A `ConfigError` shaped like the engine's: the message plus the offending `key` attribute."""
    err = ConfigError(msg)
    err.key = key.strip()
    return err
