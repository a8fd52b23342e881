"""The live view of an installation: one model for the technician's page and the Claude panel.

Built from what the operations already answer (``status``, ``events``, ``tempo``,
``playing``), called through the service as every front end calls them, plus what
only this process holds: the level meters (``orch.meters``), the MIDI router's
counters and jackd's xruns. :func:`meters_now` is the light part sent many times a
second; :func:`live_view` the whole view, sent about once a second.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field

from scorch.api import journaled
from scorch.api.models import plain
from scorch.api.operation import Operation, Result
from scorch.errors import ScorchError
from scorch.primitives.sclang import short
from scorch.primitives.system import XRUN, cpu_seconds

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scorch.app import Orchestra


class Caller(Protocol):
    """What runs the operations the view is built from (a service)."""

    def call(self, name: str, args: Mapping[str, Any]) -> Result:
        """Run operation ``name``."""
        ...


class Here:
    """The operations on an orchestra of this process, run as every front end runs them
    (journaled, kept in the history)."""

    def __init__(self, orch: Orchestra, lookup: Callable[[str], Operation[Any, Any]]) -> None:
        self.orch = orch
        self.lookup = lookup

    def call(self, name: str, args: Mapping[str, Any]) -> Result:
        """Validate ``args`` and run ``name`` (the same checks as every front end's)."""
        op = self.lookup(name)
        return journaled.perform(self.orch, op, op.parse(args))


#: Events kept in the view (the page filters them by room and kind).
EVENTS_SHOWN = 60
#: Patterns shown per room: a card's worth (and within a model's budget for the view).
PATTERNS_SHOWN = 16
#: Event kinds that are trouble.
TROUBLE = frozenset({"CRASHED", "HUNG", "FAILED", "BOOT_FAILED", "STARTUP_ERROR", "DEGRADED",
                     "BUFFER_LOST", "NODE_ENDED", "SOUND_SILENT", "SOUND_LIMITING",
                     "SOUND_NAN", "SOUND_HOWL", "SOUND_DC",
                     "SOUND_XRUNS"})
#: Seconds of jackd's output whose xruns are counted (a rate, not a total).
XRUN_WINDOW = 60.0
#: Seconds two looks at a process's CPU time must be apart to give a rate (a page and a
#: panel may look moments apart: the older look stays and the last rate is answered).
CPU_SPAN = 0.25
#: A pattern's main params: ``\key, value`` pairs of its source (symbols as ``\key`` or
#: ``'key'``, as sclang's compile strings write them) whose value is one short literal (a
#: number, a symbol, a name); what a pattern computes (Pseq, Pwhite) is left out.
_PAIR = re.compile(r"(?:\\(\w+)|'(\w+)')\s*,\s*(-?[\w.]+|\\\w+|'\w+')\s*(?=[,)\]])")
PARAMS_SHOWN = 6
_NAMED = re.compile(r"^\s*(?:Pdef|Pbindef|Tdef|Ndef)\(\s*(?:\\\w+|'\w+')\s*,")


class Meter(BaseModel):
    """A room's outputs now: peak and RMS per output, dBFS (-90: silence or no reading)."""

    peak: list[float]
    rms: list[float]


class NodeLive(BaseModel):
    """A named node and its params."""

    name: str
    synthdef: str
    node_id: int
    params: dict[str, float]
    ranges: dict[str, tuple[float, float, str]] = Field(
        default_factory=dict, description="each param's spec: min, max, warp (a fader's)")


class PatternLive(BaseModel):
    """A Pdef, Pbindef, Tdef or Ndef, as ``playing`` describes it."""

    kind: str
    name: str
    playing: bool
    quant: str
    mute: str = Field(description="muted, solo (the others are muted for it) or empty")
    last_event: float | None = Field(description="Unix time of the last event it played "
                                     "(None: none seen since scorch started)")
    params: dict[str, str] = Field(description="its main params: the keys its source gives "
                                   "a short literal value (\\dur 0.25, \\instrument sine)")
    source: str = Field(description="its definition on one short line")


class RoomLive(BaseModel):
    """One room at a glance."""

    name: str
    group: str | None
    state: str
    since: float
    reason: str | None
    uptime: float | None
    restarts: int = Field(description="restarts within the restart window")
    restart_budget_left: int
    last_crash: str | None
    pids: dict[str, int | None]
    sclang: str
    cpu: float | None = Field(description="scsynth's /status average CPU, percent: on JACK "
                              "that is jack_cpu_load, the whole JACK server's DSP load, which "
                              "every room on this jackd reads alike")
    scsynth_cpu: float | None = Field(description="scsynth's own process CPU since the last "
                                      "look, % of one core (None: first look)")
    peak_cpu: float | None
    synths: int | None
    nodes: list[NodeLive]
    patterns: list[PatternLive] = Field(description=f"the playing ones first, at most "
                                        f"{PATTERNS_SHOWN}")
    patterns_more: int = Field(0, description="patterns left out (`playing` lists them all)")
    meter: Meter | None = Field(description="None: nobody meters it, or no report lately")
    history: list[tuple[int, float, float]] = Field(
        description="the level of the last minutes: (Unix second, loudest peak, RMS), dBFS")
    stage: dict[str, Any] | None = Field(None, description="the safety stage (status's "
                                         "stage): enabled false is pointed out")
    sound: str | None = Field(None, description="what the sound watch hears (status's sound)")


class EventLive(BaseModel):
    """A lifecycle event."""

    seq: int
    time: float
    room: str
    kind: str
    message: str
    trouble: bool


class HostLive(BaseModel):
    """A host of an installation across several, as this scorch reaches it."""

    name: str
    state: str | None = Field(description="CONNECTED, NOT_RUNNING, UNREACHABLE or CONNECTING; "
                              "None: not known here (a host's own scorch run sees no link)")
    reason: str | None = Field(None, description="why it is not CONNECTED")


class LiveView(Result):
    """Everything the page and the panel show."""

    time: float
    config: str | None
    hosted_by: str
    started_at: float | None
    this_host: str | None
    hosts: list[HostLive] = Field(description="the installation's hosts (several hosts)")
    audio: str | None
    xruns_last_minute: int = Field(description="xruns the JACK server reported in the last "
                                   "minute: the whole server's, every room shares it "
                                   "(scsynth does not count its own)")
    rooms: list[RoomLive]
    tempo: dict[str, Any] | None
    midi: dict[str, Any] | None = Field(description="None: MIDI is off; else the router's "
                                        "counters, notes per input and how far it took the "
                                        "change bus")
    events: list[EventLive]
    seq: int = Field(0, description="the last change of the change bus this view answers: "
                     "ask live again with since = seq for the next")
    changes: list[dict[str, Any]] = Field(
        default_factory=list, description="the changes after `since`, once each and in order "
        "(seq, at, kind and its fields: docs/architecture.md)")

    def text(self) -> str:
        lines = [f"{r.name}: {r.state}, restarts {r.restarts}" for r in self.rooms]
        return "\n".join(lines)


def meters_now(orch: Orchestra, now: float | None = None) -> dict[str, Meter | None]:
    """Each room's meter now (None: no fresh report)."""
    now = time.time() if now is None else now
    found: dict[str, Meter | None] = {}
    for name in orch.rooms.names():
        last = orch.meters.levels(name).last(now)
        found[name] = Meter(peak=list(last.peak), rms=list(last.rms)) if last else None
    return found


def hosts_of(status: dict[str, Any], configured: Iterable[str]) -> list[HostLive]:
    """The hosts with their link's state where the status has it (a coordinator's)."""
    linked = [HostLive(name=h["name"] or "(no host)", state=h["state"], reason=h["reason"])
              for h in status.get("hosts") or []]
    return linked or [HostLive(name=name, state=None) for name in sorted(configured)]


class ProcessCpu:
    """Each process's CPU between two looks, % of one core (any thread)."""

    def __init__(self, read: Callable[[int | None], float | None] = cpu_seconds) -> None:
        self._read = read
        self._lock = threading.Lock()
        self._looks: dict[int, tuple[float, float, float | None]] = {}
        """pid -> (when, CPU seconds used then, the rate answered last)."""

    def percent(self, pid: int | None, now: float) -> float | None:
        """``pid``'s CPU since the last look at least :data:`CPU_SPAN` ago (None: first look)."""
        used = self._read(pid) if pid is not None else None
        with self._lock:
            if pid is None or used is None:
                self._looks.pop(pid or 0, None)
                return None
            for gone in [p for p, look in self._looks.items() if now - look[0] > 60.0]:
                del self._looks[gone]  # pids of processes that ended
            was = self._looks.get(pid)
            if was is not None and now - was[0] < CPU_SPAN:
                return was[2]
            rate = None if was is None else round(100.0 * (used - was[1]) / (now - was[0]), 1)
            self._looks[pid] = (now, used, rate)
            return rate


#: scsynth's CPU as the views see it, shared by the page's and the panel's.
_PROCESS_CPU = ProcessCpu()


def pattern_params(source: str, limit: int = PARAMS_SHOWN) -> dict[str, str]:
    """The main params of a pattern's source: its keys with a literal value, first ones first."""
    body = _NAMED.sub("", source, count=1)  # Pbindef(\\name, ...): the name is no param
    found: dict[str, str] = {}
    for match in _PAIR.finditer(body):
        inside = body[:match.start()]
        if inside.count("[") > inside.count("]"):
            continue  # a list's items (Pseq([\\a, \\b])) are values, not keys
        if len(found) >= limit:
            break
        found.setdefault(match[1] or match[2], match[3].strip("\\'"))
    return found


def xruns_since(lines: Iterable[tuple[float, str]], since: float) -> int:
    """How many of jackd's lines (time, text) from ``since`` on report an xrun."""
    return sum(1 for at, text in lines if at >= since and XRUN.search(text))


def _xruns(orch: Orchestra, now: float) -> int:
    lines = ((line.time, line.text) for line in orch.jack_console.tail(1000))
    return xruns_since(lines, now - XRUN_WINDOW)


def shown_patterns(view: Any) -> tuple[list[PatternLive], int]:
    """The room's patterns to show, the playing ones first, and how many are left out."""
    times = view.pattern_times
    records = sorted(view.patterns.values(), key=lambda p: not p.playing)
    return [PatternLive(kind=p.kind, name=p.name, playing=p.playing, quant=p.quant_in_force,
                        mute=p.mute, last_event=times.get(p.key), params=pattern_params(p.text),
                        source=short(p.text))
            for p in records[:PATTERNS_SHOWN]], max(0, len(records) - PATTERNS_SHOWN)


def _midi(orch: Orchestra) -> dict[str, Any] | None:
    if orch.midi.error is not None:
        return None
    try:
        stats = orch.midi.stats()
    except ScorchError:
        return None
    keep = ("notes_on", "notes_off", "voices", "sent", "errors", "inputs")
    shown = {key: stats[key] for key in keep if key in stats}
    if (bus := stats.get("bus")) is not None:  # how far it is behind the rooms' changes
        shown["bus"] = {key: bus[key] for key in ("offered", "done", "taken", "missed",
                                                       "failed")}
    return plain(shown)


def _ranges(orch: Orchestra, synthdef: str) -> dict[str, tuple[float, float, str]]:
    try:
        params = orch.library.info(synthdef).params
    except ScorchError:
        return {}
    return {p.name: (p.minval, p.maxval, p.warp) for p in params}


def live_view(service: Caller, orch: Orchestra) -> LiveView:
    """The whole view now, from the operations and this process's meters."""
    now = time.time()
    seq = orch.bus.seq  # before the reads: a change made while they run comes again
    status = service.call("status", {}).model_dump()
    events = service.call("events", {}).model_dump()["events"][-EVENTS_SHOWN:]
    try:
        tempo: dict[str, Any] | None = service.call("tempo", {}).model_dump()
    except ScorchError:
        tempo = None
    meters = meters_now(orch, now)
    rooms = []
    for inst in status["instances"]:
        name = inst["name"]
        server = inst.get("server") or {}
        view = orch.rooms.view(name)
        synths = server.get("synths")
        if synths and meters.get(name) is not None:
            synths -= 1  # the meter is scorch's, not the room's
        stage = inst.get("stage")
        if synths and stage and stage["enabled"]:
            synths -= 1  # so is the safety stage
        patterns, more = shown_patterns(view)
        rooms.append(RoomLive(
            name=name, group=inst["group"], state=inst["state"], since=inst["since"],
            reason=inst["reason"], uptime=inst["uptime"], restarts=inst["restarts_in_window"],
            restart_budget_left=inst["restart_budget_left"], last_crash=inst["last_crash"],
            pids=inst["pids"], sclang=inst["sclang"], cpu=server.get("avg_cpu"),
            scsynth_cpu=_PROCESS_CPU.percent(inst["pids"].get("scsynth"), now),
            peak_cpu=server.get("peak_cpu"), synths=synths,
            nodes=[NodeLive(name=n, **info, ranges=_ranges(orch, info["synthdef"]))
                   for n, info in inst["nodes"].items()],
            patterns=patterns, patterns_more=more,
            meter=meters.get(name), history=orch.meters.levels(name).history(now),
            stage=stage, sound=inst.get("sound")))
    config = orch.config
    return LiveView(
        time=now, config=str(config.source) if config.source else None,
        hosted_by=orch.hosted_by, started_at=orch.started_at, this_host=config.host,
        hosts=hosts_of(status, config.hosts), audio=(status.get("audio") or {}).get("summary"),
        xruns_last_minute=_xruns(orch, now), rooms=rooms, tempo=tempo, midi=_midi(orch),
        seq=seq,
        events=[EventLive(seq=e["seq"], time=e["time"], room=e["instance"], kind=e["kind"],
                          message=e["message"], trouble=e["kind"] in TROUBLE) for e in events])
