"""Render the instances' status as a plain-text table for the terminal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

COLUMNS = ("instance", "group", "state", "port", "cpu %", "synths", "restarts")


def row(status: dict[str, Any]) -> tuple[str, ...]:
    """One table row from an ``Orchestra.status`` dict."""
    server = status.get("server") or {}
    cpu = f"{server['avg_cpu']:.1f}" if server else "-"
    synths = str(server["synths"]) if server else "-"
    state = status["state"]
    if status.get("reason") and state != "READY":
        state += f" ({status['reason']})"
    return (status["name"], status.get("group") or "-", state, str(status.get("port") or "-"),
            cpu, synths, str(status.get("restarts_in_window", 0)))


def render(statuses: Sequence[dict[str, Any]]) -> str:
    """A fixed-width table with a header line."""
    rows = [COLUMNS, *(row(s) for s in statuses)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
