"""How fast a room's audio clock runs against the wall clock, for tests that time a beat.

sclang stamps its bundles by the wall clock and scsynth plays them there, but a file
counts samples: a dummy JACK driver on a loaded machine runs slow (0.6 to 0.95 of wall
time were measured on two shared cores), and a beat then spans fewer samples. A synth
tells its clock 50 times a second; the slope of its times against the wall's is the pace.
"""

from __future__ import annotations

import statistics
import time

from mcp import Client
from mcp.types import CallToolResult

from scorch.primitives.scsynth.door import ScsynthDoor
from tests.support.mcp.calls import call

#: The onset analysis' resolution: its flux frames step by a quarter of a 2048-sample window
#: at 48 kHz (scorch/audio/onsets.py); each onset is then placed to the ms.
ONSET_HOP = 2048 / 4 / 48_000
#: The reply the clock synth sends.
ADDRESS = "/testpace"
#: sclang code that starts the clock synth as ``~testpace`` (free it after).
START = ("~testpace = SynthDef(\\testpace, { SendReply.kr(Impulse.kr(50), '/testpace', "
         "Sweep.kr(0, 1)) }).play; 1")
STOP = "~testpace.free; 1"


def listen_to(door: ScsynthDoor) -> list[tuple[float, float]]:
    """A list that gathers (wall time, audio time) of each reply from now on (clear it to
    start again; ``door.unlisten(ADDRESS)`` to stop)."""
    ticks: list[tuple[float, float]] = []
    door.listen(ADDRESS, lambda m: ticks.append(
        (time.time(), float(m.args[2]))))  # type: ignore[arg-type]
    return ticks


def pace_of(ticks: list[tuple[float, float]], span: float | None = None) -> float:
    """Seconds of the audio clock per second of wall time: the least-squares slope of
    ``ticks``, of the first ``span`` seconds of audio time when given."""
    if span is not None:
        ticks = [t for t in ticks if t[1] <= ticks[0][1] + span]
    wall = statistics.fmean(t for t, _ in ticks)
    audio = statistics.fmean(a for _, a in ticks)
    return sum((t - wall) * (a - audio) for t, a in ticks) / sum(
        (t - wall) ** 2 for t, _ in ticks)


async def listened(client: Client, door: ScsynthDoor, room: str, seconds: float
                   ) -> tuple[CallToolResult, float]:
    """``listen`` to ``room`` through MCP while a clock synth there tells its pace (``door``:
    the room's); the answer, and the pace the room's audio clock kept meanwhile."""
    ticks = listen_to(door)
    await call(client, "execute", instance=room, code=START)
    try:
        ticks.clear()
        heard = await client.call_tool("listen", {"instance": room, "seconds": seconds})
        assert len(ticks) > 25, ticks
        return heard, pace_of(ticks, span=seconds + 0.2)
    finally:
        await call(client, "execute", instance=room, code=STOP)
        door.unlisten(ADDRESS)


def period(onsets: list[float], apart: float = 0.0) -> float:
    """The mean time from one of ``onsets`` to the next over their span (a stalled cycle
    moves single ones), leaving out one at 0 (where listening began) and counting those
    closer than ``apart`` to the one before as one (two sounds of one beat)."""
    kept: list[float] = []
    for t in onsets:
        if t > ONSET_HOP and (not kept or t - kept[-1] > apart):
            kept.append(t)
    assert len(kept) >= 3, onsets
    return (kept[-1] - kept[0]) / (len(kept) - 1)


def off_beat(heard: float, nominal: float, pace: float) -> float:
    """How far a period ``heard`` in a file lies from ``nominal`` seconds at the audio
    clock's ``pace``, or at the wall's: the pace is read from replies this process took,
    and a reply read late on a loaded machine skews it (1.057 was read once, the beat on
    time)."""
    return min(abs(heard - nominal * pace), abs(heard - nominal))
