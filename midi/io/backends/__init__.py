"""MIDI backends by name, each a module imported only when a port opens.

A name is ``backend`` or ``backend/api`` (``rtmidi/jack``: python-rtmidi's JACK
API; ``[midi] backend`` in the config names the API). Each module offers
``open(api, client, jack_server, wake)``, which returns the contract's
:class:`~midi.io.ports.Backend` (inputs, outputs, listing) or, for a backend of
inputs only, its :class:`~midi.io.ports.Inputs`.

The router's inputs come from the backend :data:`INPUT_ENV` names, by default
scorch's own JACK client where it runs (on JACK, with an eventfd and a C
compiler), else the whole backend's (rtmidi's queues, polled).
"""

from __future__ import annotations

import importlib
import logging
import os
from typing import NamedTuple, Protocol, cast

from midi.io.ports import Backend, Inputs, Wake
from scorch.errors import MidiBackendError

log = logging.getLogger(__name__)


class Known(NamedTuple):
    """One backend: its module, and whether it offers outputs."""

    module: str
    outputs: bool
    """It lists ports and opens outputs too (a :class:`Backend`), not inputs only."""


#: Every backend by name.
KNOWN: dict[str, Known] = {
    # python-rtmidi: ALSA, JACK, CoreMIDI or WinMM (auto: the platform's own)
    "rtmidi": Known("midi.io.backends.rtmidi", outputs=True),
    # scorch's own JACK MIDI input client (jack_in.c): inputs that wake their reader
    "scorch_jack": Known("midi.io.backends.scorch_jack", outputs=False),
}
#: The environment variable that names the backend of the router's inputs (read as a
#: router opens its ports; the benchmark compares them). ``own``, the default: scorch's
#: own JACK client where it runs.
INPUT_ENV = "SCORCH_MIDI_INPUT"
OWN = "own"

__all__ = ["INPUT_ENV", "KNOWN", "OWN", "Known", "names", "offered", "open_backend",
           "open_inputs"]


class _Module(Protocol):
    """What every backend module offers."""

    def open(self, api: str | None, client: str, jack_server: str | None,
             wake: Wake | None) -> Inputs: ...

    def offered(self) -> list[str]: ...


def names() -> list[str]:
    """Every backend's name."""
    return sorted(KNOWN)


def _split(name: str) -> tuple[Known, str, str | None]:
    base, _, api = name.partition("/")
    known = KNOWN.get(base)
    if known is None:
        raise MidiBackendError(f"no MIDI backend is called {base!r}; backends are: "
                               f"{', '.join(names())}")
    return known, base, api or None


def _open(name: str, client: str, jack_server: str | None, wake: Wake | None,
          api: str | None = None) -> Inputs:
    known, _, named_api = _split(name)
    return _module(known).open(named_api or api, client, jack_server, wake)


def _module(known: Known) -> _Module:
    return cast(_Module, importlib.import_module(known.module))


def offered(name: str) -> list[str]:
    """The systems backend ``name`` can open on here (ImportError: its library is missing)."""
    return _module(_split(name)[0]).offered()


def open_backend(name: str, client: str, jack_server: str | None = None,
                 wake: Wake | None = None) -> Backend:
    """Open the whole backend ``name`` (``rtmidi/jack``); its clients are called ``client-*``.

    ``jack_server`` is the JACK server a JACK backend joins (None: the default one).
    """
    known, base, _ = _split(name)
    if not known.outputs:
        raise MidiBackendError(f"MIDI backend {base!r} offers inputs only; backends with "
                               f"outputs: {', '.join(n for n in names() if KNOWN[n].outputs)}")
    return cast(Backend, _open(name, client, jack_server, wake))


def open_inputs(whole: Backend, client: str, jack_server: str | None = None,
                wake: Wake | None = None) -> Inputs:
    """The backend the router's inputs open through, beside ``whole`` (its listing).

    :data:`INPUT_ENV` names it; by default (``own``) scorch's own JACK client when
    ``whole`` is on JACK and it runs here, else ``whole`` itself.
    """
    chosen = os.environ.get(INPUT_ENV, OWN)
    if chosen == OWN:
        if whole.api != "jack" or wake is None:
            return whole
        chosen = "scorch_jack"
    _, base, _ = _split(chosen)
    if base == whole.name:
        return whole
    try:
        return _open(chosen, client, jack_server, wake, whole.api)
    except MidiBackendError as err:
        log.info("MIDI inputs through %s: %s", whole.name, err)
        return whole
