"""The SynthDef that meters a room's outputs inside scsynth, written as bytes (no sclang).

``scorch_meter_N``: ``SendPeakRMS.kr(In.ar(bus, N), rate, 3, '/scorch_meter')``.
scsynth measures every sample of the N buses and sends each registered client
``[/scorch_meter, node, -1, peak1, rms1, peak2, rms2, ...]`` ``rate`` times a
second; Python never touches the audio. One synth per room, at the tail of the
root group so that it hears every node of the room, runs only while someone
watches (``scorch.app.meters``).
"""

from __future__ import annotations

from scorch.primitives.osc import OscMessage
from scorch.primitives.synthdefs.scgf import AUDIO, CONTROL, UGen, synthdef

#: The OSC address of the replies.
METER_REPLY = "/scorch_meter"
#: The most output channels one meter reads.
MAX_CHANNELS = 128
#: How many times a second a meter reports, by default and at most.
DEFAULT_RATE, MAX_RATE = 15.0, 50.0
_PEAK_LAG = 3.0  # s: SendPeakRMS's peak hold decay, sclang's default


def meter_name(channels: int) -> str:
    """The name of the SynthDef that meters ``channels`` buses."""
    if not 1 <= channels <= MAX_CHANNELS:
        raise ValueError(f"a meter reads 1 to {MAX_CHANNELS} channels, not {channels}")
    return f"scorch_meter_{channels}"


def meter_synthdef(channels: int) -> bytes:
    """``scorch_meter_N``: params ``bus`` (the first bus read) and ``rate`` (replies/s)."""
    name = meter_name(channels)
    ascii_codes = [float(c) for c in METER_REPLY.encode("ascii")]
    # SendPeakRMS's inputs: rate, peak lag, reply id, N, the N signals, cmd length, cmd chars.
    constants: list[float] = []

    def const(value: float) -> tuple[int, int]:
        if value not in constants:
            constants.append(value)
        return (-1, constants.index(value))

    inputs = ((0, 1), const(_PEAK_LAG), const(-1.0), const(float(channels)),
              *((1, i) for i in range(channels)), const(float(len(ascii_codes))),
              *(const(code) for code in ascii_codes))
    return synthdef(name, ("bus", "rate"), tuple(constants), [
        UGen("Control", CONTROL, (), 2),
        UGen("In", AUDIO, ((0, 0),), channels),
        UGen("SendPeakRMS", CONTROL, inputs, 0),
    ], defaults=(0.0, DEFAULT_RATE))


def levels(msg: OscMessage) -> tuple[int, list[float], list[float]] | None:
    """A reply's node id, peaks and RMS per channel; None for anything malformed."""
    args = msg.args
    if msg.address != METER_REPLY or len(args) < 4 or len(args) % 2:
        return None
    if not all(isinstance(a, (int, float)) and not isinstance(a, bool) for a in args):
        return None
    values = [float(a) for a in args[2:] if isinstance(a, (int, float))]
    node = args[0]
    return int(node) if isinstance(node, (int, float)) else -1, values[0::2], values[1::2]
