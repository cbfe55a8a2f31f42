"""The fuzz suite (docs/testing.md, docs/reliability.md): randomly mutated configs — any key of the config
reference, extreme values — and garbage in every trace format, through the command line and through
`nandstack.run`, give a named error or a clean run within a time bound: never a signal death, a
traceback, a panic or a hang. Seeded; a failure prints the seed, the index and the mutation.

`NANDSTACK_FUZZ_CONFIGS` (default 200: a quarter through the CLI, the rest through Python) and
`NANDSTACK_FUZZ_SEED` (default 20) set the size and the seed; each CLI run is also checked to keep
`--out` atomic (a manifest whose hashes match, or no directory at all).
"""

from __future__ import annotations

import contextlib
import gzip
import os
import random
from concurrent.futures import ThreadPoolExecutor

import pytest

import fuzzing
from nandstack import _toml
from nandstack._output import verify_manifest

CONFIGS = int(os.environ.get("NANDSTACK_FUZZ_CONFIGS", "200"))
SEED = int(os.environ.get("NANDSTACK_FUZZ_SEED", "20"))

#: One small valid input per trace format (the Rust reader tests' samples).
SAMPLES: dict[str, bytes] = {
    "msr": b"128166385295514663,hm,0,Write,9056014336,2048,2833\n"
    b"128166385295514878,hm,1,Read,11855351808,512,2617\n",
    "blkparse": b"  8,0    3        1     0.000000000  4162  Q  WS 3417048 + 8 [kworker/u8:0]\n"
    b"  8,0    3        6     0.000007026  4162  D  WS 3417048 + 8 [kworker/u8:0]\nTotal (8,0):\n",
    "disksim": b"5265.313 0 6357144 8 0\n5265.703 0 6307768 8 1\n",
    "mqsim": b"938513000 4 264719034 16 0\n938828000 3 197570570 16 1\n",
    "ssdsim": b"0 0 303567 7 0\n78643005 1 55596 6 1\n",
    "fio": b"fio version 2 iolog\n/dev/sda add\n/dev/sda open\n/dev/sda write 0 4096\n/dev/sda close\n",
    "tencent": b"1538323200,4247200,128,1,1058\n1538323199,13896880,128,0,1063\n",
    "cloudphysics": b"version,time,op,size,lbn\n1,5633898368802,2a,512,42932745\n"
    b"1,5633898611441,28,512,42932746\n",
    "systor17": b"Timestamp,Response,IOType,LUN,Offset,Size\n"
    b"1455591804.310701000,0.006475000,R,0,203468398592,32768\n",
    "heimdall": b"0.000 0 200626176 4096 0\n223.412 0 3159347200 36864 1\n",
    "wiscsee": b"39949 D read 299008 4096 0.000000000 0 False\n"
    b"1386 D discard 136314880 4096 0.439239477 4.43e-06 False\n",
    "arc": b"1936993 8 0 0\n793041 16 0 1\n",
    "hp_srt": b"$$TR_IOREC-1.3\nsectorsize = 256;\n\x0c" + bytes(56),
    "u32_blocks": bytes([1, 0, 0, 0, 0x49, 0x46, 0x12, 0x00]),
}


def _describe(i: int, what: str, mutation: str, detail: str) -> str:
    return f"seed {SEED}, config {i}: {what}\n  mutation: {mutation}\n{detail}"


@pytest.fixture(scope="module")
def mutated(tmp_path_factory):
    """The seeded mutated configs: (config, description) pairs."""
    trace = fuzzing.write_msr_trace(tmp_path_factory.mktemp("fuzz") / "base.csv")
    rng = random.Random(SEED)
    keys = fuzzing.reference_keys()
    assert len(keys) > 200, "the config reference lists every key"
    return [fuzzing.mutate(rng, keys, trace) for _ in range(CONFIGS)]


def test_reference_keys_cover_every_section():
    sections = {k.section for k in fuzzing.reference_keys()}
    for s in (
        "",
        "workload",
        "workload.trace",
        "host.swap",
        "device.geometry",
        "device.ftl.gc",
        "device.hybrid",
    ):
        assert s in sections, s
    assert "device.zoned.block_layer" in sections and "run" in sections


def test_mutated_configs_through_the_command_line(mutated, tmp_path):
    """A quarter of the configs, as TOML files, through `nandstack run` (two at a time)."""
    chosen = list(enumerate(mutated))[: max(1, len(mutated) // 4)]

    def one(item):
        i, (config, mutation) = item
        folder = tmp_path / f"c{i}"
        folder.mkdir()
        try:
            (folder / "c.toml").write_text(_toml.dumps(config))
        except ValueError:  # a value TOML cannot hold (none are generated today)
            return i, mutation, fuzzing.Outcome(True, "skipped", "")
        out = fuzzing.run_cli(["run", "c.toml", "--no-record", "-q", "--out", "out"], folder)
        if (folder / "out").exists():
            problems = verify_manifest(folder / "out")
            if problems:
                out = fuzzing.Outcome(False, "incomplete output directory", "\n".join(problems))
        return i, mutation, out

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(one, chosen))
    failures = [_describe(i, o.what, m, o.detail) for i, m, o in results if not o.ok]
    assert not failures, "\n\n".join(failures)
    kinds = {o.what for _, _, o in results}
    assert "error" in kinds and "ran" in kinds, kinds


def test_mutated_configs_through_python(mutated, tmp_path):
    """The other three quarters through `nandstack.run` in a child interpreter."""
    chosen = mutated[max(1, len(mutated) // 4) :]
    outcomes = fuzzing.run_api([c for c, _ in chosen], tmp_path)
    failures = [_describe(i, o.what, chosen[i][1], o.detail) for i, o in enumerate(outcomes) if not o.ok]
    assert not failures, "\n\n".join(failures)
    assert len(outcomes) == len(chosen)
    kinds = {o.what for o in outcomes}
    assert "error" in kinds and "ran" in kinds, kinds


@pytest.mark.parametrize("fmt", sorted(SAMPLES))
def test_garbage_traces_through_the_command_line_and_python(fmt, tmp_path):
    """Each format: the sample, corrupted several ways (also gzip-compressed and truncated), replayed
    strict and lenient from the CLI and scanned and replayed from Python."""
    import nandstack
    from nandstack.workloads import trace_stats

    rng = random.Random(f"{SEED}-{fmt}")
    base = fuzzing.trace_base(tmp_path / "t")
    inputs = [fuzzing.corrupt(SAMPLES[fmt] * 3, rng) for _ in range(3)]
    packed = gzip.compress(SAMPLES[fmt] * 50)
    inputs.append(packed[: len(packed) // 2])  # truncated gzip
    for j, data in enumerate(inputs):
        path = tmp_path / f"t{j}"
        path.write_bytes(data)
        for mode in ("strict", "lenient"):
            args = [
                "run",
                "--no-record",
                "-q",
                "--out",
                f"o{j}{mode}",
                "--set",
                f'workload.trace.malformed="{mode}"',
            ]
            cfg = tmp_path / "base.toml"
            cfg.write_text(_toml.dumps({k: v for k, v in base.items() if k != "workload"}))
            args += [str(cfg), "--trace", str(path), "--format", fmt, "--lba", "wrap"]
            out = fuzzing.run_cli(args, tmp_path)
            assert out.ok, f"{fmt} input {j} ({mode}): {out.what}\n{out.detail}"
        with contextlib.suppress(nandstack.NandstackError):
            trace_stats(path, fmt)
        config = {
            **base,
            "workload": {**base["workload"], "trace": {"path": str(path), "format": fmt, "lba": "wrap"}},
        }
        (outcome,) = fuzzing.run_api([config], tmp_path)
        assert outcome.ok, f"{fmt} input {j} from Python: {outcome.what}\n{outcome.detail}"
