"""`nandstack.config`: `--set key=value` parsing, dotted paths, and the TOML writer (no engine runs)."""

from __future__ import annotations

import math

import pytest

from nandstack import ConfigError, _core, _toml, config


@pytest.mark.parametrize(
    ("item", "path", "value"),
    [
        ("device.ftl.gc.victim=greedy", ["device", "ftl", "gc", "victim"], "greedy"),
        ("workload.read_fraction=0.3", ["workload", "read_fraction"], 0.3),
        ("device.geometry.channels=8", ["device", "geometry", "channels"], 8),
        ("run.verify=true", ["run", "verify"], True),
        ("seed=-1", ["seed"], -1),
        ("a.b=1_000", ["a", "b"], 1000),
        ('a.b="8"', ["a", "b"], "8"),
        ("a.b=[1, 2]", ["a", "b"], [1, 2]),
        ("a.b={ x = 1 }", ["a", "b"], {"x": 1}),
        (" a.b = spaced ", ["a", "b"], "spaced"),
        ("a.b=x=y", ["a", "b"], "x=y"),
        ("a.b=", ["a", "b"], ""),
        ("a.b=2024-01-02", ["a", "b"], "2024-01-02"),
        ('a."b.c"=1', ["a", "b.c"], 1),
    ],
)
def test_parse_override(item, path, value):
    assert config.parse_override(item) == (path, value)


@pytest.mark.parametrize("item", ["no_equals", "a..b=1", "=1", "a b=1"])
def test_parse_override_rejects_bad_syntax(item):
    with pytest.raises(ConfigError):
        config.parse_override(item)


def test_missing_equals_error_names_the_key():
    with pytest.raises(ConfigError, match="key=value") as info:
        config.parse_override("workload.requests")
    assert info.value.key == "workload.requests"


def test_overrides_create_tables_and_replace_values():
    cfg = {"seed": 1, "device": {"ftl": {"over_provisioning": 0.07}}}
    config.apply_overrides(cfg, ["device.ftl.gc.victim=greedy", "seed=2", "device.ftl.over_provisioning=0.2"])
    assert cfg == {"seed": 2, "device": {"ftl": {"over_provisioning": 0.2, "gc": {"victim": "greedy"}}}}


def test_later_overrides_win():
    cfg = config.apply_overrides({}, ["a.b=1", "a.b=2"])
    assert cfg == {"a": {"b": 2}}


def test_override_through_a_value_is_an_error():
    with pytest.raises(ConfigError, match="`seed` is a value"):
        config.apply_overrides({"seed": 1}, ["seed.x=2"])


def test_mapping_overrides_keep_python_values():
    cfg = config.apply_overrides({}, {"workload.pattern": "zipf", "a.b": [1, 2]})
    assert cfg == {"workload": {"pattern": "zipf"}, "a": {"b": [1, 2]}}


def test_a_single_string_is_not_a_list_of_overrides():
    with pytest.raises(TypeError):
        config.apply_overrides({}, "a.b=1")


def test_load_config_file_with_overrides(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('seed = 3\n[workload]\npattern = "uniform"\n')
    cfg = config.load_config(path, ["workload.requests=10"])
    assert cfg == {"seed": 3, "workload": {"pattern": "uniform", "requests": 10}}


def test_load_config_bad_toml_is_a_config_error(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[workload\n")
    with pytest.raises(ConfigError, match=r"bad\.toml"):
        config.load_config(path)


def test_load_config_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        config.load_config(tmp_path / "missing.toml")


def test_default_config_is_the_engine_default():
    from nandstack._config_obj import normalize_config

    engine = _toml.loads(_core.default_config_toml())
    loaded = config.load_config()
    # The fill and warm-up are left out: the engine gives each workload kind its own defaults.
    assert loaded == engine
    assert "fill_fraction" not in engine["precondition"]
    assert "warmup_capacity_multiples" not in engine["precondition"]
    assert normalize_config(loaded) == normalize_config(engine)
    # A host program from the default config starts on a fresh device (the host default).
    memtouch = {"type": "memtouch", "pages": 64, "ops": 10, "pattern": "uniform", "write_pct": 50, "seed": 1}
    overrides = {"workload.kind": "host", "workload.processes": [{"name": "m", "workload": memtouch}]}
    host = normalize_config(config.load_config(None, overrides))
    assert host["precondition"]["fill_fraction"] == 0.0
    assert host["precondition"]["warmup_capacity_multiples"] == 0.0


def test_toml_writer_round_trips():
    data = {
        "seed": 42,
        "name": 'quote " backslash \\ tab \t newline \n unicode é ✓',
        "ratio": 0.1,
        "big": 10**18,
        "flag": False,
        "sizes": [4096, 8192],
        "mixed": [{"size_bytes": 4096, "weight": 1.0}],
        "device": {"preset": "x", "geometry": {"channels": 8, "cell_mode": "tlc"}},
        "only": {"nested": {"deep": {"v": 1}}},
        "empty": {},
        "weird key": {"a.b": 1},
    }
    text = _toml.dumps(data)
    assert _toml.loads(text) == data
    assert "[device.geometry]" in text


def test_toml_writer_special_floats():
    text = _toml.dumps({"a": math.inf, "b": -math.inf, "c": math.nan})
    back = _toml.loads(text)
    assert back["a"] == math.inf and back["b"] == -math.inf and math.isnan(back["c"])


def test_toml_writer_rejects_none():
    with pytest.raises(ValueError, match=r"x\.y"):
        _toml.dumps({"x": {"y": None}})
