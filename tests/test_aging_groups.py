"""The sweep runner's grouping of tasks that age the same device (`nandstack.sweep.runner._units`): the
engine keeps the last few aged block or hybrid devices of a worker process (`nandstack_sim::aged`), so tasks
with the same aging go to one worker in order, in groups small enough to keep every worker busy."""

from nandstack.sweep.runner import _aging_hints, _aging_key, _unit_payload, _units


def block(seed=1, fill=0.5, **extra):
    pre = {"fill_fraction": fill}
    return {"seed": seed, "device": {"kind": "block"}, "precondition": pre, "workload": {}, **extra}


def host(precondition):
    workload = {"kind": "host", "processes": []}
    return {"seed": 1, "device": {}, "precondition": precondition, "workload": workload}


def test_only_runs_that_age_a_copyable_device_have_an_aging_key():
    assert _aging_key(block()) is not None
    assert _aging_key(block(fill=0)) is not None  # the warm-up's default still ages
    assert _aging_key(block(precondition={"fill_fraction": 0, "warmup_capacity_multiples": 0})) is None
    assert _aging_key(host({})) is None  # host programs start fresh unless asked
    assert _aging_key(host({"fill_fraction": 0.75})) is not None
    assert _aging_key({**block(), "device": {"kind": "zoned"}}) is None
    # Hybrid stand-ins: the warm-up draws from `[workload.synthetic]`, so stand-ins share their aging,
    # unless an RL agent comes pre-trained or from a file.
    hybrid = {**block(), "device": {"kind": "hybrid"}}
    pc = {**hybrid, "workload": {"kind": "standin", "standin": {"name": "pc"}}}
    phone = {**hybrid, "workload": {"kind": "standin", "standin": {"name": "phone"}}}
    assert _aging_key(pc) is not None and _aging_key(pc) == _aging_key(phone)
    assert _aging_key({**pc, "pretrain": [{"kind": "standin"}]}) is None
    loaded = {"kind": "hybrid", "manager": {"kind": "rl", "rl": {"load_q_table": "q.json"}}}
    assert _aging_key({**pc, "device": loaded}) is None
    # A trace run's trace file is not part of its aging; its other workload keys are.
    trace = {**block(), "workload": {"kind": "trace", "trace": {"path": "a"}}}
    assert _aging_key(trace) == _aging_key({**trace, "workload": {"kind": "trace", "trace": {"path": "b"}}})
    assert _aging_key(block(seed=1)) != _aging_key(block(seed=2))


def test_tasks_with_the_same_aging_run_in_groups_that_spread_over_the_workers():
    configs = [block() for _ in range(10)] + [host({})] + [block(seed=2), block()]
    units = _units(configs, workers=2)  # at most ceil(13 / 4) = 4 per group
    assert units == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 12], [10], [11]]
    assert sorted(k for u in units for k in u) == list(range(13))
    assert _units(configs, workers=1) == [[0, 1, 2, 3, 4, 5, 6], [7, 8, 9, 12], [10], [11]]


def test_units_keep_aged_devices_for_later_units_and_forget_them_when_none_comes_back():
    a, b, c, d = block(seed=1), block(seed=2), block(seed=3), block(seed=4)
    configs = [a, b, c, a, host({}), d]
    units = [[0, 1], [2], [3], [4], [5]]
    hints = _aging_hints(configs, units)
    # Unit 0: nothing before it -> forget; its aging `a` comes back in unit 2 -> its last member keeps.
    assert hints[0] == {"forget": True, "keep_last": True}
    # Unit 1 (`c`): `a`, aged before, still comes back later -> keep what the worker holds.
    assert hints[1] == {"forget": False, "keep_last": False}
    # Unit 2 takes `a`; nothing of it comes back, but nothing is forgotten before it runs.
    assert hints[2] == {"forget": False, "keep_last": False}
    # Unit 3 ages nothing and no earlier aging comes back: the worker may drop what it keeps.
    assert hints[3] == {"forget": True, "keep_last": False}
    assert hints[4] == {"forget": True, "keep_last": False}
    # Every unit is a group payload carrying its hint (a single task too).
    payload = _unit_payload([{"config": a}], aging=hints[0])
    assert payload == {"group": [{"config": a}], "aging": {"forget": True, "keep_last": True}}
    assert _unit_payload([{"config": a}, {"config": b}], lockstep=True)["lockstep"] is True
