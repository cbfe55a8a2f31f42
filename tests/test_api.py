"""The Python API: `nandstack.run`, `Result`, determinism, progress callbacks and the exception hierarchy."""

from __future__ import annotations

import json

import pytest

import nandstack
from conftest import TINY, without_wall_clock
from nandstack import _toml, config


def tiny_run(**kwargs):
    overrides = [*TINY, *kwargs.pop("set", [])]
    return nandstack.run(set=overrides, **kwargs)


def test_same_seed_gives_identical_reports():
    a = tiny_run(seed=11)
    b = tiny_run(seed=11)
    assert without_wall_clock(a.summary) == without_wall_clock(b.summary)
    assert "wall_seconds" in a.summary


def test_different_seed_gives_different_reports():
    a = without_wall_clock(tiny_run(seed=1).summary)
    b = without_wall_clock(tiny_run(seed=2).summary)
    for report in (a, b):
        report.pop("seed")
        report.pop("config", None)
    assert a != b


def test_result_accessors():
    result = tiny_run(seed=4)
    assert result["waf"] == result.summary["waf"]
    assert "waf" in result
    assert result["seed"] == 4
    assert result.config["seed"] == 4  # the effective config reproduces the run
    assert json.loads(result.to_json()) == result.summary
    assert "waf=" in repr(result)
    with pytest.raises(KeyError):
        result["no_such_metric"]


def test_config_as_dict_path_or_default_agree(tmp_path):
    config = nandstack.load_config(None, TINY)
    path = tmp_path / "tiny.toml"
    path.write_text(_toml.dumps(config))
    from_dict = nandstack.run(config, seed=9)
    from_path = nandstack.run(path, seed=9)
    from_default = nandstack.run(set=TINY, seed=9)
    assert from_dict.config == config | {"seed": 9}
    assert without_wall_clock(from_dict.summary) == without_wall_clock(from_path.summary)
    assert without_wall_clock(from_dict.summary) == without_wall_clock(from_default.summary)


def test_overrides_as_mapping():
    overrides = {".".join(path): value for path, value in map(config.parse_override, TINY)}
    overrides["workload.requests"] = 5000
    result = nandstack.run(set=overrides, seed=1)
    assert result.config["workload"]["requests"] == 5000
    assert result.config["device"]["geometry"]["channels"] == 1


def test_verify_run():
    result = tiny_run(seed=2, verify=True)
    assert result["waf"] >= 1.0


def test_progress_is_reported():
    calls = []
    tiny_run(seed=3, progress=lambda phase, done, total: calls.append((phase, done, total)))
    assert calls
    for phase, done, total in calls:
        assert isinstance(phase, str) and phase
        assert 0 <= done <= total


def test_exception_in_progress_callback_stops_the_run():
    def boom(phase, done, total):
        raise ValueError("stop here")

    with pytest.raises(ValueError, match="stop here"):
        tiny_run(seed=3, progress=boom)


def test_keyboard_interrupt_in_progress_callback_propagates():
    def interrupt(phase, done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tiny_run(seed=3, progress=interrupt)


def test_unknown_key_raises_config_error_naming_it():
    with pytest.raises(nandstack.ConfigError, match="chanels") as info:
        tiny_run(set=["device.geometry.chanels=2"])
    assert isinstance(info.value, nandstack.NandstackError)
    assert "chanels" in info.value.key


def test_bad_config_type():
    with pytest.raises(TypeError):
        nandstack.run(42)  # type: ignore[arg-type]


def test_exception_hierarchy():
    subclasses = [
        nandstack.ConfigError,
        nandstack.GeometryError,
        nandstack.TraceError,
        nandstack.OutOfRangeError,
        nandstack.DeviceFullError,
        nandstack.InvariantError,
    ]
    for cls in subclasses:
        assert issubclass(cls, nandstack.NandstackError)
        assert cls.__module__ == "nandstack"
    assert issubclass(nandstack.NandstackError, Exception)
    assert isinstance(nandstack.__version__, str) and nandstack.__version__
