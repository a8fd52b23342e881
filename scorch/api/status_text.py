"""Render rooms for the terminal: a table of rows, and one room in full."""

from __future__ import annotations

import time
from collections.abc import Sequence

from scorch.app import RoomRow, RoomStatus
from scorch.hosts import HostInfo

COLUMNS = ("room", "group", "state", "port", "cpu %", "synths", "restarts")


def row(room: RoomRow) -> tuple[str, ...]:
    """One table row from a ``list_instances`` row."""
    cpu, synths = room.cpu, room.synths
    state = room.state
    if room.reason and state != "READY":
        reason = room.reason
        state += f" ({reason if len(reason) <= 80 else reason[:77] + '...'})"
    return (room.name, room.group or "-", state,
            str(room.port or "-"), f"{cpu:.1f}" if cpu is not None else "-",
            str(synths) if synths is not None else "-", restarts(room.restarts_by))


def restarts(by: dict[str, int]) -> str:
    """``0``, or which process restarted how often: ``sclang 1``, ``scsynth 2, sclang 1``."""
    return ", ".join(f"{kind} {count}" for kind, count in by.items() if count) or "0"


def render(rooms: Sequence[RoomRow]) -> str:
    """A fixed-width table with a header line (a host column when rooms have hosts)."""
    if any(s.host for s in rooms):
        return _table(("room", "host", *COLUMNS[1:]),
                      [(r[0], s.host or "-", *r[1:])
                       for s, r in ((s, row(s)) for s in rooms)])
    return _table(COLUMNS, [row(s) for s in rooms])


HOST_COLUMNS = ("host", "via", "address", "state", "rtt ms", "clock ms", "rooms")


def render_hosts(hosts: Sequence[HostInfo]) -> str:
    """The hosts of an installation: state, round trip, clock offset, and what is wrong."""
    rows = []
    notes = []
    for host in hosts:
        name = host.name or "(this machine)"
        state = host.state
        if host.reason and state != "CONNECTED":
            state += f" ({host.reason[:120]})"
        rtt, offset = host.rtt_ms, host.clock_offset_ms
        rows.append((name, host.transport, host.address, state,
                     f"{rtt:.1f}" if rtt is not None else "-",
                     f"{offset:+.1f}" if offset is not None else "-",
                     ", ".join(host.rooms) or "-"))
        notes += [f"{name}: {warning}" for warning in host.warnings]
    return "\n".join([_table(HOST_COLUMNS, rows), *notes])


def _table(columns: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    rows = [tuple(columns), *(tuple(r) for r in body)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(columns))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{days}d"] if days else []
    parts += [f"{hours}h"] if hours or days else []
    return " ".join([*parts, f"{minutes}m {secs:02d}s"])


def describe(status: RoomStatus) -> str:
    """One room's full status as a few lines for an operator."""
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(status.since))
    head = f"{status.name}  {status.state} since {since}"
    if status.uptime is not None:
        head += f" (up {_duration(status.uptime)})"
    head += f"  port {status.port or '-'}"
    if status.host:
        head += f"  host {status.host}"
    if status.group:
        head += f"  group {status.group}"
    lines = [head]
    if status.reason:
        lines.append(f"  why: {status.reason}")
    pids, server = status.pids, status.server
    scsynth = f"  scsynth pid {pids.get('scsynth') or '-'}"
    if server:
        scsynth += (f"  cpu {server.avg_cpu:.1f} % (peak {server.peak_cpu:.1f})  "
                    f"synths {server.synths}  ugens {server.ugens}")
    lines.append(scsynth)
    lines.append(f"  sclang  pid {pids.get('sclang') or '-'}  {status.sclang}")
    said = (f"  restarts: {restarts(status.restarts_by)} ({status.restarts_in_window} "
            f"in the window, {status.restart_budget_left} left)")
    if status.last_crash:
        said += f"; last crash: {status.last_crash}"
    lines.append(said)
    if status.sound is not None:
        lines.append(f"  sound: {status.sound}" + ("" if status.sound == "ok" else
                                                   "  (see the events: SOUND_*)"))
    for name, node in status.nodes.items():
        params = ", ".join(f"{k} {v:g}" for k, v in node.params.items())
        lines.append(f"  node {name} ({node.synthdef} #{node.node_id}): {params}")
    return "\n".join(lines)
