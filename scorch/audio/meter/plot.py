"""Draw a sweep's table as one PNG: the figure against the param (or a map of two params).

Drawn with matplotlib's Agg canvas through :class:`matplotlib.figure.Figure`, without
pyplot: no display, no global state. matplotlib is imported inside :func:`sweep_plot`.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

#: The picture's size in pixels, as listen's.
WIDTH, HEIGHT = 1000, 600
_DPI = 100


def sweep_plot(params: Sequence[str], ratio: Sequence[bool],
               rows: Sequence[tuple[tuple[float, ...], float | None]], figure: str,
               target: float | None, best: tuple[float, ...] | None, title: str) -> bytes:
    """A PNG of ``rows`` ((values, figure) per step): a line over one param, or a map of
    the figure over two; the target as a line, the closest step marked."""
    from matplotlib.figure import Figure

    drawing = Figure(figsize=(WIDTH / _DPI, HEIGHT / _DPI), dpi=_DPI)
    axes = drawing.add_subplot()
    heard = [(values, value) for values, value in rows if value is not None]
    if len(params) == 1:
        ordered = sorted(heard)
        axes.plot([v[0] for v, _ in ordered], [y for _, y in ordered], "o-", color="#1f77b4")
        if target is not None:
            axes.axhline(target, color="#d62728", linestyle="--", label=f"target {target:g}")
        if best is not None:
            found = next((y for v, y in heard if v == best), None)
            if found is not None:
                axes.plot([best[0]], [found], "*", markersize=18, color="#2ca02c",
                          label=f"closest: {params[0]} = {best[0]:.4g}")
        axes.set_xlabel(params[0])
        axes.set_ylabel(figure)
        if ratio[0]:
            axes.set_xscale("log")
        axes.legend(loc="best")
    else:
        points = axes.scatter([v[0] for v, _ in heard], [v[1] for v, _ in heard],
                              c=[y for _, y in heard], s=400, cmap="viridis", marker="s")
        drawing.colorbar(points, ax=axes).set_label(figure)
        if best is not None:
            axes.plot([best[0]], [best[1]], "*", markersize=20, color="#d62728",
                      label="closest")
            axes.legend(loc="best")
        axes.set_xlabel(params[0])
        axes.set_ylabel(params[1])
        if ratio[0]:
            axes.set_xscale("log")
        if ratio[1]:
            axes.set_yscale("log")
    axes.grid(True, alpha=0.3)
    axes.set_title(title)
    out = io.BytesIO()
    drawing.savefig(out, format="png", dpi=_DPI)
    return out.getvalue()
