"""Which hosts an operation goes to, and one answer made of theirs. Pure.

Everything here reads the operation's own declaration (:class:`~scorch.api.operation.
Spread`); nothing is known of any operation by name. A call that names rooms (its
``rooms`` argument) goes to the hosts of those rooms, each given the same
selector: a host resolves a group or ``*`` to its own rooms. A request that names
a host (a MIDI route goes where its controller is) goes there. One that names
none goes to every host, except what any one host answers alike (``any_host``:
the docs, the SynthDef library, the snippets): the first that answers does.

Answers are joined field by field (lists joined, dicts united, the first scalar
kept), in the config's order of rooms; an operation that merges its own way
(logs by time, history newest first) says how (``merge``). Rooms of a host that
did not answer are filled in where the operation gives them a place
(``unanswered``: a row saying why, an outcome that failed) so the other hosts'
answers are not lost.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scorch.api.operation import Answer, Host, Operation
from scorch.config import Config


@dataclass(frozen=True)
class Plan:
    """Where an operation goes."""

    hosts: tuple[Host, ...]
    """In config order."""
    rooms: dict[Host, tuple[str, ...]]
    """The rooms it names on each host (every room of the host when it names none)."""
    one: bool = False
    """Any one of ``hosts`` answers (the first that does)."""


def label(host: Host) -> str:
    """A host's name for a person."""
    return host if host is not None else "(this machine)"


def plan(op: Operation[Any, Any], args: Any, config: Config,
         parts: Sequence[Host] | None = None) -> Plan:
    """The hosts operation ``op`` with ``args`` goes to (among ``parts``: default all).

    RoomNotFound when the rooms named match nothing, as a host would say.
    """
    parts = list(config.parts() if parts is None else parts)
    every = {host: tuple(n for n, i in config.instances.items() if i.host == host)
             for host in parts}
    where = op.where(args)
    if where.host is not None and where.host in parts:
        return Plan((where.host,), {where.host: every[where.host]})
    if where.rooms is not None:
        return _rooms(config.resolve(where.rooms), config, parts, where.rooms)
    return Plan(tuple(parts), every, one=op.spread.any_host)


def _rooms(names: list[str], config: Config, parts: Sequence[Host], selector: str) -> Plan:
    rooms: dict[Host, list[str]] = {}
    for room in names:
        host = config.instances[room].host
        if host in parts:
            rooms.setdefault(host, []).append(room)
    if not rooms:
        from scorch.errors import RoomNotFound

        here = [n for n, i in config.instances.items() if i.host in parts]
        raise RoomNotFound(selector, here)
    hosts = tuple(h for h in config.parts() if h in rooms)
    return Plan(hosts, {h: tuple(rooms[h]) for h in hosts})


# --- merging -------------------------------------------------------------------------


def merge(op: Operation[Any, Any], args: Any, answers: Sequence[tuple[Host, Answer]],
          config: Config) -> Answer:
    """One answer from the hosts' answers to ``op``."""
    merged = _join([answer for _, answer in answers])
    order = {room: index for index, room in enumerate(config.instances)}
    if op.spread.merge is not None:
        merged = op.spread.merge(merged, answers, args)
    for key in ("instances", "results"):
        rows = merged.get(key)
        if isinstance(rows, list) and all(isinstance(r, dict) for r in rows):
            field = "name" if key == "instances" else "instance"
            rows.sort(key=lambda r: order.get(r.get(field), len(order)))
            if key == "instances":
                for row in rows:
                    row["host"] = config.instances[row["name"]].host \
                        if row.get("name") in config.instances else row.get("host")
    return merged


def _join(answers: Sequence[Answer]) -> Answer:
    out: Answer = {}
    for answer in answers:
        for key, value in answer.items():
            if key not in out:
                out[key] = _copy(value)
            elif isinstance(out[key], list) and isinstance(value, list):
                out[key] = out[key] + _copy(value)
            elif isinstance(out[key], dict) and isinstance(value, dict):
                out[key] = {**out[key], **_copy(value)}
            elif out[key] is None:
                out[key] = _copy(value)
    return out


def _copy(value: Any) -> Any:
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    return value



# --- rooms of hosts that did not answer ---------------------------------------------------


def unanswered(op: Operation[Any, Any], rooms: Sequence[str], why: str, config: Config,
               last: Mapping[str, Answer] | None = None, state: str = "") -> Answer | None:
    """The part of ``op``'s answer for ``rooms`` whose host did not answer.

    None when the answer has no place for it (the call then fails, naming the host).
    ``last``: the rooms' rows as their host last gave them; ``state``: the host's
    (rows say it, and the hosts table why).
    """
    if op.spread.unanswered is None:
        return None
    short = f"host {label(config.instances[rooms[0]].host)} {state}" if state else why
    return op.spread.unanswered(rooms, why, short, config, last or {})


def unknown_rows(rooms: Sequence[str], why: str, short: str, config: Config,
                 last: Mapping[str, Answer]) -> Answer:
    """``instances`` rows (as ``list_instances`` gives them) in state UNKNOWN, saying why."""
    return {"instances": [_unknown_row(room, short, config, last.get(room)) for room in rooms]}


def unknown_statuses(rooms: Sequence[str], why: str, short: str, config: Config,
                     last: Mapping[str, Answer]) -> Answer:
    """``instances`` statuses (as ``status`` gives them) in state UNKNOWN, saying why."""
    rows = [{**_unknown_row(room, short, config, last.get(room)), "lang_port": None,
             "pids": {}, "sclang": "unknown", "restarts_in_window": 0, "last_crash": None,
             "nodes": {}, "server": None} for room in rooms]
    for row in rows:
        for key in ("cpu", "peak_cpu", "synths", "restarts"):
            row.pop(key, None)
    return {"instances": rows}


def unknown_statuses_failed(rooms: Sequence[str], why: str, short: str, config: Config,
                            last: Mapping[str, Answer]) -> Answer:
    """Statuses in state UNKNOWN, and each room ``failed`` with why (an action on rooms)."""
    return {**unknown_statuses(rooms, why, short, config, last),
            "failed": {room: why for room in rooms}}


def failed_outcomes(rooms: Sequence[str], why: str, short: str, config: Config,
                    last: Mapping[str, Answer]) -> Answer:
    """``results``: one outcome per room (as ``execute`` gives them) that failed, saying why."""
    return {"results": [_failed_outcome(room, why) for room in rooms]}


def _unknown_row(room: str, why: str, config: Config, last: dict[str, Any] | None) -> Answer:
    inst = config.instances[room]
    seen = f"; last seen {last['state']}" if last else ""
    return {"name": room, "group": inst.group, "host": inst.host, "state": "UNKNOWN",
            "since": time.time(), "reason": f"{why}{seen}", "port": (last or {}).get("port"),
            "uptime": None, "restart_budget_left": 0, "cpu": None, "peak_cpu": None,
            "synths": None, "restarts": 0, "nodes": list((last or {}).get("nodes") or [])}


def _failed_outcome(room: str, why: str) -> Answer:
    return {"instance": room, "ok": False, "value": None, "posted": [], "warnings": [],
            "elapsed_ms": 0.0, "request": 0, "left_running": None, "console_since": None,
            "server_errors": [],
            "error": {"kind": "unavailable", "message": why, "line": None, "char": None,
                      "context": "", "error_class": None, "receiver": None, "selector": None,
                      "call_stack": [], "library_frames": [], "protected_call_stack": [],
                      "text": f"unavailable: {why}"}}
