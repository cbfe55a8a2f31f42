"""The claims machinery (experiments/_claims.py): the verdict rule on hand-computed cases, the entry shape
of report.json `claims`, the seed shift of `reproduce --seed`, and the claims table of the HTML page."""

from __future__ import annotations

import pytest

from nandstack.experiments._claims import Ablation, Claim, claims_markdown, effect, verdict
from nandstack.experiments.base import Analysis, Experiment, _shift_seed_keys, make_task, shift_seeds


@pytest.mark.parametrize(
    ("ours", "paper", "kind", "expected"),
    [
        # percent changes: same sign and |ours|/|paper| in [1/1.5, 1.5]
        (-30.0, -44.7, "change", "reproduced"),  # 30/44.7 = 0.671 ≥ 0.667
        (-29.0, -44.7, "change", "direction only"),  # 29/44.7 = 0.649 < 0.667
        (-67.0, -44.7, "change", "reproduced"),  # 67/44.7 = 1.499
        (-67.1, -44.7, "change", "direction only"),  # 1.501
        (2.8, -44.7, "change", "differs"),
        (0.0, 15.7, "change", "differs"),
        # under 1 % of the paper's effect is no effect: differs, whatever its sign
        (-0.0004, -25.7, "change", "differs"),  # 0.0004/25.7 = 0.00002
        (-0.25, -25.7, "change", "differs"),  # 0.0097 < 0.01
        (-0.26, -25.7, "change", "direction only"),  # 0.0101
        (1.001, 1.27, "ratio", "differs"),  # 0.001/0.27 = 0.0037
        (None, 54.1, "change", "not measured"),
        (float("nan"), 54.1, "change", "not measured"),
        # ratios and WAFs count by their excess over 1 (the issue's example: 0.93 vs 1.27 differs)
        (0.93, 1.27, "ratio", "differs"),
        (1.2, 1.27, "ratio", "reproduced"),  # 0.2/0.27 = 0.741
        (1.15, 1.27, "ratio", "direction only"),  # 0.15/0.27 = 0.556
        (8.0, 10.0, "ratio", "reproduced"),  # 7/9 = 0.778
        (4.0, 2.5, "ratio", "direction only"),  # 3/1.5 = 2
        # a level (a share) is compared as it is
        (94.0, 94.5, "level", "reproduced"),
    ],
)
def test_verdict_rule(ours: float | None, paper: float, kind: str, expected: str) -> None:
    assert verdict(ours, paper, kind) == expected


def test_effect_and_bad_kind() -> None:
    assert effect(1.27, "ratio") == pytest.approx(0.27)
    assert effect(-20.3, "change") == -20.3
    with pytest.raises(ValueError, match="claim kind"):
        effect(1.0, "percent")
    with pytest.raises(ValueError, match="no sign"):
        verdict(1.0, 1.0, "ratio")
    with pytest.raises(ValueError, match="claim id"):
        Claim("S 1", "x", "§1", "%", 1.0)


def test_entry_shape_matches_issue() -> None:
    claim = Claim("S2a", "GC page moves vs Cosmos+ at 50 % writes", "§5.3.2", "%", -44.7)
    entry = claim.entry(
        today=2.8,
        paper_platform=-31.23456,
        ablations=[Ablation("per-die GC", "garbage_collection.c:71", -10.0)],
        why="measured",
    )
    assert list(entry) == [
        "id",
        "claim",
        "where",
        "unit",
        "paper",
        "today",
        "paper_platform",
        "ablations",
        "verdict",
        "why",
    ]
    assert entry["paper"] == -44.7
    assert entry["paper_platform"] == -31.235
    assert entry["verdict"] == "reproduced"  # 31.2/44.7 = 0.70
    ablation = {"change": "per-die GC", "source": "garbage_collection.c:71", "value": -10.0}
    assert entry["ablations"] == [ablation]
    table = claims_markdown([entry, Claim("S4", "tps", "§5.3.3", "%", 54.1).entry(None, None)])
    assert "| S2a |" in table and "+2.8 %" in table and "-31.2 %" in table
    assert table.endswith("2 claims: 1 reproduced, 1 not measured.")
    # With `why`: a last column holding each entry's explanation, a pipe in it escaped for Markdown.
    wide = claims_markdown([{**entry, "why": "GC moved 5 | 6 pages"}], why=True)
    header, rule, row = wide.splitlines()[:3]
    assert header.endswith("| why |") and rule.count("|") == header.count("|")
    assert row.endswith("| GC moved 5 / 6 pages |") and row.count("|") == header.count("|")


def test_shift_seeds_moves_every_seed_and_keeps_params() -> None:
    task = make_task({"workload.requests": 100}, {"seed": 3, "scheme": "a"})
    shifted = shift_seeds(task, 100)
    assert shifted.config["seed"] == 103
    assert shifted.params == {"seed": 3, "scheme": "a"}
    assert shifted.config_hash != task.config_hash and "seeds +100" in shifted.label
    assert task.config["seed"] == 3  # the original is untouched
    assert shift_seeds(task, 0) is task
    unseeded = make_task({"workload.requests": 100}, {})
    unseeded.config.pop("seed", None)
    assert shift_seeds(unseeded, 5).config["seed"] == 47  # the default 42, shifted
    # nested seeds (a host program's generator, a policy's `*_seed`) move too; other keys do not
    programs = [{"seed": 11}, {"lottery_seed": 2, "seed_x": 5, "on": True}]
    nested = {"seed": 1, "workload": {"programs": programs}}
    _shift_seed_keys(nested, 10)
    assert nested == {
        "seed": 11,
        "workload": {"programs": [{"seed": 21}, {"lottery_seed": 12, "seed_x": 5, "on": True}]},
    }


def test_claims_table_in_html(tmp_path) -> None:
    from nandstack.report.html import render_page

    experiment = Experiment(
        name="demo",
        title="Demo",
        paper="p",
        claim="c",
        method="m",
        tasks=lambda quick: [],
        analyze=lambda t, r: Analysis("", ""),
        setup=lambda quick: {},
    )
    entry = Claim("R2", "WAF vs the others", "§4.1", "%", -20.3).entry(
        12.7, -25.0, [Ablation("UST as published", "Yang et al. §3", 3.0)], "why text"
    )
    analysis = Analysis("measured", "differs", claims=[entry])
    page = render_page(experiment, analysis, out_dir=tmp_path, figures={}, tables={}, info={}, runs=[])
    assert page.index('id="claims"') < page.index("<h2>Runs</h2>")
    assert 'id="claim-R2"' in page and "reproduced" in page and "UST as published" in page
    assert "why text" in page


def test_reproduce_rejects_a_bad_seed_shift(tmp_path) -> None:
    from nandstack.report import reproduce

    for bad in (-1, True, 1.5):
        with pytest.raises(ValueError, match="seed shift"):
            reproduce("sup-gc", quick=True, out=tmp_path / "r", seed=bad, record=False)


def test_cosmos_platform_settings_follow_the_firmware() -> None:
    from nandstack.experiments import _cosmos

    # logical = 90% of the blocks less one per die: 1 / (0.9 − 1/8192) − 1, by hand 0.111262...
    assert _cosmos.firmware_op() == pytest.approx(1 / (0.9 - 1 / 8192) - 1, rel=1e-12)
    assert 0.1112 < _cosmos.firmware_op() < 0.1114
    full = _cosmos.cosmos_overrides(128)
    geo = full["device.geometry"]
    assert geo["channels"] * geo["chips_per_channel"] * geo["dies_per_chip"] == 64
    assert (geo["planes_per_die"], geo["pages_per_block"], geo["page_size_bytes"]) == (1, 128, 16384)
    assert geo["cell_mode"] == "slc" and "device.geometry.cell_mode" not in full
    assert full["device.ftl.gc.burst"] == "one_victim" and full["device.ftl.gc.start_free_blocks"] == 2
    assert full["device.ftl.allocation"] == "dynamic"
    sup = _cosmos.cosmos_overrides(128, streams=2)
    assert sup["device.ftl.gc.start_free_blocks"] == 3  # room for two open blocks per die
    only = _cosmos.cosmos_overrides(128, "slc_mode")
    assert only == {"device.geometry.cell_mode": "slc"}
    with pytest.raises(ValueError, match="unknown platform difference"):
        _cosmos.cosmos_overrides(128, "ext5")
    assert all(d.source for d in _cosmos.DIFFERENCES)


def test_sup_gc_platform_tasks_build_valid_configs() -> None:
    from nandstack.experiments import sup_gc

    tasks = [t for t in sup_gc.tasks(False) if "platform" in t.params]
    platforms = {t.params["platform"] for t in tasks}
    assert platforms == {
        "paper",
        "today",
        "+dies",
        "+gc_schedule",
        "+striping",
        "+op",
        "+slc_mode",
        "+fio_layout",
        "paper, 4x blocks per die",
    }
    paper = [t for t in tasks if t.params["platform"] == "paper" and "write_ratio" in t.params]
    assert sorted({t.params["write_ratio"] for t in paper}) == [0.25, 0.5, 0.75, 0.99]
    # the volume is 70% of the paper drive's own logical capacity (64 dies × 128 blocks × 2 MiB)
    raw = 64 * 128 * 128 * 16384
    logical = int(raw / (1 + round(1 / (0.9 - 1 / 8192) - 1, 5))) // 4096 * 4096
    assert paper[0].config["workload"]["requests"] == int(0.7 * logical) // 4096


def test_rl_claims_by_hand() -> None:
    import polars as pl

    from nandstack.experiments import _rl_claims

    rows = [
        # workload, manager, throughput, waf
        ("pc", "rl", 30.0, 1.2),
        ("pc", "dwa", 20.0, 1.5),
        ("pc", "ust", 10.0, 1.0),
        ("pc", "dwa2", 15.0, 1.5),
        ("oltp", "rl", 12.0, 1.1),
        ("oltp", "dwa", 10.0, 1.1),
        ("oltp", "ust", 12.0, 2.2),
        ("oltp", "dwa2", 8.0, 1.1),
    ]
    means = pl.DataFrame(rows, schema=["workload", "manager", "throughput_mib_s", "waf"], orient="row")
    costs = {
        "cost_slc_to_qlc_s": [4.0, 8.0],
        "cost_qlc_to_qlc_s": [1.0, 2.0],
        "cost_slc_to_slc_s": [0.0, 0.0],
    }
    frame = pl.DataFrame({"part": ["standin"] * 2, "workload": ["pc"] * 2, "manager": ["rl", "ust"], **costs})
    pretrain = pl.DataFrame({"workload": ["tpcc", "oltp"], "gain_pct": [3.0, 9.5]})
    r1, r2, r3, r4 = _rl_claims.claim_entries(frame, means, pretrain)
    # R1: vs DWA (30/20 − 1 + 12/10 − 1) / 2 = 0.35; vs UST (30/10 − 1 + 12/12 − 1) / 2 = 1.0; mean 67.5%
    assert r1["today"] == pytest.approx(67.5) and r1["paper_platform"] is None
    assert r1["verdict"] == "not measured"  # no paper-platform runs given
    # R2: vs DWA (1.2/1.5 − 1 + 0) / 2 = −0.1; vs UST (0.2 + 0.5 − 1) / 2 = −0.15; mean −12.5%
    assert r2["today"] == pytest.approx(-12.5)
    assert r3["today"] == pytest.approx(-50.0)  # (4 + 1) / (8 + 2) − 1
    assert r4["today"] == 9.5
    # the Setting 2 ablation: vs DWA2 (30/15 − 1 + 12/8 − 1) / 2 = 0.75; with UST's 1.0: 87.5%
    assert r1["ablations"][0]["value"] == pytest.approx(87.5)
    assert "Utilization-aware self-tuning" in r1["why"]  # the searches for UST's paper are named

    # The paper platform changes RL only: RL 20 on pc (4-bit table), DWA and UST today's.
    paper = means.with_columns(
        pl.when((pl.col("workload") == "pc") & (pl.col("manager") == "rl"))
        .then(20.0)
        .otherwise(pl.col("throughput_mib_s"))
        .alias("throughput_mib_s")
    ).filter(pl.col("manager") != "dwa2")
    frame4 = pl.concat(
        [
            frame,
            pl.DataFrame(
                {"part": ["paper"], "workload": ["pc"], "manager": ["rl"], **{k: [2.0] for k in costs}}
            ),
        ]
    )
    platform = {
        "means": paper,
        "pretrain": pl.DataFrame({"workload": ["tpcc"], "gain_pct": [30.0]}),
        "r1_seeds": {"today": [(1, 10.0), (2, -3.0), (3, 4.0)]},
    }
    r1, r2, r3, r4 = _rl_claims.claim_entries(frame4, means, pretrain, platform)
    # vs DWA (20/20 − 1 + 0.2) / 2 = 0.1; vs UST (20/10 − 1 + 0) / 2 = 0.5; mean 30%: 30 / 77.6 < 1/1.5
    assert r1["paper_platform"] == pytest.approx(30.0) and r1["verdict"] == "direction only"
    assert [a["value"] for a in r1["ablations"]] == [pytest.approx(87.5), pytest.approx(30.0)]
    assert "spread -3.0 … +10.0%" in r1["why"]
    assert r3["paper_platform"] == pytest.approx(-40.0)  # (2 + 2 + 2) / (8 + 2) − 1
    assert [a["value"] for a in r3["ablations"]] == [pytest.approx(-40.0)]  # no nearest-rounding runs
    assert r4["paper_platform"] == 30.0 and r4["verdict"] == "direction only"  # 30 / 12.8 > 1.5


def test_rl_platform_runs_the_4_bit_table() -> None:
    from nandstack.experiments import _rl_platform, rl_slc_cache

    tasks = [t for t in rl_slc_cache.tasks(True) if t.params["part"] in _rl_platform.PARTS]
    assert {t.params["part"] for t in tasks} == {"paper", "paper_pretrained"}
    assert all(t.config["device"]["manager"]["rl"]["q_bits"] == 4 for t in tasks)
    assert len(tasks) == len(rl_slc_cache.STANDINS) + len(rl_slc_cache.UNSEEN)


def test_sup_gc_other_schemes_on_the_paper_platform() -> None:
    from nandstack.experiments import _cosmos, _sup_gc_claims, sup_gc

    tasks = [t for t in sup_gc.tasks(False) if t.params.get("platform") == "paper"]
    gcar = [t for t in tasks if t.params["scheme"] == "GCaR-like"]
    assert gcar and all(t.config["device"]["controller"]["write_buffer"]["gc_aware_scan"] == 10 for t in gcar)
    bf = [t for t in tasks if t.params["scheme"] == "BF-Optimized"]
    assert bf and all(t.config["device"]["ftl"]["gc"]["burst"] == "to_start" for t in bf)
    assert _cosmos.streams("GCaR-like") == 1

    class R:  # a finished run's finals, by hand
        def __init__(self, iops: float) -> None:
            self.iops = iops

    picked = [t for t in tasks if t.params.get("write_ratio") == 0.5]
    runs = {"Cosmos+": 100.0, "SUP-GC": 150.0, "BF-Optimized": 120.0, "GCaR-like": 60.0}
    results = [R(runs[t.params["scheme"]]) for t in picked]
    rows = _sup_gc_claims.other_scheme_rows(
        picked, results, lambda r: {"iops": r.iops, "gc_moves": 0.0, "p99": 1.0}
    )
    iops = next(r for r in rows if r["metric"] == "iops")
    assert iops["sup_gc_vs_bf"] == 25.0 and iops["sup_gc_vs_gcar"] == 150.0  # 150/120 − 1, 150/60 − 1
    assert iops["paper_sup_gc_vs_bf"] == 10.1 and iops["gcar_vs_cosmos"] == -40.0


def test_dwa_settings_table_picks_the_faster_setting() -> None:
    import polars as pl

    from nandstack.experiments import _dwa_settings

    base = {f"cost_{c}_s": [1.0, 1.0] for c in _dwa_settings.COST_COLUMNS}
    frame = pl.DataFrame(
        {
            "part": ["fig2", "fig2"],
            "workload": ["pc", "pc"],
            "utilisation": [0.2, 0.2],
            "setting": [1, 2],
            "write_cost_s": [5.0, 4.0],
            **base,
        }
    )
    table = _dwa_settings.table(frame)
    assert table["faster_setting"].to_list() == [2, 2]
    assert _dwa_settings.table(pl.DataFrame()).is_empty()


def test_sup_gc_claim_change_by_hand() -> None:
    from nandstack.experiments._sup_gc_claims import _change

    finals = {
        ("paper", 0.5, "Cosmos+"): {"iops": 40.0, "gc_moves": 0.0},
        ("paper", 0.5, "SUP-GC"): {"iops": 54.0, "gc_moves": 0.0},
        ("paper", 0.75, "Cosmos+"): {"iops": 10.0, "gc_moves": 200.0},
    }
    assert _change(finals, "paper", 0.5, "iops") == pytest.approx(35.0)  # 54 / 40 − 1
    assert _change(finals, "paper", 0.5, "gc_moves") == 0.0  # no GC in either: no change
    assert _change(finals, "paper", 0.75, "iops") is None  # SUP-GC's run is missing
    assert _change(finals, "+op", 0.5, "iops") is None
