"""The history read back for a span: what ``scorch report`` and ``events(report=...)`` show."""

from __future__ import annotations

import re
import time
from pathlib import Path

from scorch.app.history.store import HISTORY_FILE, History
from scorch.app.history.summary import as_csv, as_text, summarize
from scorch.errors import InvalidRequest

_SPAN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
_UNIT = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_span(text: str, what: str = "--since") -> float:
    """Seconds of ``24h``, ``30m``, ``7d`` or ``90`` (seconds); an error naming ``what``."""
    found = _SPAN.match(text)
    if found is None or float(found[1]) <= 0:
        raise InvalidRequest(f"{what} {text!r}: a span such as 90, 30m, 24h or 7d")
    return float(found[1]) * _UNIT[found[2]]


def render(state: Path, since: str, fmt: str, now: float | None = None,
           what: str = "--since") -> str:
    """The report of the history in ``state`` over the last ``since``: text, csv or html."""
    until = time.time() if now is None else now
    start = until - parse_span(since, what)
    path = state / HISTORY_FILE
    if not path.exists():
        raise InvalidRequest(f"no history at {path}: scorch run keeps it there while it runs")
    history = History(path)
    try:
        samples = history.samples(start)
        reports = summarize(history.events(start), samples, start, until)
    finally:
        history.close()
    if fmt == "html":
        from scorch.app.history.page import as_html

        return as_html(reports, samples, as_text([], start, until).splitlines()[0])
    return as_csv(reports) if fmt == "csv" else as_text(reports, start, until)
