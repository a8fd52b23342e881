"""The SynthDefs that capture sound to disk inside scsynth, written as bytes (no sclang).

DiskOut's channel count is fixed when a SynthDef is built, so there is one
SynthDef per count, made on demand here in scsynth's own binary format
(``SCgf`` version 2, see SuperCollider's "Synth Definition File Format"); the
bytes are those sclang writes for the same graph:

- ``scorch_record_N``: ``DiskOut.ar(buf, In.ar(bus, N))`` for ``seconds``, then
  frees itself (``Line.kr(0, 1, seconds, doneAction: 2)``): the length is counted
  in control blocks by scsynth itself, not timed from outside.
- ``scorch_pass_N``: ``Out.ar(out, In.ar(bus, N))``: while a node's output is
  moved to a private bus to be recorded alone, this passes it on to where it went.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

#: The most channels one capture takes.
MAX_CHANNELS = 32

_CONTROL, _AUDIO = 1, 2
_FREE_SELF = 2.0  # Line's doneAction: free the synth


@dataclass(frozen=True)
class _UGen:
    name: str
    rate: int
    inputs: tuple[tuple[int, int], ...]
    """(ugen index, output index), or (-1, constant index)."""
    outputs: int


def record_name(channels: int) -> str:
    """The name of the SynthDef that records ``channels`` channels from a bus."""
    return f"scorch_record_{_check(channels)}"


def pass_name(channels: int) -> str:
    """The name of the SynthDef that copies ``channels`` channels from one bus to another."""
    return f"scorch_pass_{_check(channels)}"


def record_synthdef(channels: int) -> bytes:
    """``scorch_record_N``: params ``buf``, ``bus``, ``seconds``."""
    sound = tuple((1, i) for i in range(channels))
    return _synthdef(record_name(channels), ("buf", "bus", "seconds"), (0.0, 1.0, _FREE_SELF), [
        _UGen("Control", _CONTROL, (), 3),
        _UGen("In", _AUDIO, ((0, 1),), channels),
        _UGen("DiskOut", _AUDIO, ((0, 0), *sound), 1),
        _UGen("Line", _CONTROL, ((-1, 0), (-1, 1), (0, 2), (-1, 2)), 1),
    ])


def pass_synthdef(channels: int) -> bytes:
    """``scorch_pass_N``: params ``bus`` (read) and ``out`` (written)."""
    sound = tuple((1, i) for i in range(channels))
    return _synthdef(pass_name(channels), ("bus", "out"), (), [
        _UGen("Control", _CONTROL, (), 2),
        _UGen("In", _AUDIO, ((0, 0),), channels),
        _UGen("Out", _AUDIO, ((0, 1), *sound), 0),
    ])


def _check(channels: int) -> int:
    if not 1 <= channels <= MAX_CHANNELS:
        raise ValueError(f"a capture takes 1 to {MAX_CHANNELS} channels, not {channels}")
    return channels


def _synthdef(name: str, params: tuple[str, ...], constants: tuple[float, ...],
              ugens: list[_UGen]) -> bytes:
    out = bytearray(b"SCgf" + struct.pack(">iH", 2, 1))
    out += _pstring(name)
    out += struct.pack(f">i{len(constants)}f", len(constants), *constants)
    out += struct.pack(f">i{len(params)}f", len(params), *[0.0] * len(params))
    out += struct.pack(">i", len(params))
    for index, param in enumerate(params):
        out += _pstring(param) + struct.pack(">i", index)
    out += struct.pack(">i", len(ugens))
    for ugen in ugens:
        out += _pstring(ugen.name)
        out += struct.pack(">biih", ugen.rate, len(ugen.inputs), ugen.outputs, 0)
        for source, index in ugen.inputs:
            out += struct.pack(">ii", source, index)
        out += bytes([ugen.rate]) * ugen.outputs
    out += struct.pack(">h", 0)  # no variants
    return bytes(out)


def _pstring(text: str) -> bytes:
    data = text.encode("ascii")
    return bytes([len(data)]) + data
