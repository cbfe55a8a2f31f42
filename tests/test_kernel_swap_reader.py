"""The kernel-swap capture reader in Rust (`nandstack_kernel::requests`) against the Python reference
(`kernel_swap._count_requests`): the same counts on every shared capture and on seeded synthetic files
with odd but valid lines; where Rust refuses a file, the reference reads it (and words its errors)."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from nandstack import _core
from nandstack.experiments import kernel_swap

SHARED = Path(__file__).resolve().parents[2] / "shared" / "traces" / "kernel-swap"


def _rust(path: Path):
    c = json.loads(_core.kswap_request_counts(str(path)))
    sizes = {k: {int(p): int(n) for p, n in c[k]} for k in ("read", "write")}
    return sizes, {"read": c["sequential"][0], "write": c["sequential"][1]}, c["discard_pages"]


def test_rust_and_python_readers_agree_on_every_shared_capture():
    files = sorted(SHARED.glob("*.csv.gz")) if SHARED.is_dir() else []
    if not files:
        pytest.skip(f"no kernel-swap captures in {SHARED}")
    for f in files:
        assert _rust(f) == kernel_swap._count_requests(f), f.name


def _line(rng: random.Random, t: float) -> str:
    op = rng.choice("RRRWWWDDXF")
    sector = rng.choice([0, 8, rng.randrange(0, 1 << 20) * 8, rng.randrange(0, 1 << 62)])
    sectors = rng.choice([8, 16, 64, 256, 7, 0, rng.randrange(0, 10_000)])
    comm = rng.choice(["memtouch", "kswapd0", "a,b,c", "", "loop0"])
    stamp = rng.choice([f"{t:.6f}", f"{t}", "nan", "inf", "1e3", "+0.5"])
    return f"{stamp},{op},{sector},{sectors},{comm}\n"


def test_rust_and_python_readers_agree_on_seeded_synthetic_captures(tmp_path):
    for seed in range(20):
        rng = random.Random(seed)
        rows = [_line(rng, i * 0.001) for i in range(rng.randrange(0, 3000))]
        # Sequential runs, so that the follow-up counts are not all zero.
        rows += [f"9.{i:03d},W,{800 + 8 * i},8,m\n" for i in range(50)]
        path = tmp_path / f"s{seed}.csv.gz"
        with gzip.open(path, "wt") as f:
            f.write("time_s,op,sector,sectors,comm\n" + "".join(rows))
        assert _rust(path) == kernel_swap._count_requests(path), seed


@pytest.mark.parametrize(
    "body",
    ["0.1,W,8,16\n", "0.1,W,-8,16,m\n", "0.1,W,8,1_6,m\n", " 0.1,W,8,16,m\n", "0.1,W,8,16,m\r\n"],
)
def test_what_rust_refuses_the_reference_reads(tmp_path, body):
    path = tmp_path / "odd.csv.gz"
    with gzip.open(path, "wt", newline="") as f:
        f.write("time_s,op,sector,sectors,comm\n" + body)
    with pytest.raises(_core.NandstackError):
        _core.kswap_request_counts(str(path))
    capture = kernel_swap.Capture("odd", {"vmstat_delta_system_wide": {"pswpin": 1, "pswpout": 2}})
    try:
        sizes, seq, discard = kernel_swap._count_requests(path)
    except kernel_swap._captures.CaptureError as e:
        with pytest.raises(kernel_swap._captures.CaptureError) as got:
            kernel_swap._read_figures(capture, path)
        assert str(got.value) == str(e)
    else:
        want = kernel_swap._figures(1.0, 2.0, sizes, seq, float(discard))
        assert kernel_swap._read_figures(capture, path) == want
