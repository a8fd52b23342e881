"""``scorch report``: each room's uptime, restarts, silence, limiting and loudness of a span."""

from __future__ import annotations

import argparse


def cmd_report(args: argparse.Namespace) -> int:
    """Print the report of the config's state folder."""
    from scorch.app.history import render
    from scorch.config import find_config, load_config

    config = load_config(find_config(args.config))
    fmt = "csv" if args.csv else "html" if args.html else "text"
    print(render(config.state_path(), args.since, fmt), end="")
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``report`` subcommand."""
    report = sub.add_parser("report", help="each room's uptime, restarts, silence and "
                            "loudness over a span")
    report.add_argument("--config")
    report.add_argument("--since", default="24h", help="how far back: 90, 30m, 24h, 7d")
    kind = report.add_mutually_exclusive_group()
    kind.add_argument("--csv", action="store_true", help="CSV instead of a table")
    kind.add_argument("--html", action="store_true", help="an HTML page with loudness plotted")
    report.set_defaults(func=cmd_report)
