"""``scorch report``: each room's uptime, restarts, silence, limiting and loudness of a span."""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from scorch.errors import InvalidRequest

_SPAN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
_UNIT = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_span(text: str) -> float:
    """Seconds of ``24h``, ``30m``, ``7d`` or ``90`` (seconds); a clear error otherwise."""
    found = _SPAN.match(text)
    if found is None or float(found[1]) <= 0:
        raise InvalidRequest(f"--since {text!r}: a span such as 90, 30m, 24h or 7d")
    return float(found[1]) * _UNIT[found[2]]


def render(state: Path, since: str, fmt: str, now: float | None = None) -> str:
    """The report of the history in ``state`` over the last ``since``, as text or CSV."""
    from scorch.app.history.store import HISTORY_FILE, History
    from scorch.app.history.summary import as_csv, as_text, summarize

    until = time.time() if now is None else now
    start = until - parse_span(since)
    path = state / HISTORY_FILE
    if not path.exists():
        raise InvalidRequest(f"no history at {path}: scorch run keeps it there while it runs")
    history = History(path)
    try:
        reports = summarize(history.events(start), history.samples(start), start, until)
    finally:
        history.close()
    return as_csv(reports) if fmt == "csv" else as_text(reports, start, until)


def cmd_report(args: argparse.Namespace) -> int:
    """Print the report of the config's state folder."""
    from scorch.config.installation import load_config
    from scorch.config.locate import find_config

    config = load_config(find_config(args.config))
    print(render(config.state_path(), args.since, "csv" if args.csv else "text"), end="")
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``report`` subcommand."""
    report = sub.add_parser("report", help="each room's uptime, restarts, silence and "
                            "loudness over a span")
    report.add_argument("--config")
    report.add_argument("--since", default="24h", help="how far back: 90, 30m, 24h, 7d")
    report.add_argument("--csv", action="store_true", help="CSV instead of a table")
    report.set_defaults(func=cmd_report)
