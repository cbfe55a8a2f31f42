"""A paper's headline numbers as data: each `Claim` names one number the paper prints (id, the claim,
where, unit, the value exactly as printed) and `Claim.entry` measures it against our runs — on today's
platform, on the paper's platform, and under each one-difference ablation — and gives the verdict.

The verdict rule (docs/experiments.md, "Claims"):

- `reproduced`: on the paper platform the number has the paper's sign and lies within 1.5× of the
  paper's number (|ours| / |paper| between 1/1.5 and 1.5);
- `direction only`: the sign agrees but the magnitude does not;
- `differs`: the sign differs (or the number is zero where the paper's is not);
- `not measured`: the paper platform gave no number (the run was not made or failed).

What "sign" and "magnitude" are depends on the claim's `kind`: a percent change (`change`) and a plain
level (`level`, e.g. a share in %) count as they are; a ratio and a WAF (`ratio`) count by their excess
over 1 (0.93 against 1.27 is −0.07 against +0.27: it differs).

An experiment lists its `Claim`s as module data and, in `analyze`, calls `entry` for each with the numbers
it measured; the list goes to `Analysis.claims`, `report.json` `claims` and the table of `index.html`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "KINDS",
    "NEGLIGIBLE",
    "TOLERANCE",
    "VERDICTS",
    "Ablation",
    "Claim",
    "claims_markdown",
    "effect",
    "verdict",
]

#: How far (a factor) the paper platform's number may lie from the paper's and still be `reproduced`.
TOLERANCE = 1.5
#: An effect under this share of the paper's is no effect at all (`differs`, not `direction only`): a WAF
#: change of -0.0004 % against the paper's -25.7 % has no direction worth the name.
NEGLIGIBLE = 0.01
KINDS = ("change", "level", "ratio")
VERDICTS = ("reproduced", "direction only", "differs", "not measured")


def effect(value: float, kind: str) -> float:
    """The signed effect a verdict compares: a ratio's excess over 1, else the value itself."""
    if kind not in KINDS:
        raise ValueError(f"claim kind `{kind}` is not one of {', '.join(KINDS)}")
    return value - 1.0 if kind == "ratio" else value


def verdict(ours: float | None, paper: float, kind: str) -> str:
    """The verdict of `ours` (the paper platform's number) against the paper's printed number."""
    if ours is None or ours != ours:
        return "not measured"
    mine, theirs = effect(float(ours), kind), effect(float(paper), kind)
    if theirs == 0.0:
        raise ValueError("a claim whose effect is zero has no sign to reproduce")
    ratio = abs(mine) / abs(theirs)
    if ratio < NEGLIGIBLE or (mine > 0) != (theirs > 0):
        return "differs"
    return "reproduced" if 1.0 / TOLERANCE <= ratio <= TOLERANCE else "direction only"


@dataclass(frozen=True)
class Ablation:
    """One paper-platform difference switched on alone, from today's platform: what changed, where the
    setting comes from (firmware file and line, paper section, data sheet) and the number it gave."""

    change: str
    source: str
    value: float | None

    def as_dict(self) -> dict[str, Any]:
        return {"change": self.change, "source": self.source, "value": _round(self.value)}


@dataclass(frozen=True)
class Claim:
    """One number a paper prints. `paper` is the value exactly as printed (a ratio printed "N×" is N);
    `kind` says how the verdict reads it (`change`, `level` or `ratio`, see the module docs)."""

    id: str
    claim: str
    where: str
    unit: str
    paper: float
    kind: str = "change"

    def __post_init__(self) -> None:
        effect(self.paper, self.kind)  # validates the kind
        if not self.id or " " in self.id:
            raise ValueError(f"claim id `{self.id}` must be non-empty with no spaces")

    def entry(
        self,
        today: float | None,
        paper_platform: float | None,
        ablations: Sequence[Ablation] = (),
        why: str = "",
    ) -> dict[str, Any]:
        """The `report.json` entry: the paper's number, ours on both platforms, each ablation, the
        verdict (judged on the paper platform) and why (the measured explanation when not reproduced)."""
        return {
            "id": self.id,
            "claim": self.claim,
            "where": self.where,
            "unit": self.unit,
            "paper": self.paper,
            "today": _round(today),
            "paper_platform": _round(paper_platform),
            "ablations": [a.as_dict() for a in ablations],
            "verdict": verdict(paper_platform, self.paper, self.kind),
            "why": why,
        }

    def row(self, change: str, source: str, value: float | None, *, digits: int) -> dict[str, Any]:
        """One row of an experiment's ablation table: the claim, the paper's number, the platform change
        (and where its setting comes from) and the value it gave, rounded to `digits`."""
        return {
            "claim": self.id,
            "paper": self.paper,
            "change": change,
            "source": source,
            "value": None if value is None else round(value, digits),
        }


def _round(value: float | None) -> float | None:
    if value is None or value != value:
        return None
    return round(float(value), 3)


def claims_markdown(entries: Sequence[Mapping[str, Any]], why: bool = False) -> str:
    """The claims as a Markdown table (what `nandstack reproduce` prints and the docs paste); `why`
    adds each entry's measured explanation as a last column."""
    lines = [
        "| id | claim (where) | paper | today | paper platform | verdict |" + (" why |" if why else ""),
        "|---|---|---|---|---|---|" + ("---|" if why else ""),
    ]
    for e in entries:
        unit = e.get("unit", "")
        because = " " + str(e.get("why", "")).replace("|", "/").strip() + " |" if why else ""
        lines.append(
            f"| {e['id']} | {e['claim']} ({e['where']}) | {_cell(e['paper'], unit)} | "
            f"{_cell(e['today'], unit)} | {_cell(e['paper_platform'], unit)} | {e['verdict']} |" + because
        )
    counts = {v: sum(1 for e in entries if e["verdict"] == v) for v in VERDICTS}
    summary = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    return "\n".join(lines) + f"\n\n{len(entries)} claims: {summary}."


def _cell(value: Any, unit: str) -> str:
    if value is None:
        return "–"
    text = f"{value:+.1f}" if unit == "%" else f"{value:.3g}"
    return f"{text} {unit}".strip()
