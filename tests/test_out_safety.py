"""What may stand at `--out` (docs/reliability.md, "Output folders"): only a missing path, an empty
folder or (with --overwrite) a folder a nandstack run wrote is used; everything else is refused with a
named error, left untouched, and no hidden temporary folder is left beside it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import TINY_ARGS
from nandstack import cli
from nandstack._output import OutputError, atomic_output_dir, check_out_dir, verify_manifest


@pytest.fixture
def run(tmp_path, monkeypatch, capsys):
    """`nandstack run TINY --no-record -q ARGS` in-process, in `tmp_path`; returns (exit code, stderr)."""
    monkeypatch.chdir(tmp_path)

    def go(*args: str) -> tuple[int, str]:
        code = cli.main(["run", *TINY_ARGS, "--no-record", "-q", *args])
        return code, capsys.readouterr().err

    return go


def _snapshot(parent: Path) -> dict[str, object]:
    """Every entry under `parent` (links not followed): its kind and, for a file, its bytes."""
    out: dict[str, object] = {}
    for root, dirs, files in os.walk(parent):
        for name in dirs + files:
            p = Path(root, name)
            rel = p.relative_to(parent).as_posix()
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            elif p.is_file():
                out[rel] = p.read_bytes()
            else:
                out[rel] = "dir" if p.is_dir() else "other"
    return out


def _refused(run, tmp_path: Path, out: str, why: str) -> None:
    before = _snapshot(tmp_path)
    code, err = run("--out", out, "--overwrite")
    assert code == 2, err
    assert err.startswith("error: ") and str(Path(out)) in err and why in err, err
    assert "Traceback" not in err
    assert _snapshot(tmp_path) == before  # untouched, and no hidden `.NAME.tmp-*` left behind


def test_a_fifo_standing_in_for_a_device_is_refused(run, tmp_path):
    os.mkfifo(tmp_path / "fifo")
    _refused(run, tmp_path, "fifo", "is a FIFO, not a folder")
    assert not (tmp_path / "fifo").is_dir()


def test_dev_null_is_refused_before_anything_is_touched():
    # A pure check (it writes nothing), so safe to point at the real /dev/null even as root.
    with pytest.raises(OutputError, match=r"/dev/null is a device, not a folder"):
        check_out_dir("/dev/null", overwrite=True)


def test_a_plain_file_is_refused(run, tmp_path):
    (tmp_path / "notes.txt").write_text("mine\n")
    _refused(run, tmp_path, "notes.txt", "is a file, not a folder")


def test_a_symlink_is_never_followed_or_replaced(run, tmp_path):
    assert run("--out", "real")[0] == 0
    (tmp_path / "link").symlink_to("real")
    _refused(run, tmp_path, "link", "is a symbolic link")
    (tmp_path / "dangling").symlink_to("nowhere")
    _refused(run, tmp_path, "dangling", "is a symbolic link")
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("out", [".", "..", "/", "./", "sub/.."])
def test_dot_dotdot_and_root_are_refused(run, tmp_path, out):
    (tmp_path / "sub").mkdir()
    _refused(run, tmp_path, out, "--out")


def test_the_home_folder_and_folders_above_the_current_one_are_refused(run, tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "work").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    _refused(run, tmp_path, str(home), "the home folder")
    monkeypatch.chdir(home / "work")
    _refused(run, tmp_path, str(tmp_path), "a folder above the current folder")
    _refused(run, tmp_path, str(home / "work"), "the current folder")


def test_a_folder_nandstack_did_not_write_is_refused_even_with_overwrite(run, tmp_path):
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos" / "cat.jpg").write_bytes(b"\xff\xd8")
    _refused(run, tmp_path, "photos", "nandstack did not write")
    # A results folder of a version before manifests: the user removes it.
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "summary.json").write_text("{}")
    _refused(run, tmp_path, "old", "before manifests")
    # A manifest that is not nandstack's.
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "manifest.json").write_text('{"name": "some other tool"}')
    _refused(run, tmp_path, "other", "nandstack did not write")


def test_a_nandstack_folder_needs_overwrite_and_is_then_replaced_whole(run, tmp_path):
    assert run("--out", "out", "--seed", "1")[0] == 0
    code, err = run("--out", "out")
    assert code == 2 and "out exists: pass --overwrite" in err
    (tmp_path / "out" / "extra.txt").write_text("a file the user added")
    code, err = run("--out", "out", "--overwrite", "--seed", "2")
    assert code == 0, err
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["seed"] == 2
    assert verify_manifest(tmp_path / "out") == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_an_empty_folder_is_used_as_if_missing(run, tmp_path):
    (tmp_path / "empty").mkdir()
    code, err = run("--out", "empty")
    assert code == 0, err
    assert verify_manifest(tmp_path / "empty") == []


def test_what_stands_at_out_is_checked_again_when_the_run_is_published(tmp_path):
    """Between the first check and the rename another process may put something at `--out`."""
    out = tmp_path / "out"
    publish = atomic_output_dir(out, overwrite=True, info={"nandstack_version": "test"})
    with pytest.raises(OutputError, match="is a file, not a folder"), publish as (tmp, _):
        (tmp / "summary.json").write_text("{}")
        out.write_text("someone else's file")
    assert out.read_text() == "someone else's file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_reproduce_refuses_a_bad_out_before_it_runs_anything(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "report").write_text("not a folder")
    code = cli.main(["reproduce", "hot-cold-skew", "--quick", "--no-record", "--out", "report"])
    err = capsys.readouterr().err
    assert code == 2 and "error: report is a file, not a folder" in err, err
    assert "runs" not in err.split("error:")[0]  # nothing ran before the refusal
    assert (tmp_path / "report").read_text() == "not a folder"


def test_folders_replaced_while_they_are_examined_or_published_never_fail_a_run(tmp_path):
    """Six writers publish into one folder 40 times each while the others keep replacing it: every
    publish succeeds (a folder that vanishes or changes while checked is looked at again), the folder
    left is complete, and no temporary sibling stays (the race CI met: `shared: No such file or
    directory` from a run listing `--out` after another run had replaced it)."""
    import threading

    out = tmp_path / "shared"
    errors: list[BaseException] = []

    def writer(k: int) -> None:
        try:
            for i in range(40):
                with atomic_output_dir(out, overwrite=True, info={"nandstack_version": "t"}) as (tmp, _):
                    (tmp / "who.txt").write_text(f"{k}-{i}\n")
                check_out_dir(out, overwrite=True)
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert verify_manifest(out) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shared"]
