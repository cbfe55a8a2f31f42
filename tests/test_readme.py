"""README snippets run as tests: every ```python block of README.md executes, in order, in one namespace
(so a later block may use names from an earlier one), in a temporary directory with the session's
temporary results database. Skips when the README has no Python block yet."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(line number, code) of every ```python block."""
    return [(text.count("\n", 0, m.start()) + 2, m.group(1)) for m in BLOCK.finditer(text)]


def test_block_extraction():
    text = "intro\n```python\nx = 1\n```\n\n```bash\nls\n```\n```python\ny = x + 1\n```\n"
    assert python_blocks(text) == [(3, "x = 1\n"), (10, "y = x + 1\n")]


def test_readme_python_snippets_run(tmp_path, monkeypatch):
    if not README.is_file():
        pytest.skip("no README.md")
    blocks = python_blocks(README.read_text(encoding="utf-8"))
    if not blocks:
        pytest.skip("README.md has no ```python block")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__readme__"}
    for line, code in blocks:
        compiled = compile(code, f"README.md:{line}", "exec")
        exec(compiled, namespace)
