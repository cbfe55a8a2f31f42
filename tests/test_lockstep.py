"""Host programs that read the same reference streams run side by side in one worker
(`nandstack.sweep.runner._units` groups them, `execute_task` hands the group to `_core.run_many`): each
outcome is the outcome of the member run alone, `wall_*` figures aside."""

from __future__ import annotations

import copy
from typing import Any

from nandstack.sweep.backends import _execute_one, execute_task
from nandstack.sweep.runner import _lockstep, _stream_key, _units

DEVICE = {
    "kind": "block",
    "geometry": {
        "channels": 2,
        "chips_per_channel": 1,
        "dies_per_chip": 1,
        "planes_per_die": 2,
        "blocks_per_plane": 512,
        "pages_per_block": 64,
        "page_size_bytes": 4096,
    },
}


def phone(seed: int = 7, discard: str = "off", ram_mib: int = 40) -> dict[str, Any]:
    apps = [{"anon_mib": a, "file_mib": f} for a, f in [(12, 6), (20, 8), (14, 6), (16, 4)]]
    mobile = {
        "type": "mobile",
        "scenario": "game",
        "minute_ms": 20.0,
        "foreground_refs_per_ms": 300,
        "background_refs_per_ms": 10,
        "apps": apps,
    }
    return {
        "seed": seed,
        "workload": {"kind": "host", "processes": [{"name": "phone", "workload": mobile}]},
        "host": {
            "ram_mib": ram_mib,
            "pagecache": {"offset_mib": 0},
            "swap": {"size_mib": 96, "offset_mib": 200, "discard": {"mode": discard}},
        },
        "device": copy.deepcopy(DEVICE),
    }


def strip_wall(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: strip_wall(x) for k, x in v.items() if not k.startswith("wall_")}
    if isinstance(v, list):
        return [strip_wall(x) for x in v]
    return v


def test_runs_on_the_same_streams_are_grouped_to_run_side_by_side():
    block = {"seed": 1, "device": {"kind": "block"}, "workload": {}}
    configs = [phone(), phone(discard="itrim"), phone(seed=8), block, phone(ram_mib=48)]
    assert _stream_key(configs[0]) == _stream_key(configs[1]) == _stream_key(configs[4])
    assert _stream_key(configs[2]) != _stream_key(configs[0])
    assert _stream_key(block) is None
    assert _stream_key({**phone(), "run": {"refs_out": "x.nsref"}}) is None
    units = _units(configs, workers=1)  # cap ceil(5 / 2) = 3
    assert units == [[0, 1, 4], [2], [3]]
    assert _lockstep([configs[k] for k in units[0]])
    assert not _lockstep([configs[0], configs[2]])
    assert not _lockstep([configs[0]])


def test_a_lockstep_group_gives_each_members_own_outcome():
    configs = [phone(), phone(discard="itrim"), phone(ram_mib=48), phone(seed=8)]
    configs[2]["host"]["swap"]["allocator"] = "cluster"
    alone = [_execute_one({"config": c}, keep=False) for c in configs]
    group = execute_task({"group": [{"config": c} for c in configs], "lockstep": True})["group"]
    assert len(group) == len(configs)
    for a, g in zip(alone, group):
        assert "error" not in g, g
        assert strip_wall(a["summary"]) == strip_wall(g["summary"])
        assert a["config"] == g["config"]
        assert g["cpu_seconds"] > 0
    # Not vacuous: the schemes differ and the phone swapped.
    assert strip_wall(alone[0]["summary"]) != strip_wall(alone[1]["summary"])
    assert alone[0]["summary"]["host"]["pswpout"] > 0


def test_a_refused_member_is_its_own_error():
    bad = phone()
    bad["host"]["swap"]["size_mib"] = -1
    group = execute_task({"group": [{"config": phone()}, {"config": bad}], "lockstep": True})["group"]
    assert "summary" in group[0]
    assert group[1]["error"].startswith("ConfigError"), group[1]
