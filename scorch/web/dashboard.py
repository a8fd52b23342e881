"""Write the Grafana dashboard of scorch's /metrics: ``python -m scorch.web.dashboard``.

docs/grafana-dashboard.json is this module's output (a test says when it is stale);
every panel queries a family that :class:`scorch.web.metrics.RoomCollector` serves.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

#: The file in docs/ this writes.
DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana-dashboard.json"

ROOM = 'room=~"$room"'

#: (title, unit, PromQL, legend) per panel, in reading order.
PANELS: tuple[tuple[str, str, str, str], ...] = (
    ("Room state", "none", f'scorch_room_state{{{ROOM}}} == 1', "{{room}} {{state}}"),
    ("Uptime", "s", f"scorch_room_uptime_seconds{{{ROOM}}}", "{{room}}"),
    ("Restarts (per hour)", "none",
     f"increase(scorch_room_restarts_total{{{ROOM}}}[1h])", "{{room}} {{process}}"),
    ("Events by kind (per hour): crashes, hangs, sound", "none",
     f"increase(scorch_room_events_total{{{ROOM}}}[1h])", "{{room}} {{kind}}"),
    ("Peak (dBFS), into and out of the safety stage", "dB",
     f"scorch_room_peak_dbfs{{{ROOM}}}", "{{room}} {{at}}"),
    ("Gain reduction (dB)", "dB", f"scorch_room_gain_reduction_db{{{ROOM}}}",
     "{{room}} {{by}}"),
    ("Short-term loudness (LUFS)", "none", f"scorch_room_loudness_lufs{{{ROOM}}}", "{{room}}"),
    ("CPU", "percentunit", f"rate(scorch_process_cpu_seconds_total{{{ROOM}}}[5m])",
     "{{room}} {{process}}"),
    ("Sound faults (seconds per hour): silent, limiting, dc, howl, nan", "s",
     f"increase(scorch_room_sound_fault_seconds_total{{{ROOM}}}[1h])", "{{room}} {{fault}}"),
    ("xruns of the JACK server (per hour)", "none",
     f"increase(scorch_room_xruns_total{{{ROOM}}}[1h])", "{{room}}"),
    ("Alert messages (per hour)", "none", "increase(scorch_alerts_total[1h])", "{{outcome}}"),
    ("Operations called (per hour): MCP tools, CLI, page", "none",
     "increase(scorch_calls_total[1h])", "{{operation}}"),
    ("Operations failed (per hour)", "none", "increase(scorch_call_errors_total[1h])",
     "{{operation}}"),
    ("MIDI messages (per second)", "none", "rate(scorch_midi_messages_total[5m])",
     "{{direction}}"),
    ("MIDI errors (per hour)", "none", "increase(scorch_midi_errors_total[1h])", "{{where}}"),
)


def metric_names() -> set[str]:
    """The families the panels query (without ``_total``, as the parser names them)."""
    import re

    found = {m for _, _, expr, _ in PANELS for m in re.findall(r"\bscorch_[a-z_]+", expr)}
    return {name.removesuffix("_total") for name in found}


def _panel(index: int, title: str, unit: str, expr: str, legend: str) -> dict[str, Any]:
    return {
        "id": index + 1, "type": "timeseries", "title": title,
        "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "gridPos": {"h": 8, "w": 12, "x": 12 * (index % 2), "y": 8 * (index // 2)},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "targets": [{"refId": "A", "expr": expr, "legendFormat": legend,
                     "datasource": {"type": "prometheus", "uid": "${datasource}"}}],
    }


def dashboard() -> dict[str, Any]:
    """The dashboard as Grafana imports it (a datasource and a room variable)."""
    return {
        "title": "scorch", "uid": "scorch-rooms", "schemaVersion": 39, "version": 1,
        "editable": True, "time": {"from": "now-24h", "to": "now"}, "refresh": "30s",
        "tags": ["scorch", "supercollider"],
        "templating": {"list": [
            {"name": "datasource", "type": "datasource", "query": "prometheus"},
            {"name": "room", "type": "query", "includeAll": True, "multi": True,
             "datasource": {"type": "prometheus", "uid": "${datasource}"},
             "query": "label_values(scorch_room_state, room)", "refresh": 2,
             "current": {"text": "All", "value": "$__all"}},
        ]},
        "panels": [_panel(i, *panel) for i, panel in enumerate(PANELS)],
    }


def render() -> str:
    """The JSON text written to :data:`DASHBOARD`."""
    return json.dumps(dashboard(), indent=2) + "\n"


if __name__ == "__main__":
    DASHBOARD.write_text(render())
    print(f"wrote {DASHBOARD}", file=sys.stderr)
