"""Which hosts an operation goes to, and one answer made of theirs. Pure.

An operation that names rooms (its ``instance`` argument; ``instance``'s
``name``) goes to the hosts of those rooms, each given the same selector: a
host resolves a group or ``*`` to its own rooms. One that names none goes to
every host (``list_instances``, ``reload``, ``midi``...), except what any one
host answers alike (the docs, the SynthDef library, the snippets): the first
that answers does. A MIDI route to add goes to the host its controller is on.

Answers are merged field by field (lists joined, dicts united, the first
scalar kept), in the config's order of rooms; a few operations merge their
own way (logs by time, history newest first). Rooms of a host that did not
answer are filled in where the answer has a place for them (a row saying
why, an outcome that failed) so the other hosts' answers are not lost.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from scorch.config.installation import Config

#: Operations any one host answers alike: the first that answers does.
ONE_HOST = frozenset({"docs", "synthdefs", "snippet"})
#: The argument naming rooms, when it is not ``instance`` (a group's own tempo is set
#: where the group's rooms are).
ROOM_ARGUMENT = {"instance": "name", "tempo": "group"}

Host = str | None
Answer = dict[str, Any]


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


def plan(name: str, args: Any, config: Config, parts: Sequence[Host] | None = None) -> Plan:
    """The hosts operation ``name`` with ``args`` goes to (among ``parts``: default all).

    InstanceNotFound when the rooms named match nothing, as a host would say.
    """
    parts = list(config.parts() if parts is None else parts)
    every = {host: tuple(n for n, i in config.instances.items() if i.host == host)
             for host in parts}
    selector = getattr(args, ROOM_ARGUMENT.get(name, "instance"), None)
    if isinstance(selector, str):
        return _rooms(config.resolve(selector), config, parts, selector)
    if name == "midi" and getattr(args, "action", None) == "map":
        spec = getattr(args, "spec", None) or {}
        host = spec.get("host")
        if isinstance(host, str) and host in parts:
            return Plan((host,), {host: every[host]})
        if isinstance(spec.get("instance"), str):
            return _rooms(config.resolve(spec["instance"]), config, parts, spec["instance"])
    return Plan(tuple(parts), every, one=name in ONE_HOST)


def _rooms(names: list[str], config: Config, parts: Sequence[Host], selector: str) -> Plan:
    rooms: dict[Host, list[str]] = {}
    for room in names:
        host = config.instances[room].host
        if host in parts:
            rooms.setdefault(host, []).append(room)
    if not rooms:
        from scorch.errors import InstanceNotFound

        here = [n for n, i in config.instances.items() if i.host in parts]
        raise InstanceNotFound(selector, here)
    hosts = tuple(h for h in config.parts() if h in rooms)
    return Plan(hosts, {h: tuple(rooms[h]) for h in hosts})


# --- merging -------------------------------------------------------------------------


def merge(name: str, args: Any, answers: Sequence[tuple[Host, Answer]],
          config: Config) -> Answer:
    """One answer from the hosts' answers to operation ``name``."""
    merged = _join([answer for _, answer in answers])
    order = {room: index for index, room in enumerate(config.instances)}
    special = _MERGES.get(name)
    if special is not None:
        merged = special(merged, answers, args)
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


def _logs(merged: Answer, answers: Sequence[tuple[Host, Answer]], args: Any) -> Answer:
    entries = sorted(merged.get("entries") or [], key=lambda e: e["time"])
    if not getattr(args, "after", None):
        entries = entries[-args.lines:]
    return {**merged, "entries": entries}


def _history(merged: Answer, answers: Sequence[tuple[Host, Answer]], args: Any) -> Answer:
    entries = sorted(merged.get("entries") or [], key=lambda e: -e["time"])
    return {**merged, "entries": entries[:args.limit]}


def _events(merged: Answer, answers: Sequence[tuple[Host, Answer]], args: Any) -> Answer:
    return {**merged, "events": sorted(merged.get("events") or [], key=lambda e: e["time"])}


def _reload(merged: Answer, answers: Sequence[tuple[Host, Answer]], args: Any) -> Answer:
    changes = [f"{label(host)}: {line}" for host, answer in answers
               for line in answer.get("changes") or []]
    return {**merged, "changes": changes}


def _midi(merged: Answer, answers: Sequence[tuple[Host, Answer]], args: Any) -> Answer:
    if len(answers) == 1:
        return merged
    return {**merged, "result": {label(host): answer.get("result") for host, answer in answers}}


def _session(merged: Answer, answers: Sequence[tuple[Host, Answer]], args: Any) -> Answer:
    """A change that names no room (a tempo, a MIDI route) says whose host it is."""
    if len(answers) == 1:
        return merged
    changes = [{**change, "detail": f"{label(host)}: {change['detail']}"}
               if change.get("instance") is None else change
               for host, answer in answers for change in answer.get("changes") or []]
    return {**merged, "changes": changes}


_MERGES: dict[str, Callable[[Answer, Sequence[tuple[Host, Answer]], Any], Answer]] = {
    "logs": _logs, "history": _history, "events": _events, "reload": _reload, "midi": _midi,
    "session": _session,
}


# --- rooms of hosts that did not answer ---------------------------------------------------


def unanswered(name: str, rooms: Sequence[str], why: str, config: Config,
               last: dict[str, dict[str, Any]] | None = None, state: str = "") -> Answer | None:
    """The part of operation ``name``'s answer for ``rooms`` whose host did not answer.

    None when the answer has no place for it (the call then fails, naming the host).
    ``last``: the rooms' rows as their host last gave them; ``state``: the host's
    (rows say it, and the hosts table why).
    """
    last = last or {}
    short = f"host {label(config.instances[rooms[0]].host)} {state}" if state else why
    if name == "list_instances":
        return {"instances": [_unknown_row(room, short, config, last.get(room))
                              for room in rooms]}
    if name in ("status", "instance"):
        rows = [{**_unknown_row(room, short, config, last.get(room)), "lang_port": None,
                 "pids": {}, "sclang": "unknown", "restarts_in_window": 0, "last_crash": None,
                 "nodes": {}, "server": None} for room in rooms]
        for row in rows:
            for key in ("cpu", "peak_cpu", "synths", "restarts"):
                row.pop(key, None)
        answer: Answer = {"instances": rows}
        if name == "instance":
            answer["failed"] = {room: why for room in rooms}
        return answer
    if name == "execute":
        return {"results": [_failed_outcome(room, why) for room in rooms]}
    return None


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
