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

from scorch.primitives.synthdefs.scgf import AUDIO as _AUDIO
from scorch.primitives.synthdefs.scgf import CONTROL as _CONTROL
from scorch.primitives.synthdefs.scgf import UGen as _UGen
from scorch.primitives.synthdefs.scgf import synthdef as _synthdef

#: The most channels one capture takes.
MAX_CHANNELS = 32

_FREE_SELF = 2.0  # Line's doneAction: free the synth


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
