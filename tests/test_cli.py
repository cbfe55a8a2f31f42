"""The `nandstack` command line, run as a subprocess (exit codes, files written, messages)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from importlib.metadata import distribution
from pathlib import Path

import pytest

from conftest import TINY_ARGS, without_wall_clock
from nandstack import _toml

COMMANDS = [
    [],
    ["run"],
    ["bench"],
    ["config"],
    ["sweep"],
    ["reproduce"],
    ["results"],
    ["results", "list"],
    ["results", "show"],
    ["results", "compare"],
    ["results", "export"],
    ["results", "metrics"],
    ["results", "info"],
    ["results", "verify"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "top")
def test_help(cli, command):
    proc = cli(*command, "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: nandstack")
    assert proc.stderr == ""


def test_every_command_and_option_has_help_text():
    """Every subcommand has a description and every option a help string (in the parser itself)."""
    import argparse

    from nandstack.cli import build_parser

    def walk(parser, path):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:
                    assert choice.help, f"{path} {choice.dest}: no help"
                for name, sub in action.choices.items():
                    assert sub.description, f"{path} {name}: no description"
                    walk(sub, f"{path} {name}")
            elif not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
                assert action.help, f"{path} {action.dest}: no help"

    walk(build_parser(), "nandstack")


def test_missing_command_is_a_usage_error(cli):
    proc = cli()
    assert proc.returncode == 2
    assert "usage:" in proc.stderr


def test_version_names_the_build():
    """`--version` says which build of the engine is loaded: `make build` gives `release`,
    `make build-pgo` (tools/pgo-build, which sets NANDSTACK_BUILD=pgo) `pgo`."""
    from nandstack import _core

    proc = subprocess.run([sys.executable, "-m", "nandstack", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert _core.__build__ in ("release", "pgo")
    assert proc.stdout.strip() == f"nandstack {_core.__version__} ({_core.__build__} build)"


def test_console_script_points_at_main():
    eps = distribution("nandstack").entry_points
    (script,) = [ep for ep in eps if ep.group == "console_scripts" and ep.name == "nandstack"]
    assert script.value == "nandstack.cli:main"


def test_run_writes_summary_and_effective_config(cli, tmp_path):
    proc = cli("run", *TINY_ARGS, "--set", "workload.read_fraction=0.3", "--seed", "3", "--out", "out")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    for key in ("waf", "host_write_bytes", "flash_program_pages", "gc_migrated_pages", "erase_count"):
        assert key in summary
    assert summary["seed"] == 3
    assert summary["waf"] >= 1.0
    config = _toml.loads((tmp_path / "out" / "config.toml").read_text())
    assert config["seed"] == 3
    assert config["device"]["geometry"]["blocks_per_plane"] == 64
    assert config["workload"]["read_fraction"] == 0.3
    # The summary table names the headline metrics, one per line.
    lines = proc.stdout.splitlines()
    assert any(line.split()[0] == "waf" for line in lines if line.strip())
    assert any(line.startswith("erase_count.max") for line in lines)


def test_written_config_reproduces_the_run(cli, tmp_path):
    first = cli("run", *TINY_ARGS, "--seed", "5", "--out", "a", "--quiet")
    assert first.returncode == 0, first.stderr
    assert first.stdout == ""
    second = cli("run", "a/config.toml", "--out", "b", "--quiet")
    assert second.returncode == 0, second.stderr
    a = json.loads((tmp_path / "a" / "summary.json").read_text())
    b = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert without_wall_clock(a) == without_wall_clock(b)


def test_default_out_dir_is_results_latest(cli, tmp_path):
    proc = cli("run", *TINY_ARGS, "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "results" / "latest" / "summary.json").is_file()
    assert (tmp_path / "results" / "latest" / "config.toml").is_file()


def test_unknown_config_key_exits_2_and_names_the_key(cli, tmp_path):
    proc = cli("run", *TINY_ARGS, "--set", "device.geometry.chanels=8", "--out", "out")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ")
    assert "chanels" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_bad_override_syntax_exits_2(cli):
    proc = cli("run", "--set", "workload.requests")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ")
    assert "key=value" in proc.stderr


def test_nan_override_exits_2(cli):
    proc = cli("run", *TINY_ARGS, "--set", "workload.read_fraction=nan")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ")
    assert "Traceback" not in proc.stderr


def test_missing_config_file_exits_2(cli):
    proc = cli("run", "no-such-config.toml")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ")
    assert "no-such-config.toml" in proc.stderr


def test_invalid_toml_exits_2(cli, tmp_path):
    (tmp_path / "bad.toml").write_text("[device\n")
    proc = cli("run", "bad.toml")
    assert proc.returncode == 2
    assert "bad.toml" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_config_default_is_valid_toml(cli):
    proc = cli("config")
    assert proc.returncode == 0, proc.stderr
    config = _toml.loads(proc.stdout)
    assert {"device", "workload"} <= set(config)
    assert cli("config", "--default").stdout == proc.stdout


def test_config_reference_lists_keys(cli):
    proc = cli("config", "--reference")
    assert proc.returncode == 0, proc.stderr
    for key in ("page_size_bytes", "read_fraction"):
        assert key in proc.stdout


def test_config_flags_are_exclusive(cli):
    assert cli("config", "--default", "--reference").returncode == 2


def test_bench_quick(cli):
    as_json = cli("bench", "ftl", "--quick", "--json")
    assert as_json.returncode == 0, as_json.stderr
    (result,) = json.loads(as_json.stdout)
    assert result["name"] == "ftl"
    table = cli("bench", "--quick")
    assert table.returncode == 0, table.stderr
    names = [line.split()[1] for line in table.stdout.splitlines() if line.startswith("name ")]
    assert names == ["ftl", "timed", "hybrid", "compressed", "host"]
    from nandstack import _core

    assert table.stdout.splitlines()[-1] == f"(nandstack {_core.__version__}, {_core.__build__} build)"


def test_bench_host_quick(cli):
    proc = cli("bench", "host", "--quick", "--json")
    assert proc.returncode == 0, proc.stderr
    (result,) = json.loads(proc.stdout)
    assert result["name"] == "host"
    # quick: pmbench's 5 M references after its first touch of each of the 81,920 pages of 320 MiB
    assert result["references"] == 5_000_000 + 81_920
    assert result["pswpout"] > 0 and result["pswpin"] > 0, "the working set exceeds the cgroup: it swaps"
    assert result["cpu_seconds"] > 0 and result["references_per_cpu_second"] > 0
    # The generator alone is part of the run: less CPU than the run, and the model's own rate is the
    # faster one.
    assert 0 < result["generator_cpu_seconds"] < result["cpu_seconds"]
    assert result["model_references_per_cpu_second"] > result["references_per_cpu_second"]


def test_unknown_bench_exits_2(cli):
    proc = cli("bench", "no-such-bench", "--quick")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ")


def test_ctrl_c_exits_130(tmp_path):
    """SIGINT during a long run stops the engine promptly (GIL released, signals checked at progress)."""
    long_run = [*TINY_ARGS, "--set", "workload.requests=100000000"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "nandstack", "run", *long_run, "--out", "out"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # SIGINT at its default in the child even when pytest runs with it ignored (a background job).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        first = proc.stderr.readline()  # the first progress line: the engine is running
        assert "%" in first, first
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert "Traceback" not in err
    # Interrupted before the measured phase, nothing is published; in it (the signal can land after the
    # short precondition on a loaded machine), the partial run is, marked as such.
    out = tmp_path / "out"
    if "the partial run is in" in err:
        assert json.loads((out / "summary.json").read_text())["interrupted"] is True
    else:
        assert not out.exists()
    assert "recorded" not in err  # an interrupted run is not recorded


def test_run_writes_the_time_series_as_csv(cli, tmp_path):
    out = tmp_path / "ts"
    proc = cli("run", *TINY_ARGS, "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    lines = (out / "timeseries.csv").read_text().splitlines()
    assert lines[0].startswith("sim_seconds,requests,host_write_bytes")
    assert len(lines) >= 21  # header + one row per 1/20 of the requests
    assert "timeseries" not in json.loads((out / "summary.json").read_text())


SHARED = Path(__file__).resolve().parents[2] / "shared" / "traces" / "block"


def test_trace_replay_from_the_command_line(cli, tmp_path):
    trace = SHARED / "mqsim_tpcc_small.trace"
    if not trace.exists():
        pytest.skip(f"skipping: {trace} not found (../shared is absent)")
    out = tmp_path / "tr"
    proc = cli(
        "run",
        *TINY_ARGS,
        "--trace",
        str(trace),
        "--format",
        "mqsim",
        "--lba",
        "scale",
        "--out",
        str(out),
        "-q",
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["requests"] == 6999
    assert summary["host_read_requests"] == 4381 and summary["host_write_requests"] == 2618
    # Without --format the command is refused with a clear message; a bad format names the allowed ones.
    proc = cli("run", *TINY_ARGS, "--trace", str(trace), "-q")
    assert proc.returncode == 2 and "--format" in proc.stderr
    proc = cli("run", *TINY_ARGS, "--trace", str(trace), "--format", "mqsimm", "-q")
    assert proc.returncode == 2 and "workload.trace.format" in proc.stderr and "ssdsim" in proc.stderr


def test_run_is_recorded_unless_told_not_to(cli, db_path):
    rec = cli("run", *TINY_ARGS, "--db", str(db_path), "--tag", "a", "--tag", "b", "--label", "x", "-q")
    assert rec.returncode == 0, rec.stderr
    skip = cli("run", *TINY_ARGS, "--db", str(db_path), "--no-record")
    assert skip.returncode == 0 and "recorded as run" not in skip.stderr
    from nandstack import ResultsDB

    rows = ResultsDB(db_path).runs(columns=["source", "tags", "label"]).to_dicts()
    assert rows == [{"source": "cli", "tags": ["a", "b"], "label": "x"}]
    loud = cli("run", *TINY_ARGS, "--db", str(db_path))
    assert "recorded as run" in loud.stderr


def test_results_commands(cli, db_path):
    for seed in ("1", "2"):
        assert cli("run", *TINY_ARGS, "--seed", seed, "--db", str(db_path), "-q").returncode == 0
    db = ["--db", str(db_path)]
    listed = cli("results", *db)
    assert listed.returncode == 0, listed.stderr
    header, *rows = listed.stdout.splitlines()
    assert header.split()[:3] == ["run_id", "created_at", "source"] and "waf" in header
    assert len(rows) == 2 and "2 runs in" in listed.stderr
    ids = [row.split()[0] for row in rows]
    assert cli("results", "list", "--where", "seed = 1", *db).stdout.count("\n") == 2
    assert "no runs match" in cli("results", "--where", "waf > 1000", *db).stderr
    bad = cli("results", "--where", "nonsense >", *db)
    assert bad.returncode == 2 and "query failed" in bad.stderr
    compare = cli("results", "compare", *ids, "--metrics", "waf,iops", *db)
    assert compare.returncode == 0
    assert compare.stdout.splitlines()[0].split() == ["metric", *ids]
    assert "config.seed" in compare.stdout
    show = cli("results", "show", ids[0][:6], "--timeseries", "ts.parquet", *db)
    assert show.returncode == 0 and ids[0] in show.stdout and "waf" in show.stdout
    assert json.loads(cli("results", "show", ids[0], "--json", *db).stdout)["seed"] in (1, 2)
    assert "[device.ftl]" in cli("results", "show", ids[0], "--config", *db).stdout
    exported = cli("results", "export", "out/runs.csv", "--where", "seed = 2", *db)
    assert exported.returncode == 0 and "wrote 1 runs" in exported.stderr
    assert "waf" in cli("results", "metrics", *db).stdout.split()
    assert "CREATE TABLE" in cli("results", "info", *db).stdout


def test_sweep_command(cli, tmp_path, db_path):
    from conftest import TINY_DICT

    spec = tmp_path / "s.toml"
    lines = ['name = "cli-sweep"', "seeds = [1, 2]", "[set]", *(f'"{k}" = {v}' for k, v in TINY_DICT.items())]
    spec.write_text("\n".join(lines) + '\n[grid]\n"device.ftl.over_provisioning" = [0.25, 0.5]\n')
    dry = cli("sweep", str(spec), "--db", str(db_path), "--dry-run")
    assert dry.returncode == 0 and dry.stdout.count("to run") == 4
    ran = cli("sweep", str(spec), "--db", str(db_path), "--backend", "serial")
    assert ran.returncode == 0, ran.stderr
    assert "4 tasks: 4 run, 0 already recorded" in ran.stderr and "cli-sweep: 100%" in ran.stderr
    again = cli("sweep", str(spec), "--db", str(db_path), "--dry-run")
    assert again.stdout.count("recorded") == 4
    bad = tmp_path / "bad.toml"
    bad.write_text('[grid]\n"device.ftl.gc.victim.policy" = ["greedy", "bset"]\n')
    failed = cli("sweep", str(bad), "--db", str(db_path))
    assert failed.returncode == 2 and "bset" in failed.stderr and "Traceback" not in failed.stderr
