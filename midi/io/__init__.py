"""MIDI I/O: one port contract (:mod:`midi.io.ports`) and backends chosen by name
(:mod:`midi.io.backends`: python-rtmidi, scorch's own JACK input client), each imported
only when a port opens. The rest of ``midi/`` is pure: no threads, sockets or devices."""

from midi.io.backends import INPUT_ENV, KNOWN, names, offered, open_backend, open_inputs
from midi.io.ports import (
    Backend,
    InputPort,
    Inputs,
    OutputPort,
    Patchbay,
    Scanner,
    Wake,
    find_port,
    own_port,
)

__all__ = ["INPUT_ENV", "KNOWN", "Backend", "InputPort", "Inputs", "OutputPort", "Patchbay",
           "Scanner", "Wake", "find_port", "names", "offered", "open_backend", "open_inputs",
           "own_port"]
