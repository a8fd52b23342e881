"""Render instance rows as a plain-text table for the terminal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

COLUMNS = ("instance", "group", "state", "port", "cpu %", "synths", "restarts")


def row(instance: dict[str, Any]) -> tuple[str, ...]:
    """One table row from a ``list_instances`` row."""
    cpu = instance.get("cpu")
    synths = instance.get("synths")
    state = instance["state"]
    if instance.get("reason") and state != "READY":
        state += f" ({instance['reason']})"
    return (instance["name"], instance.get("group") or "-", state,
            str(instance.get("port") or "-"), f"{cpu:.1f}" if cpu is not None else "-",
            str(synths) if synths is not None else "-", str(instance.get("restarts", 0)))


def render(instances: Sequence[dict[str, Any]]) -> str:
    """A fixed-width table with a header line."""
    rows = [COLUMNS, *(row(s) for s in instances)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
