"""One home for data (docs/data.md): the registry against ../shared/traces, the search order (--data, the
one variable, the older aliases), the named error for missing data, `nandstack data`, fetching from a
(local) server, and an installed wheel that sees no source checkout."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from nandstack import NandstackError, data, experiments
from nandstack.cli import main

SHARED = data.default_roots()[0]
OLD_VARS = ("NANDSTACK_TRACES", "NANDSTACK_CORPUS_DIR", "NANDSTACK_KERNEL_SWAP", "NANDSTACK_KSWAP_TRACES")
OLD_VARS += ("NANDSTACK_CAPTURES", data.DATA_ENV)
#: Experiment → the data set it reads (every other experiment reads none); sup-gc's quick run reads none
#: and says so in its setup.
NEEDS = {
    "trace-replay": "block",
    "rl-slc-cache": "block",
    "sup-gc": "block",
    "ezswap": "compress",
    "diss": "kernel-swap",
    "kernel-swap": "kernel-swap",
    "kernel-zswap": "kernel-zswap",
    "kernel-zram": "kernel-zram",
}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    for var in OLD_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def needs_shared() -> None:
    if not SHARED.is_dir():
        pytest.skip(f"the shared data sets are not at {SHARED}")


def test_the_registry_lists_exactly_the_shared_files_with_their_hashes():
    needs_shared()
    for name in data.NAMES:
        listed = data.registry()[name]["files"]
        on_disk = {p.name: p for p in (SHARED / name).iterdir() if p.is_file()}
        assert set(listed) == set(on_disk), name
        for f, entry in listed.items():
            blob = on_disk[f].read_bytes()
            assert len(blob) == entry["bytes"], f
            assert hashlib.sha256(blob).hexdigest() == entry["sha256"], f


def test_public_sets_have_urls_at_pinned_commits_and_captures_say_how_to_get_them():
    for name in data.NAMES:
        files = data.registry()[name]["files"].values()
        if name.startswith("kernel-"):
            assert not data.public(name) and "shared/tools" in data.how_to_get(name)
        else:
            assert data.public(name)
            for f in files:
                parts = f["url"].split("/")
                assert f["url"].startswith("https://raw.githubusercontent.com/") and len(parts[5]) == 40


def test_missing_data_is_a_named_error_listing_what_and_how(monkeypatch, tmp_path):
    monkeypatch.setenv(data.DATA_ENV, str(tmp_path))
    for name, needed in NEEDS.items():
        with pytest.raises(data.DataError) as err:
            experiments.get(name).tasks(name != "sup-gc")
        text = str(err.value)
        assert isinstance(err.value, NandstackError)
        assert f"data set `{needed}`" in text and str(tmp_path / needed) in text, text
        assert "How to get it: " + data.how_to_get(needed) in text


def test_an_incomplete_set_names_the_missing_files(monkeypatch, tmp_path):
    needs_shared()
    (tmp_path / "block").mkdir()
    for f in list(data.registry()["block"]["files"])[:-2]:
        os.symlink(SHARED / "block" / f, tmp_path / "block" / f)
    short = tmp_path / "block" / "msr_cambridge_hm0_sample.csv"
    short.unlink()
    short.write_text("truncated\n")
    monkeypatch.setenv(data.DATA_ENV, str(tmp_path))
    with pytest.raises(data.DataError, match=r"incomplete: 3 of 21 files") as err:
        experiments.get("trace-replay").tasks(True)
    absent = list(data.registry()["block"]["files"])[-2:]
    assert all(f in str(err.value) for f in absent) and "10 bytes, not 51,000" in str(err.value)
    with pytest.raises(data.DataError, match=r"msr_cambridge_hm0_sample.csv \(10 bytes, not 51,000\)"):
        experiments.get("sup-gc").tasks(False)  # needs only its seven traces, one of them short


def test_the_data_flag_beats_the_variable_and_the_aliases_beat_both(monkeypatch, tmp_path, capsys):
    needs_shared()
    monkeypatch.setenv(data.DATA_ENV, str(tmp_path / "nowhere"))
    assert data.locate("compress").path is None
    assert main(["--data", str(SHARED), "data", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["compress"]["path"] == str(SHARED / "compress") and not rows["compress"]["missing"]
    assert os.environ[data.DATA_ENV] == str(SHARED.resolve())  # exported for the engine and workers
    own = tmp_path / "mine"
    own.mkdir()
    monkeypatch.setenv("NANDSTACK_CORPUS_DIR", str(own))
    loc = data.locate("compress")
    assert loc.path == own and loc.user_folder and loc.origin == "$NANDSTACK_CORPUS_DIR"
    assert data.require("compress") == own  # the user's own folder: not checked against the registry


@pytest.mark.parametrize(
    ("var", "name"),
    [
        ("NANDSTACK_TRACES", "block"),
        ("NANDSTACK_CORPUS_DIR", "compress"),
        ("NANDSTACK_KERNEL_SWAP", "kernel-swap"),
        ("NANDSTACK_KSWAP_TRACES", "kernel-swap"),
        ("NANDSTACK_CAPTURES", "kernel-zswap"),
        ("NANDSTACK_CAPTURES", "kernel-zram"),
    ],
)
def test_the_old_variables_are_aliases(monkeypatch, tmp_path, var, name):
    monkeypatch.setenv(data.DATA_ENV, str(tmp_path / "root"))
    monkeypatch.setenv(var, str(tmp_path))
    assert data.locate(name).path == tmp_path
    monkeypatch.setenv(var, str(tmp_path / "missing"))
    with pytest.raises(data.DataError, match=f"via \\${var}"):
        data.require(name)


def test_nandstack_data_lists_verifies_and_caches(monkeypatch, tmp_path, capsys):
    needs_shared()
    root = tmp_path / "root"
    shutil.copytree(SHARED / "compress", root / "compress")
    monkeypatch.setenv(data.DATA_ENV, str(root))
    assert main(["data", "--verify"]) == 3  # compress verifies; the other five are missing
    out = capsys.readouterr().out
    assert "compress      7/7 files, verified" in out and out.count("MISSING") == 5
    assert out.count("how to get it:") == 5
    cache = json.loads((data.cache_dir() / "verified.json").read_text())
    assert len(cache) == 7
    victim = root / "compress" / "silesia_xml.zip"
    victim.chmod(0o644)
    blob = bytearray(victim.read_bytes())
    blob[100] ^= 0xFF
    victim.write_bytes(bytes(blob))  # same size, new mtime: hashed again, not taken from the cache
    assert main(["data", "--verify"]) == 3
    assert "1 do NOT match their SHA-256: silesia_xml.zip" in capsys.readouterr().out


def test_fetch_downloads_and_checks_hashes(monkeypatch, tmp_path):
    needs_shared()
    served = tmp_path / "served"
    shutil.copytree(SHARED / "compress", served)
    handler = partial(SimpleHTTPRequestHandler, directory=str(served))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    files = data.registry()["compress"]["files"]
    patched = {f: {**e, "url": base + f} for f, e in files.items()}
    monkeypatch.setitem(data.registry()["compress"], "files", patched)
    try:
        root = data.fetch(["compress"], tmp_path / "got")
        monkeypatch.setenv(data.DATA_ENV, str(root))
        assert data.status("compress", verify=True).verified is True
        bad = served / "silesia_xml.zip"
        bad.write_bytes(b"not the corpus")
        (root / "compress" / "silesia_xml.zip").unlink()
        with pytest.raises(data.DataError, match=r"could not fetch compress/silesia_xml.zip"):
            data.fetch(["compress"], root)
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(data.DataError, match="no public copy"):
        data.fetch(["kernel-zram"], tmp_path / "got")


def _venv_with_wheel(tmp: Path) -> Path:
    repo = Path(__file__).resolve().parents[1]
    wheels = tmp / "wheels"
    built = subprocess.run(
        ["maturin", "build", "--release", "--out", str(wheels)], cwd=repo, capture_output=True, text=True
    )
    assert built.returncode == 0, built.stderr[-3000:]
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    wheel = next(wheels.glob("nandstack-*.whl"))
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall"]
    installed = subprocess.run([*pip, str(wheel)], capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr[-3000:]
    return venv / "bin" / "nandstack"


@pytest.mark.slow
def test_an_installed_wheel_finds_the_data_only_where_told(tmp_path):
    needs_shared()
    if shutil.which("maturin") is None:
        pytest.skip("maturin is not installed")
    exe = _venv_with_wheel(tmp_path)
    away = tmp_path / "elsewhere"
    away.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in OLD_VARS and k != "PYTHONPATH"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")

    def nandstack(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(exe), *args], cwd=away, env={**env, **extra}, capture_output=True, text=True, timeout=900
        )

    where = subprocess.run(
        [str(exe.with_name("python")), "-c", "import nandstack.data as d; print(d.__file__)"],
        cwd=away, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert str(Path(__file__).resolve().parents[1]) not in where.stdout, (
        where.stdout
    )  # the wheel, not the checkout
    lost = nandstack("data")
    assert lost.returncode == 3 and lost.stdout.count("MISSING") == 6, lost.stdout + lost.stderr
    fails = nandstack("reproduce", "ezswap", "--quick", "--no-record", "--out", str(tmp_path / "r0"))
    assert fails.returncode == 2 and "data set `compress`" in fails.stderr and "Traceback" not in fails.stderr
    assert not (tmp_path / "r0").exists()
    found = nandstack("data", "--verify", NANDSTACK_DATA=str(SHARED))
    assert found.returncode == 0 and found.stdout.count("verified") == 6, found.stdout
    ok = nandstack(
        "--data",
        str(SHARED),
        "reproduce",
        "trace-replay",
        "--quick",
        "--no-record",
        "--out",
        str(tmp_path / "r"),
    )
    assert ok.returncode == 0, ok.stderr
    assert "0 failed" in ok.stderr or "failed" not in ok.stderr.lower(), ok.stderr


MEMTOUCH_CORPUS = """
[workload]
kind = "host"
[[workload.processes]]
workload = { type = "memtouch", pages = 256, ops = 2000, pattern = "uniform", write_pct = 50, seed = 1, \
content = "corpus:xml" }
"""


def test_the_engine_finds_the_corpus_through_the_same_setting(monkeypatch, tmp_path):
    import nandstack

    needs_shared()
    path = tmp_path / "mt.toml"
    path.write_text(MEMTOUCH_CORPUS)
    monkeypatch.setenv(data.DATA_ENV, str(tmp_path))  # no compress/ here: a config error naming the setting
    with pytest.raises(nandstack.ConfigError, match=r"silesia_xml\.zip not found.*NANDSTACK_DATA") as err:
        nandstack.run(str(path), record=False)
    assert str(tmp_path / "compress" / "silesia_xml.zip") in str(err.value)
    by_key = nandstack.run(str(path), set=[f"run.data_dir={json.dumps(str(SHARED))}"], record=False)
    monkeypatch.setenv(data.DATA_ENV, str(SHARED))
    by_env = nandstack.run(str(path), record=False)

    def figures(r: nandstack.Result) -> dict:
        return {k: v for k, v in r.metrics.items() if "wall" not in k}

    assert figures(by_key) == figures(by_env)
    assert by_env.metrics["host_references"] == 256 * 512 + 2000  # a corpus page's fill is 512 stores
