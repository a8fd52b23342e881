"""SynthDefs written as bytes in scsynth's own ``SCgf`` version 2 format (no sclang).

See SuperCollider's "Synth Definition File Format": constants, params with their
defaults and names, then each UGen with its rate, inputs and outputs. scorch's own
small SynthDefs (captures, meters) are built with it, so they need no sclang.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

SCALAR, CONTROL, AUDIO = 0, 1, 2


@dataclass(frozen=True)
class UGen:
    """One UGen of a graph."""

    name: str
    rate: int
    inputs: tuple[tuple[int, int], ...]
    """(ugen index, output index), or (-1, constant index)."""
    outputs: int
    special: int = 0
    """The operator of a UnaryOpUGen or BinaryOpUGen (sclang's ``specialIndex``)."""


def synthdef(name: str, params: tuple[str, ...], constants: tuple[float, ...],
             ugens: list[UGen], defaults: tuple[float, ...] | None = None) -> bytes:
    """The bytes of one SynthDef (params default to 0 unless ``defaults`` says)."""
    values = defaults if defaults is not None else (0.0,) * len(params)
    out = bytearray(b"SCgf" + struct.pack(">iH", 2, 1))
    out += _pstring(name)
    out += struct.pack(f">i{len(constants)}f", len(constants), *constants)
    out += struct.pack(f">i{len(params)}f", len(params), *values)
    out += struct.pack(">i", len(params))
    for index, param in enumerate(params):
        out += _pstring(param) + struct.pack(">i", index)
    out += struct.pack(">i", len(ugens))
    for ugen in ugens:
        out += _pstring(ugen.name)
        out += struct.pack(">biih", ugen.rate, len(ugen.inputs), ugen.outputs, ugen.special)
        for source, index in ugen.inputs:
            out += struct.pack(">ii", source, index)
        out += bytes([ugen.rate]) * ugen.outputs
    out += struct.pack(">h", 0)  # no variants
    return bytes(out)


def _pstring(text: str) -> bytes:
    data = text.encode("ascii")
    return bytes([len(data)]) + data


def param_names(data: bytes) -> list[str]:
    """The named controls of the first SynthDef in SCgf bytes (version 1 or 2), in their
    order; ValueError when the bytes are not a SynthDef file."""
    try:
        if data[:4] != b"SCgf":
            raise ValueError("not a SynthDef file (no SCgf header)")
        (version,) = struct.unpack_from(">i", data, 4)
        if version not in (1, 2):
            raise ValueError(f"SynthDef file version {version}: only 1 and 2 are read")
        count = ">i" if version == 2 else ">h"
        size = struct.calcsize(count)
        position = 10 + 1 + data[10]  # the def count, then the first def's name
        for _ in range(2):  # constants, then the params' initial values
            (n,) = struct.unpack_from(count, data, position)
            position += size + 4 * n
        (n,) = struct.unpack_from(count, data, position)
        position += size
        named: list[tuple[int, str]] = []
        for _ in range(n):
            length = data[position]
            name = data[position + 1:position + 1 + length].decode("ascii")
            (index,) = struct.unpack_from(count, data, position + 1 + length)
            named.append((index, name))
            position += 1 + length + size
    except (IndexError, struct.error, UnicodeDecodeError) as err:
        raise ValueError(f"not a readable SynthDef file: {err}") from err
    return [name for _, name in sorted(named)]
