"""``scorch report --html``: the report's table and each room's loudness over time, one file.

matplotlib is imported here only, when a page is asked for (a second to import).
"""

from __future__ import annotations

import base64
import html
import io

from scorch.app.history.store import Sample
from scorch.app.history.summary import COLUMNS, RoomReport


def _plot(samples: list[Sample]) -> str:
    """Each room's ``lufs`` samples as a PNG data URL; empty when there are none."""
    loud = [s for s in samples if s.name == "lufs"]
    if not loud:
        return ""
    import matplotlib

    matplotlib.use("Agg")  # no display: the page is a file
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8, 3))
    axes = figure.subplots()
    start = loud[0].time
    for room in sorted({s.room for s in loud}):
        its = [s for s in loud if s.room == room]
        axes.plot([(s.time - start) / 3600 for s in its], [s.value for s in its], label=room)
    axes.set_xlabel("hours")
    axes.set_ylabel("LUFS")
    axes.legend()
    out = io.BytesIO()
    figure.savefig(out, format="png")
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode()


def as_html(reports: list[RoomReport], samples: list[Sample], heading: str) -> str:
    """One self-contained page: the heading, the table and the loudness plot."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in COLUMNS)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(r.row()[c])}</td>" for c in COLUMNS)
                   + "</tr>" for r in reports)
    plot = _plot(samples)
    image = f'<img alt="loudness" src="{plot}">' if plot else "<p>no loudness samples</p>"
    return (f"<!doctype html><meta charset=utf-8><title>{html.escape(heading)}</title>"
            f"<h1>{html.escape(heading)}</h1><table><tr>{head}</tr>{rows}</table>{image}\n")
