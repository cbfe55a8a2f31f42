"""README and guide snippets run as tests: every ```python block of README.md (and of the Python guides in
docs/) executes, in order, in one namespace per file (so a later block may use names from an earlier one),
in a temporary directory with the session's temporary results database. Skips a file that has no Python
block yet."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = [README, ROOT / "docs" / "python.md", ROOT / "docs" / "experiments.md"]
BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(line number, code) of every ```python block."""
    return [(text.count("\n", 0, m.start()) + 2, m.group(1)) for m in BLOCK.finditer(text)]


def test_block_extraction():
    text = "intro\n```python\nx = 1\n```\n\n```bash\nls\n```\n```python\ny = x + 1\n```\n"
    assert python_blocks(text) == [(3, "x = 1\n"), (10, "y = x + 1\n")]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_python_snippets_run(doc, tmp_path, monkeypatch):
    if not doc.is_file():
        pytest.skip(f"no {doc.name}")
    blocks = python_blocks(doc.read_text(encoding="utf-8"))
    if not blocks:
        pytest.skip(f"{doc.name} has no ```python block")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__doc_snippet__"}
    for line, code in blocks:
        compiled = compile(code, f"{doc.relative_to(ROOT)}:{line}", "exec")
        exec(compiled, namespace)
