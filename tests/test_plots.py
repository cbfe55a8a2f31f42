"""Report figures: a rate that barely moves is drawn on an axis from zero, not stretched into a collapse."""

from __future__ import annotations

import matplotlib
import matplotlib.figure
import pytest

from nandstack.experiments.base import Figure, Series
from nandstack.report import plots

matplotlib.use("Agg", force=True)


def test_narrow_spans_are_recognised():
    assert plots.narrow([199_600, 200_200])  # 0.3%: the case a user read as a collapse
    assert not plots.narrow([1.0, 3.0])  # a real change keeps auto-scaling
    assert not plots.narrow([-1.0, -0.99])  # negative values (a change in %) keep auto-scaling
    assert not plots.narrow([])
    assert plots.narrow([5.0, None, 5.2])


@pytest.mark.parametrize(("ys", "from_zero"), [([199_600, 200_200, 199_900], True), ([10, 40, 25], False)])
def test_line_figure_axis(tmp_path, monkeypatch, ys, from_zero):
    seen = {}
    real_savefig = matplotlib.figure.Figure.savefig

    def savefig(fig, path, **kw):
        seen["ylim"] = fig.axes[0].get_ylim()
        return real_savefig(fig, path, **kw)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", savefig)
    fig = Figure("iops", "IOPS", "checkpoint", "IOPS", [Series("SUP-GC", [1, 2, 3], ys)])
    paths = plots.render_figure(fig, tmp_path)
    assert all(p.stat().st_size > 0 for p in paths)
    bottom, top = seen["ylim"]
    assert (bottom == 0.0) == from_zero
    assert top >= max(ys)
