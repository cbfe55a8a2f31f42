"""Generated docs stay in sync with the code they are generated from."""

from __future__ import annotations

from pathlib import Path

from nandstack import _core

ROOT = Path(__file__).resolve().parents[1]


def test_config_reference_is_up_to_date():
    committed = (ROOT / "docs" / "config-reference.md").read_text(encoding="utf-8")
    generated = _core.config_reference_markdown()
    assert committed.strip() == generated.strip(), "docs/config-reference.md is stale: run `make docs`"
