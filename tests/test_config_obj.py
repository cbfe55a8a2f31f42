"""`nandstack.Config`: engine validation naming the bad key, immutability, access, stable hashes."""

from __future__ import annotations

import json

import pytest

import nandstack
from conftest import TINY, TINY_DICT
from nandstack import Config, ConfigError, GeometryError


def test_default_config_is_valid_and_navigable():
    cfg = Config.default()
    assert cfg["device.ftl.gc.victim.policy"] == "greedy"
    assert cfg.device.ftl.gc.victim.policy == "greedy"
    assert cfg.device.ftl["over_provisioning"] == pytest.approx(0.07)
    assert cfg.seed == 42
    assert "device.ftl.over_provisioning" in cfg
    assert "device.ftl.no_such_key" not in cfg
    with pytest.raises(AttributeError, match="no key `nope`"):
        cfg.device.ftl.nope  # noqa: B018


def test_set_returns_a_new_validated_config():
    base = Config.default()
    changed = base.set("device.ftl.over_provisioning", 0.28)
    assert changed["device.ftl.over_provisioning"] == 0.28
    assert base["device.ftl.over_provisioning"] == pytest.approx(0.07)  # unchanged
    assert base.set(["workload.read_fraction=0.5"])["workload.read_fraction"] == 0.5
    assert base.set({"workload.pattern": "zipf"}).workload.pattern == "zipf"
    assert base.with_seed(7).seed == 7


def test_views_do_not_leak_mutation():
    cfg = Config.default()
    order = cfg["device.ftl.striping_order"]
    order.append("x")
    assert cfg["device.ftl.striping_order"] == ["channel", "chip", "die", "plane"]
    data = cfg.to_dict()
    data["seed"] = 1
    assert cfg.seed == 42


@pytest.mark.parametrize(
    ("override", "key", "text"),
    [
        ("device.geometry.chanels=2", "device.geometry.chanels", "unknown field"),
        ("precondition.fill_fraction=2.0", "precondition.fill_fraction", "must be in [0, 1]"),
        ("device.ftl.over_provisioning=lots", "device.ftl.over_provisioning", "invalid type"),
        ("device.ftl.gc.victim.policy=best", "device.ftl.gc.victim", "best"),
        ("workload.requests=0", "workload.requests", "at least 1"),
    ],
)
def test_bad_values_raise_config_error_naming_key_and_value(override, key, text):
    with pytest.raises(ConfigError) as info:
        Config.default([override])
    assert info.value.key.startswith(key)
    assert text in str(info.value)


def test_impossible_geometry_raises_geometry_error():
    with pytest.raises(GeometryError) as info:
        Config.default(["device.geometry.page_size_bytes=1000"])
    assert info.value.field == "page_size_bytes"
    assert "1000" in str(info.value)


def test_validation_is_cheap_even_for_a_huge_device():
    # The 1 TiB preset is validated without allocating it.
    cfg = Config.default(["device.preset=tlc-1tb"])
    assert cfg["device.preset"] == "tlc-1tb"


def test_hash_is_stable_and_ignores_spelling():
    a = Config.default(TINY)
    b = Config(
        {
            "device": {
                "geometry": {k.split(".")[-1]: v for k, v in TINY_DICT.items() if "geometry" in k},
                "ftl": {"over_provisioning": 0.25},
            },
            "workload": {"requests": 20000},
        }
    )
    assert a.hash() == b.hash()  # defaults spelled out or left implicit: same experiment
    assert a == b
    assert len(a.hash()) == 16 and int(a.hash(), 16) >= 0
    assert a.hash() != a.set("seed", 43).hash()
    assert a.hash(seed=43) == a.set("seed", 43).hash()
    assert a.hash() != a.set("workload.read_fraction", 0.1).hash()
    # Key order does not matter.
    reordered = dict(reversed(list(a.to_dict().items())))
    assert Config(reordered).hash() == a.hash()


def test_hash_is_the_same_across_processes():
    import subprocess
    import sys

    code = f"import nandstack; print(nandstack.Config.default({TINY!r}).hash())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == Config.default(TINY).hash()


def test_normalized_fills_every_default():
    normalized = Config.default().normalized()
    assert normalized["workload"]["kind"] == "synthetic" and "trace" not in normalized["workload"]
    assert normalized["device"]["geometry"]["channels"] is None  # the preset decides
    assert normalized["workload"]["zipf_theta"] is None


def test_toml_and_json_round_trip(tmp_path):
    cfg = Config.default(TINY)
    path = tmp_path / "c.toml"
    path.write_text(cfg.to_toml())
    assert Config.load(path) == cfg
    assert Config(json.loads(cfg.to_json())) == cfg


def test_coerce_accepts_config_dict_path_and_none(tmp_path):
    cfg = Config.default(TINY)
    path = tmp_path / "c.toml"
    path.write_text(cfg.to_toml())
    for value in (cfg, cfg.to_dict(), path, str(path)):
        assert Config.coerce(value) == cfg
    assert Config.coerce(None) == Config.default()
    assert Config.coerce(cfg, ["seed=3"]).seed == 3
    with pytest.raises(TypeError):
        Config.coerce(42)  # type: ignore[arg-type]


def test_run_accepts_a_config_object():
    cfg = Config.default(TINY)
    result = nandstack.run(cfg, seed=5, record=False)
    assert result.config["seed"] == 5
    assert result.config_hash == cfg.hash(seed=5)
