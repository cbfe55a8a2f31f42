"""Read TOML (tomllib on 3.11+, tomli before) and write it back for nested dicts of scalars and lists."""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
import sys
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

__all__ = ["TOMLDecodeError", "dumps", "loads"]

TOMLDecodeError = tomllib.TOMLDecodeError
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def loads(text: str) -> dict[str, Any]:
    """Parse TOML text into a dict."""
    return tomllib.loads(text)


def dumps(data: dict[str, Any]) -> str:
    """Serialize a dict of dicts/scalars/lists as TOML: scalars first, then one `[table]` per nested dict.

    Lists of dicts become inline tables. `None` has no TOML form and raises `ValueError`.
    """
    lines: list[str] = []
    _write_table(lines, [], data)
    return "\n".join(lines).lstrip("\n") + "\n"


def _write_table(lines: list[str], path: list[str], table: dict[str, Any]) -> None:
    scalars = [(k, v) for k, v in table.items() if not isinstance(v, dict)]
    tables = [(k, v) for k, v in table.items() if isinstance(v, dict)]
    # A table header is only needed when the table holds values itself (or is empty), as in `[ftl]`.
    if path and (scalars or not tables):
        lines.append("")
        lines.append("[" + ".".join(_key(p) for p in path) + "]")
    for key, value in scalars:
        lines.append(f"{_key(key)} = {_value(value, [*path, key])}")
    for key, value in tables:
        _write_table(lines, [*path, key], value)


def _key(key: str) -> str:
    if not isinstance(key, str):
        raise ValueError(f"TOML keys must be strings, got {key!r}")
    return key if _BARE_KEY.match(key) else json.dumps(key)


def _value(value: Any, path: list[str]) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        # A JSON string literal is a valid TOML basic string (same escapes, \uXXXX for the rest).
        return json.dumps(value)
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v, path) for v in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{_key(k)} = {_value(v, [*path, k])}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    raise ValueError(f"cannot write `{'.'.join(path)}` = {value!r} as TOML ({type(value).__name__})")
