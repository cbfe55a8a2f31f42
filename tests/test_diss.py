"""The `diss` experiment (docs/diss.md) run tiny, in process: every scheme runs, the headline has one
entry per scheme with the paper's figures beside ours, and Fig. 4's classifier on a capture."""

from __future__ import annotations

import gzip

import pytest

from nandstack.experiments import diss
from nandstack.sweep import SerialBackend, run_tasks

TINY = {
    "overrides": {
        "device.geometry.channels": 2,
        "device.geometry.chips_per_channel": 1,
        "device.geometry.blocks_per_plane": 96,
        "device.ftl.gc.start_free_blocks": 14,
        "device.ftl.gc.stop_free_blocks": 15,
        "device.ftl.mapping_cache.entries": 512,
        "host.ram_mib": 32,
        "host.swap.size_mib": 48,
        "host.swap.offset_mib": 240,
    },
    "apps": [(4, 3), (8, 4), (5, 3), (6, 2)],
    "mobile": {"minute_ms": 8.0, "foreground_refs_per_ms": 400, "background_refs_per_ms": 10},
    "scenarios": ("video",),
    "seeds": (1,),
    "ablations": ("sdr",),
    "traces": (),
    "platform_scenarios": (),
    "platform_ablations": False,
}


def test_tiny_run_has_a_headline_per_scheme(monkeypatch):
    monkeypatch.setattr(diss, "QUICK", TINY)
    tasks = diss.tasks(True)
    assert len(tasks) == len(diss.SCHEMES) + 1
    outcome = run_tasks(tasks, backend=SerialBackend(), record=False, resume=False)
    assert outcome.ok, outcome.errors
    analysis = diss.EXPERIMENT.analyze(tasks, outcome.results)
    head = analysis.headline
    assert list(head) == list(diss.SCHEMES)
    for scheme, entry in head.items():
        for metric in diss.HEADLINE_METRICS:
            assert entry[metric] > 0, (scheme, metric)
        assert set(entry["paper_vs_itrim_pct"]) == set(diss.PAPER_VS_ITRIM)
    assert all(v == 0.0 for v in head["itrim"]["vs_itrim_pct"].values())
    assert head["diss"]["paper_vs_itrim_pct"]["waf"] == -58.3
    assert analysis.verdict in ("agrees", "partly agrees", "differs")
    assert {t.name for t in analysis.tables} >= {"headline", "table3", "runs"}
    assert {f.name for f in analysis.figures} >= {"fig10a_waf", "fig11_gc_writes", "fig4_swap_in_kinds"}
    runs = {(r["scheme"], r["scenario"]): r for r in analysis.tables[2].frame.to_dicts()}
    # CDH rewrites only where it is on; CL-SDI invalidates exactly what was swapped in from flash.
    assert runs[("itrim", "video")]["cdh_rewrites"] == 0
    assert runs[("cl_sdi", "video")]["cdh_rewrites"] > 0
    assert runs[("itrim", "video")]["swap_invalidated_pages"] == 0
    assert 0 < runs[("cl_sdi", "video")]["swap_invalidated_pages"] <= runs[("cl_sdi", "video")]["pswpin"]
    # Registration alone changes nothing.
    assert runs[("sdr", "video")]["waf"] == runs[("itrim", "video")]["waf"]
    assert "SDR only" in " ".join(analysis.notes)


def test_swap_in_kinds_of_a_capture(tmp_path):
    path = tmp_path / "c.csv.gz"
    rows = [
        "W,8,16",  # pages 1, 2 written
        "R,8,8",  # page 1: normal
        "R,8,16",  # page 1 again: in-and-in; page 2: normal
        "W,8,8",  # page 1 rewritten
        "R,8,8",  # normal
        "D,16,8",  # page 2 discarded: its history ends
        "R,16,8",  # page 2 read after the discard counts as normal (as the kernel never does)
    ]
    with gzip.open(path, "wt") as f:
        f.write("time_s,op,sector,sectors,comm\n")
        for i, r in enumerate(rows):
            f.write(f"{i}.0,{r},memtouch\n")
    assert diss.swap_in_kinds(path) == (4, 1)


@pytest.mark.parametrize("quick", [True, False])
def test_setup_names_the_device_and_schemes(quick):
    s = diss.setup(quick)
    assert "Table 1" in s["device"] and "iTRIM" in s["schemes"]


def test_a_damaged_capture_json_is_a_named_capture_error(tmp_path, monkeypatch):
    """A capture whose JSON has the registry's size but wrong content (so the data set's size check
    passes) is a `CaptureError` naming the file and the key, not a KeyError from deep inside a task."""
    from nandstack import data
    from nandstack.experiments._captures import CaptureError

    try:
        src = data.require("kernel-swap")
    except data.DataError:
        pytest.skip("data set kernel-swap not found (see `nandstack data`)")
    folder = tmp_path / "kernel-swap"
    folder.mkdir()
    for f in src.iterdir():
        (folder / f.name).symlink_to(f)
    name = "kswap_hot_w30_r1"
    target = folder / f"{name}.json"
    size = target.stat().st_size
    target.unlink()
    text = '{"swap_mb": "lots"}'
    target.write_text(text + " " * (size - len(text)))
    monkeypatch.setenv("NANDSTACK_DATA", str(tmp_path))
    with pytest.raises(CaptureError, match=r"kswap_hot_w30_r1\.json: `swap_mb` is \"lots\""):
        diss.trace_task(diss.QUICK, name, "diss")
