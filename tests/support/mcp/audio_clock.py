"""How fast a room's audio clock runs against the wall clock, for tests that time a beat.

sclang stamps its bundles by the wall clock and scsynth plays them there, but a file
counts samples: a dummy JACK driver on a loaded machine runs slow (0.6 to 0.95 of wall
time were measured on two shared cores), and a beat then spans fewer samples. A synth
tells its clock 50 times a second; the slope of its times against the wall's is the pace.
"""

from __future__ import annotations

import statistics
import time

from scorch.primitives.scsynth.client import OscClient

#: The onset analysis' resolution: its flux frames step by a quarter of a 2048-sample window
#: at 48 kHz (scorch/audio/onsets.py); each onset is then placed to the ms.
ONSET_HOP = 2048 / 4 / 48_000
#: The reply the clock synth sends.
ADDRESS = "/testpace"
#: sclang code that starts the clock synth as ``~testpace`` (free it after).
START = ("~testpace = SynthDef(\\testpace, { SendReply.kr(Impulse.kr(50), '/testpace', "
         "Sweep.kr(0, 1)) }).play; 1")
STOP = "~testpace.free; 1"


def listen_to(osc: OscClient) -> list[tuple[float, float]]:
    """A list that gathers (wall time, audio time) of each reply from now on (clear it to
    start again; pop ``osc.listeners[ADDRESS]`` to stop)."""
    ticks: list[tuple[float, float]] = []
    osc.listeners[ADDRESS] = lambda m: ticks.append(
        (time.time(), float(m.args[2])))  # type: ignore[arg-type]
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
