"""Hostile input, round two (issue 33): every class of bad file, nesting, type and database a user can
hand nandstack is a named error (or a named, listed skip), never a traceback, an abort or silent garbage.
docs/reliability.md, "Hostile files and databases", states what is promised."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

import nandstack
from conftest import TINY, TINY_ARGS
from nandstack import Config
from nandstack._core import ConfigError, NandstackError
from nandstack.cli import main
from nandstack.config import MAX_DEPTH, apply_overrides, load_config, parse_override
from nandstack.results import DatabaseError, ResultsDB
from nandstack.sweep.spec import load_spec, spec_from_dict

SHARED = Path(__file__).resolve().parents[2] / "shared" / "traces"
DOTTED = re.compile(r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+|\[\d+\])*$")


def _nested(depth: int) -> dict:
    d: dict = {}
    cur = d
    for _ in range(depth):
        cur["a"] = {}
        cur = cur["a"]
    return d


# --- 6: deep nesting, wherever a config enters ----------------------------------------------------------
@pytest.mark.parametrize(
    "make",
    [
        lambda: parse_override("a" + ".a" * 5000 + "=1"),
        lambda: parse_override("a=" + "[" * 20000 + "]" * 20000),
        lambda: parse_override("a=" + "{b=" * 3000 + "1" + "}" * 3000),
        lambda: apply_overrides({}, {"x": _nested(3000)}),
        lambda: apply_overrides({}, ["a" + ".a" * 40 + "=" + "[" * 40 + "]" * 40]),
        lambda: Config({"workload": _nested(3000)}),
        lambda: nandstack.run(set={"workload.x": _nested(3000)}, record=False),
        lambda: spec_from_dict({"set": _nested(3000)}),
        lambda: spec_from_dict(json.loads('{"set": ' + '{"a": ' * 500 + "1" + "}" * 501)),
    ],
    ids=[
        "key-5000",
        "brackets-20000",
        "inline-3000",
        "dict-3000",
        "key+value",
        "Config",
        "run",
        "spec",
        "json-spec",
    ],
)
def test_deep_nesting_is_a_named_error(make):
    with pytest.raises(ConfigError, match=f"{MAX_DEPTH}.*MAX_DEPTH|MAX_DEPTH"):
        make()


def test_deep_files_and_command_lines_are_named(tmp_path, capsys):
    deep = tmp_path / "deep.toml"
    deep.write_text("[" + ".".join(["a"] * 10000) + "]\nx = 1\n")
    with pytest.raises(ConfigError, match=r"deep\.toml.*MAX_DEPTH"):
        load_config(deep)
    spec = tmp_path / "spec.toml"
    spec.write_text('name = "s"\n[set]\nv = ' + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ConfigError, match=r"spec\.toml.*MAX_DEPTH"):
        load_spec(spec)
    assert main(["run", *TINY_ARGS, "--set", "a" + ".a" * 5000 + "=1", "--no-record"]) == 2
    assert main(["run", str(deep), "--no-record"]) == 2
    err = capsys.readouterr().err
    assert "MAX_DEPTH" in err and "internal error" not in err and "Recursion" not in err


def test_a_file_that_never_ends_is_refused(tmp_path):
    for path in ("/dev/zero",):
        if not os.path.exists(path):
            pytest.skip("no /dev/zero")
        with pytest.raises(ConfigError, match="MAX_FILE_BYTES"):
            load_config(path)
        with pytest.raises(ConfigError, match="MAX_FILE_BYTES"):
            load_spec(path)


# --- 7: accepted silently -------------------------------------------------------------------------------
def test_a_list_where_a_table_belongs_is_refused_for_every_table():
    """Every table of the effective default config (and of a host config), written as a list, is an
    error naming that table: serde would otherwise fill the struct's fields by position."""
    base = [
        "workload.kind=host",
        "workload.processes=[{name='m', workload={type='memtouch', pages=64, ops=10, pattern='uniform', "
        "write_pct=50, seed=1}}]",
    ]
    host = Config.default(base).normalized()
    tables = []

    def walk(d, prefix):
        for k, v in d.items():
            if isinstance(v, dict):
                tables.append(f"{prefix}{k}")
                walk(v, f"{prefix}{k}.")

    walk(Config.default().normalized(), "")
    walk({"host": host["host"]}, "")
    assert "run" in tables and "device.ftl" in tables and len(tables) > 10
    for table in dict.fromkeys(tables):
        overrides = (base if table.startswith("host") else []) + [f"{table}=[7]"]
        with pytest.raises(ConfigError) as e:
            Config.default(overrides)
        assert e.value.key == table or e.value.key.startswith(table), (table, e.value.key, str(e.value))


@pytest.mark.parametrize("seed", [-1, 2**64, True, "7", 1.5])
def test_a_seed_out_of_range_is_a_named_error(seed):
    with pytest.raises(ConfigError, match="seed") as e:
        nandstack.run(set=TINY, seed=seed, record=False)
    assert e.value.key == "seed"


@pytest.mark.parametrize("overrides", [{1: 2}, {None: 2}, [5], [b"run.x=1"]])
def test_a_key_that_is_not_text_is_a_named_error(overrides):
    with pytest.raises(ConfigError, match="keys are dotted strings"):
        nandstack.run(set=overrides, record=False)


def test_an_estimate_error_names_a_dotted_key():
    configs = [
        [
            "device.geometry.blocks_per_plane=32768",
            "device.geometry.channels=16",
            "run.memory_limit_bytes=1000000",
        ],
        [
            "workload.kind=host",
            "run.memory_limit_bytes=1000000",
            "workload.processes=[{name='m', workload={type='memtouch', pages=40000000, ops=10, "
            "pattern='uniform', write_pct=50, seed=1}}]",
        ],
    ]
    for overrides in configs:
        with pytest.raises(ConfigError, match="needs about") as e:
            Config.default(overrides)
        assert DOTTED.match(e.value.key), e.value.key


@pytest.mark.parametrize("body", ["", "\n\n", "# only a comment\n# and another\n"])
def test_a_block_trace_without_requests_is_an_error(tmp_path, capsys, body):
    trace = tmp_path / "empty.csv"
    trace.write_text(body)
    code = main(
        [
            "run",
            *TINY_ARGS,
            "--trace",
            str(trace),
            "--format",
            "msr",
            "--no-record",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2, err
    assert "empty.csv" in err and ("no requests" in err or "line" in err), err


@pytest.mark.parametrize("fmt", ["auto", "vm", "lirs"])
def test_a_memory_trace_that_never_ends_is_an_error(fmt):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    process = {"name": "t", "workload": {"type": "trace", "path": "/dev/zero", "format": fmt}}
    with pytest.raises(NandstackError, match="not a regular file"):
        nandstack.run(set={"workload.kind": "host", "workload.processes": [process]}, record=False)


@pytest.mark.parametrize("fmt", ["auto", "vm", "lirs", "ucsd"])
def test_a_memory_trace_line_that_never_ends_is_an_error(tmp_path, fmt):
    path = tmp_path / "one-line.trace"
    path.write_bytes(b"0" * (1 << 20))  # a regular file with a 1 MiB line
    process = {"name": "t", "workload": {"type": "trace", "path": str(path), "format": fmt}}
    with pytest.raises(NandstackError, match=r"one-line\.trace.*longer than"):
        nandstack.run(set={"workload.kind": "host", "workload.processes": [process]}, record=False)


@pytest.mark.parametrize("jobs", ["-3", "0", "x"])
def test_workers_below_one_are_refused(jobs, capsys):
    with pytest.raises(SystemExit) as e:
        main(["reproduce", "gc-policies-vs-op", "-j", jobs])
    assert e.value.code == 2
    assert "-j" in capsys.readouterr().err
    from nandstack.sweep.backends import LocalBackend

    with pytest.raises(ValueError, match="at least 1"):
        LocalBackend(workers=-3)


# --- 8: sweep specs of the wrong types ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "key"),
    [
        ({"workloads": [1, 2]}, "workloads[0]"),
        ({"workloads": {"a": 5}}, "workloads.a"),
        ({"workloads": {"a": {"trace": 3}}}, "workloads.a.trace"),
        ({"workloads": 7}, "workloads"),
        ({"name": 5}, "name"),
        ({"config": 5}, "config"),
        ({"preset": [1]}, "preset"),
        ({"seeds": "x"}, "seeds"),
        ({"grid": {1: [1]}}, "grid"),
        ({"set": 3}, "set"),
        ({"points": [3]}, "points"),
        ({"tags": {"a": 1}}, "tags"),
    ],
)
def test_a_sweep_spec_of_the_wrong_types_names_the_key(spec, key):
    with pytest.raises(ConfigError) as e:
        spec_from_dict(spec).tasks()
    assert e.value.key == key, (e.value.key, str(e.value))


def test_a_sweep_spec_that_is_not_a_table(tmp_path):
    with pytest.raises(ConfigError, match="not a list"):
        spec_from_dict([1, 2])  # type: ignore[arg-type]


# --- 4: the results database ----------------------------------------------------------------------------
def _result(i: int) -> nandstack.Result:
    config = Config.default().to_dict()
    return nandstack.Result({"waf": 1.0 + i, f"metric_{i}": float(i), "seed": 42}, config)


@pytest.mark.parametrize("threads", [8])
def test_threads_recording_at_once_lose_nothing(tmp_path, threads):
    for round_ in range(3):  # a new database each round: schema creation races too
        db = ResultsDB(tmp_path / f"db{round_}.duckdb")
        errors: list[BaseException] = []
        barrier = threading.Barrier(threads)

        def record(
            i: int, db: ResultsDB = db, barrier: threading.Barrier = barrier, errors: list = errors
        ) -> None:
            try:
                barrier.wait()
                db.record(_result(i))  # each thread a new metric column
            except BaseException as e:
                errors.append(e)

        workers = [threading.Thread(target=record, args=(i,)) for i in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert not errors, errors
        assert db.count() == threads
        assert {f"metric_{i}" for i in range(threads)} <= set(db.metric_names())


def _damaged_files(tmp_path: Path) -> dict[str, Path]:
    good = tmp_path / "good.duckdb"
    db = ResultsDB(good)
    for i in range(3):
        db.record(_result(i))
    data = good.read_bytes()
    files = {
        "truncated": data[: len(data) // 3],
        "header-only": data[:4096],
        "garbage": b"not a database " * 1000,
        "zeros": bytes(300_000),
        "flipped": data[:5000] + b"\xff" * 4000 + data[9000:],
        "tail-cut": data[: len(data) - 4096],
    }
    out = {}
    for name, blob in files.items():
        path = tmp_path / f"{name}.duckdb"
        path.write_bytes(blob)
        out[name] = path
    return out


def test_a_damaged_database_is_a_named_error_that_says_what_to_do(tmp_path, monkeypatch):
    for name, path in _damaged_files(tmp_path).items():
        for action in (
            lambda db: db.count(),
            lambda db: db.runs(),
            lambda db: db.record(_result(9)),
            lambda db: db.metric_names(),
        ):
            try:
                action(ResultsDB(path))
            except DatabaseError as e:
                assert str(path) in str(e), (name, str(e))
            except Exception as e:
                pytest.fail(f"{name}: {type(e).__module__}.{type(e).__name__}: {e}")
    garbage = tmp_path / "garbage.duckdb"
    with pytest.raises(DatabaseError, match="move it aside"):
        ResultsDB(garbage).count()
    monkeypatch.setenv("NANDSTACK_DB", str(garbage))
    with pytest.raises(DatabaseError, match="NANDSTACK_DB"):
        ResultsDB().count()
    (tmp_path / "file").write_text("x")
    with pytest.raises(DatabaseError):
        ResultsDB(tmp_path / "file" / "db.duckdb").count()
    import duckdb

    for setup in (
        "CREATE TABLE meta (key VARCHAR, value VARCHAR); INSERT INTO meta VALUES ('schema_version', 'x')",
        "CREATE TABLE meta (key VARCHAR, value VARCHAR); INSERT INTO meta VALUES ('schema_version', '1')",
        "CREATE TABLE meta (key INTEGER)",
    ):  # a DuckDB file that is not (or no longer) a nandstack database
        other = tmp_path / f"other{abs(hash(setup))}.duckdb"
        con = duckdb.connect(str(other))
        con.execute(setup)
        con.close()
        for action in (lambda db: db.count(), lambda db: db.record(_result(1))):
            with pytest.raises(DatabaseError, match=str(other)):
                action(ResultsDB(other))


def test_a_damaged_database_never_costs_the_runs_output(tmp_path, capsys):
    bad = tmp_path / "bad.duckdb"
    bad.write_bytes(b"not a database " * 1000)
    out = tmp_path / "out"
    code = main(["run", *TINY_ARGS, "--db", str(bad), "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert (out / "summary.json").is_file() and (out / "config.toml").is_file()
    assert "not recorded" in err and "move it aside" in err and "internal error" not in err
    assert main(["results", "--db", str(bad)]) == 2
    assert "internal error" not in capsys.readouterr().err


# --- 8: export onto a full filesystem, verify on a malformed manifest -----------------------------------
def test_export_failure_leaves_no_file(tmp_path):
    db = ResultsDB(tmp_path / "db.duckdb")
    db.record(_result(1))
    (tmp_path / "file").write_text("x")
    with pytest.raises(DatabaseError, match="cannot write"):
        db.export(tmp_path / "file" / "runs.parquet")
    target = tmp_path / "dir.parquet"
    target.mkdir()
    with pytest.raises(DatabaseError, match="cannot write"):
        db.export(target)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    with pytest.raises(DatabaseError, match="not a regular file"):
        db.export(fifo)
    assert fifo.is_fifo()  # a special file is never replaced (as /dev/full would have been)
    real = tmp_path / "real.csv"
    real.write_text("old")
    (tmp_path / "link.csv").symlink_to(real)
    assert db.export(tmp_path / "link.csv") == 1
    assert (tmp_path / "link.csv").is_symlink() and real.read_text().startswith("run_id")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mount") is None, reason="needs root to mount a tmpfs")
def test_export_onto_a_full_filesystem(tmp_path, capsys):
    db_path = tmp_path / "db.duckdb"
    db = ResultsDB(db_path)
    for i in range(40):
        db.record(_result(i))
    mnt = Path(tempfile.mkdtemp(prefix="nandstack-full-"))
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], check=False).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        (mnt / "filler").write_bytes(b"x" * (60 * 1024))
        for name in ("runs.parquet", "runs.csv"):
            code = main(["results", "--db", str(db_path), "export", str(mnt / name)])
            err = capsys.readouterr().err
            assert code == 2, err
            assert "cannot write" in err and "internal error" not in err
            assert sorted(p.name for p in mnt.iterdir()) == ["filler"]  # no 0-byte or partial file
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
        mnt.rmdir()


@pytest.mark.parametrize(
    "manifest",
    [
        b"{not json",
        b"\xff\xfe\x00",
        b"[1, 2]",
        b'{"files": [1]}',
        b'{"files": {"summary.json": 5}}',
        b'{"files": {"summary.json": {"sha256": 5}}}',
        b'{"files": {"../../etc/passwd": {"sha256": "00"}}}',
        b'{"nothing": 1}',
        b"[" * 100_000 + b"]" * 100_000,
        b" " * (2 << 20),
    ],
)
def test_verify_reports_a_malformed_manifest_per_folder(tmp_path, capsys, manifest):
    good = tmp_path / "good"
    assert main(["run", *TINY_ARGS, "--no-record", "--out", str(good), "--quiet"]) == 0
    bad = tmp_path / "bad"
    shutil.copytree(good, bad)
    (bad / "manifest.json").write_bytes(manifest)
    code = main(["results", "verify", str(good), str(bad)])
    captured = capsys.readouterr()
    assert code == 1
    assert f"{good}: complete" in captured.out
    lines = [ln for ln in (captured.out + captured.err).splitlines() if str(bad) in ln]
    assert lines and "internal error" not in captured.err, captured


# --- 5: hostile kernel captures -------------------------------------------------------------------------
def _zram_capture() -> dict:
    folder = SHARED / "kernel-zram"
    names = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not names:
        pytest.skip(f"no kernel-zram captures in {folder}")
    return json.loads(names[0].read_text())


def _hostile_variants(good: dict) -> dict[str, bytes]:
    text = json.dumps(good).encode()

    def changed(f) -> bytes:
        d = json.loads(text)
        f(d)
        return json.dumps(d).encode()

    return {
        "truncated": text[: len(text) // 2],
        "latin1": text.replace(b'"memtouch"', b'"memtouch\xe9"'),
        "list": b"[1, 2, 3]",
        "no-vmstat": changed(lambda d: d.pop("vmstat_delta_system_wide")),
        "no-zram": changed(lambda d: d.pop("zram")),
        "other-program": changed(lambda d: d.__setitem__("command", ["stress-ng", "1", "2", "3", "4", "5"])),
        "short-command": changed(lambda d: d.__setitem__("command", ["memtouch", "100"])),
        "command-text": changed(lambda d: d.__setitem__("command", "memtouch 1 2 3")),
        "string-number": changed(lambda d: d["mm_stat_at_end"].__setitem__("orig_data_size", "lots")),
        "string-limit": changed(lambda d: d.__setitem__("memory_limit_mb", "64")),
        "negative": changed(lambda d: d["vmstat_delta_system_wide"].__setitem__("pswpout", -5)),
        "pages-word": changed(lambda d: d["command"].__setitem__(1, "many")),
        "bool": changed(lambda d: d["io_stat_delta"].__setitem__("notify_free", True)),
    }


def test_each_hostile_capture_names_its_file_and_what_is_wrong(tmp_path):
    from nandstack.experiments import _captures

    for name, blob in _hostile_variants(_zram_capture()).items():
        path = tmp_path / f"kzram_{name}_r1.json"
        path.write_bytes(blob)
        with pytest.raises(_captures.CaptureError) as e:
            _captures.load(path)
        assert str(e.value).startswith(path.name + ":"), (name, str(e.value))


def test_bad_captures_are_skipped_and_listed_good_ones_used(tmp_path, monkeypatch, capsys):
    from nandstack.experiments import _captures

    good = _zram_capture()
    (tmp_path / "kzram_good_r1.json").write_text(json.dumps(good))
    for name, blob in _hostile_variants(good).items():
        (tmp_path / f"kzram_{name}_r1.json").write_bytes(blob)
    monkeypatch.setenv("NANDSTACK_CAPTURES", str(tmp_path))
    found = _captures.programs("zram")
    assert list(found) == ["kzram_good"]
    err = capsys.readouterr().err
    warned = [ln for ln in err.splitlines() if ln.startswith("warning: capture ")]
    assert len(warned) == len(_hostile_variants(good)), err
    note = _captures.setup("zram", quick=True)["skipped captures"]
    assert "kzram_truncated_r1.json" in note and "kzram_list_r1.json" in note
    (tmp_path / "kzram_good_r1.json").unlink()
    with pytest.raises(_captures.CaptureError, match="no usable capture"):
        _captures.programs("zram")


def test_hostile_kernel_swap_captures(tmp_path, monkeypatch, capsys):
    from nandstack.experiments import _captures, kernel_swap

    folder = SHARED / "kernel-swap"
    metas = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not metas:
        pytest.skip(f"no kernel-swap captures in {folder}")
    meta = json.loads(metas[0].read_text())
    rows = "time_s,op,sector,sectors,comm\n0.1,W,0,8,memtouch\n0.2,R,0,8,memtouch\n"
    cases = {
        "good": (meta, rows),
        "garbage": (meta, "time_s,op,sector,sectors,comm\nhello\n"),
        "notnum": (meta, "time_s,op,sector,sectors,comm\n0.1,W,zero,8,memtouch\n"),
        "long": ({**meta, "command": [*meta["command"], "corpus:xml"]}, rows),
        "other": ({**meta, "command": ["dd", "1", "2", "3", "4", "5"]}, rows),
        "endless": (meta, "time_s,op,sector,sectors,comm\n" + "0" * 100_000),
    }
    for name, (m, csv) in cases.items():
        for rep in (1, 2):
            (tmp_path / f"kswap_{name}_r{rep}.json").write_text(json.dumps(m))
            with gzip.open(tmp_path / f"kswap_{name}_r{rep}.csv.gz", "wt") as f:
                f.write(csv)
    (tmp_path / "kswap_bin_r1.json").write_text(json.dumps(meta))
    (tmp_path / "kswap_bin_r1.csv.gz").write_bytes(b"not gzip at all")
    monkeypatch.setenv("NANDSTACK_CAPTURES", str(tmp_path))
    found = kernel_swap.programs(tmp_path)
    assert list(found) == ["kswap_good"]
    err = capsys.readouterr().err
    for name in ("garbage", "notnum", "long", "other", "bin", "endless"):
        assert f"kswap_{name}_r1" in err, err
    assert "line 2" in _captures.skipped_note(tmp_path)


@pytest.mark.parametrize("kind", ["device", "fifo", "folder"])
def test_a_results_database_that_is_not_a_regular_file_is_refused_by_name(kind, tmp_path):
    """`--db /dev/null` (or a FIFO, or a folder) is a DatabaseError that says what the path is; the
    damaged-file advice ("move it aside") is never given for something that is not a file."""
    from nandstack.results import ResultsDB
    from nandstack.results.db import DatabaseError

    if kind == "device":
        path = Path("/dev/null")
    elif kind == "fifo":
        path = tmp_path / "db.fifo"
        os.mkfifo(path)
    else:
        path = tmp_path / "db.dir"
        path.mkdir()
    with pytest.raises(DatabaseError, match="give --db") as e:
        ResultsDB(path).count()
    assert "move it aside" not in str(e.value)
    assert Path("/dev/null").is_char_device()
