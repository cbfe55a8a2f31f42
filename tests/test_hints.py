"""Every command line and every config-key hint that nandstack prints or documents is checked against the
real parser and the real config schema, so a hint cannot outlive a rename (`ftl.…` → `device.ftl.…`,
`trace.lba` → `workload.trace.lba`).

Where hints come from: the `--help` text of every command and subcommand, every string literal of the
Python package and of the Rust crates' sources (error messages included), README.md and docs/*.md.
What is checked:
* a key named as `--set KEY=VALUE` or `set KEY = VALUE` must exist in the schema (the engine's validation
  may reject the value or ask for sibling keys, but never answer "unknown field");
* a command line `nandstack SUBCOMMAND ...` in the help texts, README or docs (code spans and code
  blocks; synopses with `[`, `|`, `…` or `<…>` placeholders are skipped) must parse with the CLI's parser.
"""

from __future__ import annotations

import argparse
import ast
import re
import shlex
from pathlib import Path

import pytest

from nandstack import cli
from nandstack._config_obj import Config
from nandstack._core import NandstackError

ROOT = Path(__file__).resolve().parents[1]

SET_HINT = re.compile(r"--set[ =]([A-Za-z_][\w.\"-]*)=")
PROSE_HINT = re.compile(r"\bset `?([a-z_]+(?:\.[a-z_0-9]+)+)`?\s*=")
RUST_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
INLINE = re.compile(r"`([^`\n]+)`")
#: argparse's words for a stale command line (as opposed to one cut short: "expected one argument",
#: "the following arguments are required").
STALE = ("unrecognized arguments", "invalid choice", "ambiguous option", "not allowed with", "invalid")
SYNOPSIS = re.compile(r"[\[|…<>]|\.\.\.|\bSPEC\b|\bNAME\b|\bDIR\b|\bCONFIG\b|\bF\b")


def help_texts() -> list[tuple[str, str]]:
    """(where, text) of the top-level help and of every subcommand's help, recursively."""
    out: list[tuple[str, str]] = []

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        out.append((f"`{name} --help`", parser.format_help()))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, child in action.choices.items():
                    walk(child, f"{name} {sub}")

    walk(cli.build_parser(), "nandstack")
    return out


def python_strings() -> list[tuple[str, str]]:
    out = []
    for path in sorted((ROOT / "python" / "nandstack").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        # Adjacent literals are one Constant already; f-strings are JoinedStr of Constants.
        text = "\n".join(
            n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
        )
        out.append((str(path.relative_to(ROOT)), text))
    return out


def rust_strings() -> list[tuple[str, str]]:
    out = []
    for path in sorted((ROOT / "crates").glob("*/src/**/*.rs")):
        literals = RUST_STRING.findall(path.read_text(encoding="utf-8"))
        out.append((str(path.relative_to(ROOT)), "\n".join(s.replace('\\"', '"') for s in literals)))
    return out


def doc_texts() -> list[tuple[str, str]]:
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    # The config reference is generated from the schema itself.
    docs = [p for p in docs if p.name != "config-reference.md"]
    return [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in docs]


def key_hints() -> list[tuple[str, str]]:
    """(where, key) of every `--set KEY=` and `set KEY =` hint, deduplicated by key."""
    seen: dict[str, str] = {}
    for where, text in [*help_texts(), *python_strings(), *rust_strings(), *doc_texts()]:
        for pattern in (SET_HINT, PROSE_HINT):
            for key in pattern.findall(text):
                key = key.rstrip(".")
                if key.count(".") and not key.startswith(("KEY", "key", "section")):
                    seen.setdefault(key, where)
    return sorted((where, key) for key, where in seen.items())


def unknown_key(key: str) -> str | None:
    """The engine's "unknown field" complaint about `key`, or None when the schema knows the key."""
    try:
        Config.default([f"{key}=0"])
    except NandstackError as e:
        if "unknown field" in str(e) or "is now" in str(e):
            return str(e)
    return None


def test_hint_extraction_finds_the_shapes_it_checks():
    assert SET_HINT.findall("e.g. --set device.ftl.gc.victim.policy=fifo --set x.y=1") == [
        "device.ftl.gc.victim.policy",
        "x.y",
    ]
    assert PROSE_HINT.findall('set `workload.trace.lba` = "wrap"; set trace.lba = "scale"') == [
        "workload.trace.lba",
        "trace.lba",
    ]
    assert unknown_key("ftl.gc.victim.policy") is not None
    assert unknown_key("device.ftl.gc.victim.policy") is None
    assert len(key_hints()) >= 10, "the scan found almost no hints: the patterns no longer match the sources"


@pytest.mark.parametrize(("where", "key"), key_hints(), ids=lambda v: v if "." in v and "/" not in v else "")
def test_every_key_hint_names_a_real_key(where, key):
    problem = unknown_key(key)
    assert problem is None, f"{where} hints at `{key}`, which the config schema does not have: {problem}"


def command_spans(text: str) -> list[str]:
    """Candidate command lines of a text: inline code spans, and the lines of fenced code blocks."""
    spans = []
    for block in FENCE.findall(text):
        spans.extend(line.strip().removeprefix("$ ") for line in block.splitlines())
    spans.extend(INLINE.findall(FENCE.sub("", text)))
    return [s.removeprefix("python3 -m ").removeprefix("python -m ") for s in spans]


def command_lines() -> list[tuple[str, str]]:
    """(where, command) of every concrete `nandstack …` command line in the help texts and the docs."""
    out: dict[str, str] = {}
    for where, text in [*help_texts(), *doc_texts()]:
        for span in command_spans(text):
            if not span.startswith("nandstack "):
                continue
            line = span.split(" #")[0].split(" && ")[0].split(" | ")[0].split(" > ")[0]
            line = line.rstrip("\\").strip().rstrip(".,;:)")
            if SYNOPSIS.search(line) or line.count("'") % 2 or line.count('"') % 2:
                continue
            out.setdefault(line, where)
    return sorted((where, line) for line, where in out.items())


def test_command_scan_finds_commands():
    lines = [c for _, c in command_lines()]
    assert any(c.startswith("nandstack run") for c in lines)
    assert any(c.startswith("nandstack reproduce") for c in lines)


def _command_id(value: str) -> str:
    return value if value.startswith("nandstack") else ""


@pytest.mark.parametrize(("where", "line"), command_lines(), ids=_command_id)
def test_every_documented_command_parses(where, line, capsys):
    """A line cut short in prose (`nandstack run --out`, a command without its positional argument) only
    names an option; what must never appear is a subcommand, option or choice the parser does not know."""
    argv = shlex.split(line)[1:]
    try:
        cli.build_parser().parse_args(argv)
    except SystemExit as e:
        err = capsys.readouterr().err
        stale = [w for w in STALE if w in err]
        assert e.code in (0, None, 2), err
        last = err.strip().splitlines()[-1] if err.strip() else ""
        assert not stale, f"{where}: `{line}` names what the parser does not know: {last}"
