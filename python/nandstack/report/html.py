"""The self-contained HTML page of an experiment report: inline CSS, figures embedded as PNG data URIs
(with links to the SVG/PNG/CSV files beside it), no script and no network access."""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..experiments.base import Analysis, Experiment, Table

__all__ = ["render_page"]

VERDICT_COLORS = {
    "agrees": "#1b7f3b",
    "partly agrees": "#9a6700",
    "differs": "#b3261e",
    "not comparable": "#57606a",
}

CSS = """
:root { --fg: #1f2328; --muted: #57606a; --line: #d0d7de; --bg2: #f6f8fa; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       max-width: 1100px; margin: 2rem auto; padding: 0 1.2rem; }
h1 { font-size: 1.6rem; margin: 0 0 .2rem; } h2 { font-size: 1.2rem; margin-top: 2rem;
     border-bottom: 1px solid var(--line); padding-bottom: .3rem; }
.meta { color: var(--muted); font-size: .9rem; }
.badge { display: inline-block; color: #fff; border-radius: 1rem; padding: .05rem .7rem; font-size: .85rem;
         font-weight: 600; vertical-align: middle; }
.side { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; margin-top: 1rem; }
.side > div { border: 1px solid var(--line); border-radius: .5rem; padding: .8rem 1rem;
              background: var(--bg2); }
.side h3 { margin: 0 0 .4rem; font-size: 1rem; }
@media (max-width: 760px) { .side { grid-template-columns: 1fr; } }
table { border-collapse: collapse; font-size: .85rem; margin: .5rem 0; }
th, td { border: 1px solid var(--line); padding: .25rem .55rem; }
th { background: var(--bg2); text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.scroll { overflow-x: auto; }
figure { margin: 1rem 0; } figure img { max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { color: var(--muted); font-size: .88rem; }
code { background: var(--bg2); padding: .05rem .3rem; border-radius: .25rem; }
pre { background: var(--bg2); padding: .6rem .8rem; border-radius: .4rem; overflow-x: auto;
      font-size: .82rem; }
dl.setup { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
dl.setup dt { font-weight: 600; } dl.setup dd { margin: 0; }
.errors { color: #b3261e; }
"""


def render_page(
    experiment: Experiment,
    analysis: Analysis,
    *,
    out_dir: Path,
    figures: Mapping[str, Sequence[Path]],
    tables: Mapping[str, Path],
    info: Mapping[str, Any],
    runs: Sequence[Mapping[str, Any]],
    errors: Sequence[str] = (),
    example_config: str = "",
) -> str:
    """The report page. `figures` maps figure names to their written files (PNG first), `tables` table
    names to CSV files, `info` holds version/commit/mode/timing facts, `runs` one row per run."""
    e = html.escape
    verdict = analysis.verdict
    quick_flag = " --quick" if info.get("quick") else ""
    color = VERDICT_COLORS.get(verdict, VERDICT_COLORS["not comparable"])
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(experiment.title)} — nandstack</title>",
        f"<style>{CSS}</style></head><body>",
        f'<h1>{e(experiment.title)} <span class="badge" style="background:{color}">{e(verdict)}</span></h1>',
        f'<p class="meta"><code>nandstack reproduce {e(experiment.name)}{quick_flag}'
        f"</code> · {e(str(info.get('mode', '')))} run · {e(str(info.get('date', '')))} · nandstack "
        f"{e(str(info.get('version', '')))} · commit {e(str(info.get('git_commit') or 'unknown'))}</p>",
        '<section class="side" id="claim-vs-measured">',
        f"<div><h3>The paper's claim</h3><p>{e(experiment.claim)}</p>"
        f'<p class="meta">{e(experiment.paper)}</p></div>',
        f"<div><h3>Our measured result</h3><p>{e(analysis.measured)}</p>"
        f'<p class="meta">Verdict: <strong>{e(verdict)}</strong></p></div>',
        "</section>",
        "<h2>Setup</h2>",
        f"<p>{e(experiment.method_text(bool(info.get('quick'))))}</p>",
        '<dl class="setup">',
    ]
    setup = dict(info.get("setup", {}))
    setup["runs"] = (
        f"{info.get('runs', 0)} ({info.get('ran', 0)} run now, {info.get('skipped', 0)} from the database)"
    )
    setup["wall time"] = f"{float(info.get('wall_seconds', 0.0)):.1f} s"
    setup["CPU time"] = (
        f"{float(info.get('wall_cpu_seconds', 0.0)):.1f} s, summed over the runs made now (each run's "
        "in report.json run_list)"
    )
    for key, value in setup.items():
        parts.append(f"<dt>{e(str(key))}</dt><dd>{e(str(value))}</dd>")
    parts.append("</dl>")
    if errors:
        parts.append("<h2>Failed runs</h2><ul class='errors'>")
        parts += [f"<li>{e(msg)}</li>" for msg in errors]
        parts.append("</ul>")
    if analysis.claims:
        parts.append(_claims_html(analysis.claims))
    if analysis.figures:
        parts.append("<h2>Figures</h2>")
    for figure in analysis.figures:
        files = list(figures.get(figure.name, []))
        if not files:
            continue
        png = files[0]
        data = base64.b64encode(png.read_bytes()).decode("ascii")
        links = " · ".join(f'<a href="{e(p.name)}">{e(p.suffix[1:].upper())}</a>' for p in files)
        parts.append(
            f'<figure id="fig-{e(figure.name)}"><img src="data:image/png;base64,{data}" '
            f'alt="{e(figure.title)}" width="1080" height="662">'
            f"<figcaption><strong>{e(figure.title)}.</strong> {e(figure.caption)} ({links})</figcaption>"
            "</figure>"
        )
    if analysis.tables:
        parts.append("<h2>Tables</h2>")
    for table in analysis.tables:
        parts.append(_table_html(table, tables.get(table.name)))
    if analysis.notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{e(n)}</li>" for n in analysis.notes) + "</ul>")
    if example_config:
        parts.append(
            "<h2>Configuration</h2><details><summary>Effective config of the first run (the others differ "
            "in the parameters listed under Runs)</summary>"
            f"<pre><code>{e(example_config)}</code></pre></details>"
        )
    parts.append(_runs_html(runs))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _table_html(table: Table, csv: Path | None) -> str:
    e = html.escape
    frame = table.frame
    head = "".join(f"<th>{e(c)}</th>" for c in frame.columns)
    body = []
    for row in frame.iter_rows():
        cells = []
        for value in row:
            numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
            cells.append(f'<td class="num">{_fmt(value)}</td>' if numeric else f"<td>{e(_fmt(value))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    link = f' (<a href="{e(csv.name)}">CSV</a>)' if csv is not None else ""
    caption = f" {e(table.caption)}" if table.caption else ""
    return (
        f'<h3 id="table-{e(table.name)}">{e(table.title)}</h3><p class="meta">{caption}{link}</p>'
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody>'
        "</table></div>"
    )


CLAIM_COLORS = {
    "reproduced": "#1b7f3b",
    "direction only": "#9a6700",
    "differs": "#b3261e",
    "not measured": "#57606a",
}


def _claims_html(claims: Sequence[Mapping[str, Any]]) -> str:
    """The claims table (before the figures): the paper's number, ours on today's platform and on the
    paper's, the verdict, then each ablation (one paper-platform difference switched on alone) and why."""
    e = html.escape
    rows = []
    for c in claims:
        color = CLAIM_COLORS.get(str(c.get("verdict")), CLAIM_COLORS["not measured"])
        ablations = "".join(
            f"<li>{e(str(a['change']))}: <strong>{_fmt(a.get('value'))}</strong> "
            f'<span class="meta">({e(str(a.get("source", "")))})</span></li>'
            for a in c.get("ablations", [])
        )
        detail = (f"<ul>{ablations}</ul>" if ablations else "") + e(str(c.get("why", "")))
        unit = e(str(c.get("unit", "")))
        rows.append(
            f'<tr id="claim-{e(str(c["id"]))}"><td><strong>{e(str(c["id"]))}</strong></td>'
            f"<td>{e(str(c['claim']))} <span class='meta'>({e(str(c['where']))})</span></td>"
            f'<td class="num">{_fmt(c["paper"])} {unit}</td>'
            f'<td class="num">{_fmt(c.get("today"))} {unit}</td>'
            f'<td class="num">{_fmt(c.get("paper_platform"))} {unit}</td>'
            f'<td><span class="badge" style="background:{color}">{e(str(c["verdict"]))}</span></td>'
            f"<td>{detail}</td></tr>"
        )
    counts: dict[str, int] = {}
    for c in claims:
        counts[str(c["verdict"])] = counts.get(str(c["verdict"]), 0) + 1
    summary = ", ".join(f"{n} {e(v)}" for v, n in counts.items())
    return (
        f'<h2 id="claims">Claims</h2><p class="meta">{len(claims)} claims: {summary}. "reproduced": the '
        "paper platform's number has the paper's sign and lies within 1.5× of it (a ratio or a WAF by its "
        'excess over 1); "direction only": the sign agrees; "differs": it does not. Ablations: from '
        "today's platform, one paper-platform difference switched on at a time.</p>"
        '<div class="scroll"><table><thead><tr><th>id</th><th>claim (where)</th><th>paper</th><th>today</th>'
        "<th>paper platform</th><th>verdict</th><th>ablations · why</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _runs_html(runs: Sequence[Mapping[str, Any]]) -> str:
    e = html.escape
    rows = "".join(
        f"<tr><td><code>{e(str(r.get('run_id') or '-'))}</code></td>"
        f"<td><code>{e(str(r.get('config_hash', '')))}"
        f"</code></td><td>{e(str(r.get('label', '')))}</td><td>{e(str(r.get('status', '')))}</td></tr>"
        for r in runs
    )
    return (
        f"<h2>Runs</h2><details><summary>{len(runs)} runs (ids in the results database: "
        "<code>nandstack results show ID</code>)</summary><div class='scroll'><table><thead><tr>"
        "<th>run id</th>"
        f"<th>config hash</th><th>parameters</th><th>status</th></tr></thead><tbody>{rows}</tbody></table>"
        "</div></details>"
    )


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        if value != value:  # nan
            return "–"
        return f"{value:.4g}" if abs(value) < 1e5 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)
