"""`Config`: a validated, immutable simulation config, and the stable config hash.

A `Config` is built from the default TOML (or a file, or a dict) plus dotted overrides and is checked by
the engine (`_core.validate_config`: unknown keys, types, ranges, geometry) when it is built, so a bad
key fails at once with a `ConfigError` that names it, before any simulation starts.

The **config hash** identifies an experiment: SHA-256 of the canonical JSON (sorted keys, no spaces) of
the engine-normalized effective config (every default filled in, the seed included). Two configs that
differ only in how they were written (a key left at its default or spelled out) have the same hash.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from typing import Any, Union

from . import _core
from ._core import ConfigError
from .config import (
    Overrides,
    apply_overrides,
    check_depth,
    default_config,
    dumps,
    load_config,
    split_key,
)

__all__ = ["Config", "Section", "canonical_json", "config_hash", "normalize_config"]

ConfigLike = Union["Config", Mapping[str, Any], str, "os.PathLike[str]", None]


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: the byte-stable form that hashes are taken of. A value
    nested deeper than `config.MAX_DEPTH`, or holding something JSON cannot say, is a `ConfigError`."""
    check_depth(value, "config")
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    except (ValueError, TypeError) as e:  # nan/inf, a set, an object, a non-string key
        raise ConfigError(f"config value cannot be passed to the engine: {e}") from None


def normalize_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The engine's effective form of `config` (every default filled in); raises `ConfigError` naming the
    bad key, or `GeometryError` for an impossible device."""
    return json.loads(_core.validate_config(canonical_json(config)))


def config_hash(config: Mapping[str, Any], seed: int | None = None) -> str:
    """Stable 16-hex-digit hash of the normalized config (with `seed` replacing the config's seed)."""
    data = dict(config)
    if seed is not None:
        data["seed"] = seed
    text = canonical_json(normalize_config(data))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class _Table(Mapping[str, Any]):
    """What `Section` and `Config` share: a read-only mapping over `_data` whose keys are also attributes
    (`_no_key` says which table lacks one)."""

    __slots__ = ("_data",)
    _data: Mapping[str, Any]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(self._no_key(name)) from None

    def _no_key(self, name: str) -> str:
        raise NotImplementedError


class Section(_Table):
    """A read-only view of one table of a config: `cfg.device.ftl.gc.victim.policy`, `cfg.device["ftl"]`."""

    __slots__ = ("_path",)

    def __init__(self, data: Mapping[str, Any], path: str) -> None:
        self._data = data
        self._path = path

    def __getitem__(self, key: str) -> Any:
        return _wrap(self._data[key], f"{self._path}.{key}")

    def _no_key(self, name: str) -> str:
        return f"config table `{self._path}` has no key `{name}`"

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(dict(self._data))

    def __repr__(self) -> str:
        return f"Section({self._path!r}, {dict(self._data)!r})"


def _wrap(value: Any, path: str) -> Any:
    return Section(value, path) if isinstance(value, Mapping) else copy.deepcopy(value)


class Config(_Table):
    """A simulation config, validated by the engine when built. Immutable: `set` returns a new `Config`.

    >>> cfg = Config.default().set("device.ftl.over_provisioning", 0.28)
    >>> cfg["device.ftl.over_provisioning"], cfg.device.ftl.gc.victim.policy
    (0.28, 'greedy')

    Dotted keys index nested tables; attribute access walks them (`cfg.workload.pattern`). Building one
    with a bad key or value raises `ConfigError` whose `key` names it (`GeometryError` for an impossible
    device). `to_dict()` is the config as written; `normalized()` has every engine default filled in.
    """

    __slots__ = ()

    def __init__(self, data: Mapping[str, Any] | None = None, *, validate: bool = True) -> None:
        plain = default_config() if data is None else json.loads(canonical_json(dict(data)))
        if validate:
            normalize_config(plain)
        self._data: dict[str, Any] = plain

    # --- constructors -------------------------------------------------------------------------------
    @classmethod
    def default(cls, overrides: Overrides = ()) -> Config:
        """The built-in default config with `overrides` applied."""
        return cls(load_config(None, overrides))

    @classmethod
    def load(cls, path: str | os.PathLike[str], overrides: Overrides = ()) -> Config:
        """A TOML file with `overrides` applied."""
        return cls(load_config(path, overrides))

    @classmethod
    def coerce(cls, config: ConfigLike, overrides: Overrides = ()) -> Config:
        """A `Config` from a `Config`, dict, TOML path or `None` (the default), with `overrides` applied."""
        if isinstance(config, Config):
            return config.set(overrides) if overrides else config
        if config is None or isinstance(config, (str, os.PathLike)):
            return cls(load_config(config, overrides))
        if isinstance(config, Mapping):
            return cls(apply_overrides(json.loads(canonical_json(dict(config))), overrides))
        raise TypeError(f"config must be a Config, dict, path or None, not {type(config).__name__}")

    # --- access -------------------------------------------------------------------------------------
    def __getitem__(self, key: str) -> Any:
        value: Any = self._data
        for part in split_key(key) if "." in key or '"' in key else [key]:
            if not isinstance(value, Mapping) or part not in value:
                raise KeyError(key)
            value = value[part]
        return _wrap(value, key)

    def _no_key(self, name: str) -> str:
        return f"config has no top-level key `{name}`"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Config):
            return self.normalized() == other.normalized()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.hash())

    def __repr__(self) -> str:
        return f"Config(hash={self.hash()!r})"

    @property
    def seed(self) -> int:
        return int(self.normalized()["seed"])

    # --- derivation ---------------------------------------------------------------------------------
    def set(self, key: str | Overrides, value: Any = None) -> Config:
        """A new config with `key = value` (dotted key) or with a list/dict of overrides applied."""
        overrides: Overrides = {key: value} if isinstance(key, str) and "=" not in key else key
        if isinstance(overrides, str):
            overrides = [overrides]
        return Config(apply_overrides(self.to_dict(), overrides))

    def with_seed(self, seed: int) -> Config:
        return self.set("seed", seed)

    # --- output -------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the config as written (tables as dicts)."""
        return copy.deepcopy(self._data)

    def normalized(self) -> dict[str, Any]:
        """The engine's effective form: every default filled in (`null` for unset optional keys)."""
        return normalize_config(self._data)

    def to_json(self) -> str:
        return canonical_json(self._data)

    def to_toml(self) -> str:
        return dumps(self._data)

    def hash(self, seed: int | None = None) -> str:
        """The stable config hash (see the module doc); `seed` replaces the config's seed."""
        return config_hash(self._data, seed)
