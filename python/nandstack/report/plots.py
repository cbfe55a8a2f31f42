"""Draw an experiment's `Figure`s with matplotlib (imported lazily) as PNG and SVG."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._core import NandstackError
from ..experiments.base import Figure

__all__ = ["import_pyplot", "render_figure"]

#: Colour-blind-safe palette (Okabe–Ito), then matplotlib's defaults.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def import_pyplot() -> Any:
    """matplotlib's pyplot on the non-interactive Agg backend, or a clear error saying how to get it."""
    try:
        import matplotlib
    except ImportError:
        raise NandstackError(
            "plots need matplotlib, a core dependency of nandstack that is missing here: "
            "pip install 'matplotlib>=3.6' (or reinstall nandstack)"
        ) from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def render_figure(figure: Figure, out_dir: Path, dpi: int = 144) -> list[Path]:
    """Write `<name>.png` and `<name>.svg` under `out_dir`; returns both paths."""
    plt = import_pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.6), layout="constrained")
    try:
        if figure.kind == "bar":
            _bars(ax, figure.series)
        elif figure.kind == "stacked":
            _stacked(ax, figure.series)
        else:
            _lines(ax, figure.series)
        ax.set_title(figure.title, fontsize=11)
        ax.set_xlabel(figure.xlabel)
        ax.set_ylabel(figure.ylabel)
        if figure.logy:
            _log_axis(ax)
        elif figure.kind == "line":
            _zero_based_if_narrow(ax, figure.series)
        ax.grid(True, which="major", alpha=0.3)
        if len(figure.series) > 1 or any(s.label for s in figure.series if s.style != "bar"):
            ax.legend(fontsize=8, frameon=False)
        out_dir.mkdir(parents=True, exist_ok=True)
        paths = [out_dir / f"{figure.name}.png", out_dir / f"{figure.name}.svg"]
        fig.savefig(paths[0], dpi=dpi)
        fig.savefig(paths[1], metadata={"Date": None})  # no timestamp: the SVG is reproducible
    finally:
        plt.close(fig)
    return paths


def _lines(ax: Any, series: Sequence[Any]) -> None:
    measured = 0
    # Categorical x (names): one position per category, labels tilted when there are many.
    categories = _categories(series) if any(isinstance(x, str) for s in series for x in s.x) else None
    for s in series:
        xs_all = [categories.index(str(x)) for x in s.x] if categories is not None else list(s.x)
        points = [(x, y, e) for x, y, e in zip(xs_all, s.y, s.yerr or [None] * len(s.x)) if y is not None]
        if not points:
            continue
        xs, ys, errs = zip(*points)
        if s.style in ("dashed", "dotted"):
            ax.plot(
                xs, ys, linestyle="--" if s.style == "dashed" else ":", color="0.35", lw=1.4, label=s.label
            )
            continue
        color, marker = PALETTE[measured % len(PALETTE)], MARKERS[measured % len(MARKERS)]
        measured += 1
        line = "-" if s.style == "line" else "none"
        yerr = errs if s.yerr is not None and any(e for e in errs) else None
        ax.errorbar(
            xs,
            ys,
            yerr=yerr,
            linestyle=line,
            marker=marker,
            ms=5 if len(xs) <= 40 or line == "none" else 0,  # long time series: no markers
            lw=1.3,
            capsize=3,
            color=color,
            label=s.label,
        )
    if categories is not None:
        _category_ticks(ax, categories, tilt_over=4, rotation=30, fontsize=8)


#: A y axis whose data span less than this fraction of their largest value starts at zero: matplotlib's
#: auto-scaling would stretch a 0.3% wobble (IOPS 199,600–200,200) over the whole height, which reads as
#: a collapse. Bars start at zero anyway; log axes and data with negative values keep auto-scaling.
NARROW_SPAN = 0.25


def narrow(values: Sequence[float]) -> bool:
    """Whether non-negative `values` span less than `NARROW_SPAN` of their largest (see above)."""
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if not finite or min(finite) < 0 or max(finite) <= 0:
        return False
    return (max(finite) - min(finite)) < NARROW_SPAN * max(finite)


def _zero_based_if_narrow(ax: Any, series: Sequence[Any]) -> None:
    values = [y for s in series for y in s.y]
    if narrow(values):
        ax.set_ylim(bottom=0.0, top=max(float(v) for v in values if v is not None) * 1.08)


def _bars(ax: Any, series: Sequence[Any]) -> None:
    categories = _categories(series)
    width = 0.8 / max(len(series), 1)
    for i, s in enumerate(series):
        by_x = {str(x): (y, e) for x, y, e in zip(s.x, s.y, s.yerr or [None] * len(s.x))}
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(categories))]
        ys = [by_x.get(c, (None, None))[0] for c in categories]
        errs = [by_x.get(c, (None, None))[1] or 0.0 for c in categories]
        heights = [float("nan") if y is None else y for y in ys]
        yerr = errs if s.yerr is not None and any(errs) else None
        label = s.label if len(series) > 1 else None
        ax.bar(
            xs,
            heights,
            width=width * 0.95,
            yerr=yerr,
            capsize=2,
            color=PALETTE[i % len(PALETTE)],
            label=label,
        )
    _category_ticks(ax, categories, tilt_over=4, rotation=30, fontsize=8)


def _categories(series: Sequence[Any]) -> list[str]:
    categories: list[str] = []
    for s in series:
        categories += [str(x) for x in s.x if str(x) not in categories]
    return categories


def _stacked(ax: Any, series: Sequence[Any]) -> None:
    """One bar per category, the series stacked bottom to top in order (missing values count as 0)."""
    categories = _categories(series)
    bottom = [0.0] * len(categories)
    for i, s in enumerate(series):
        by_x = {str(x): y for x, y in zip(s.x, s.y)}
        heights = [float(by_x.get(c) or 0.0) for c in categories]
        ax.bar(
            range(len(categories)),
            heights,
            bottom=bottom,
            width=0.75,
            color=PALETTE[i % len(PALETTE)],
            label=s.label,
        )
        bottom = [b + h for b, h in zip(bottom, heights)]
    _category_ticks(ax, categories, tilt_over=8, rotation=60, fontsize=7)


def _category_ticks(ax: Any, categories: list[str], tilt_over: int, rotation: int, fontsize: int) -> None:
    """One tick per category; the labels tilt by `rotation` when there are more than `tilt_over`."""
    tilt = len(categories) > tilt_over
    ax.set_xticks(range(len(categories)))
    ax.set_xticklabels(
        categories, rotation=rotation if tilt else 0, ha="right" if tilt else "center", fontsize=fontsize
    )


def _log_axis(ax: Any) -> None:
    """A log y axis labelled with plain numbers (2, 5, 10, 20) rather than powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator

    ax.set_yscale("log")
    plain = FuncFormatter(lambda v, _pos: f"{v:,.0f}" if v >= 1 else f"{v:g}")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda _v, _pos: ""))
