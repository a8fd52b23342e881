"""The MIDI backends' registry: names, refusals, and which backend the inputs open through."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from midi.io import INPUT_ENV, KNOWN, Inputs, Scanner, Wake, names, open_backend, open_inputs
from midi.io.backends import OWN
from scorch.errors import MidiBackendError

BACKENDS = Path(__file__).resolve().parents[3] / "midi" / "io" / "backends"


class FakeScanner:
    """Lists a fixed set of ports."""

    def __init__(self, ports: list[str]) -> None:
        self.ports = ports

    def get_ports(self) -> list[str]:
        return list(self.ports)

    def delete(self) -> None:
        self.ports = []


class FakeBackend:
    """A whole backend on one API that opens nothing: what the choice of inputs is told."""

    name = "rtmidi"
    wakes = False
    tells_ports = False

    def __init__(self, api: str) -> None:
        self.api = api
        self.scan_in: Scanner = FakeScanner(["keys:out"])
        self.scan_out: Scanner = FakeScanner(["synth:in"])

    def open_input(self, name: str, client: str, timing: bool = False) -> object:
        raise AssertionError("the choice of inputs opens no port")

    open_virtual = open_output = open_input

    def close(self) -> None:
        pass


def test_every_backend_is_a_module_here_with_an_open_and_what_it_offers() -> None:
    assert names() == ["rtmidi", "scorch_jack"]
    for name in names():
        module = KNOWN[name].module
        assert (BACKENDS / f"{module.rsplit('.', 1)[1]}.py").is_file()
        loaded = importlib.import_module(module)
        assert callable(loaded.open) and isinstance(loaded.offered(), list)
    assert "jack" in importlib.import_module(KNOWN["rtmidi"].module).offered()


@given(st.text(max_size=40).filter(lambda t: t.partition("/")[0] not in KNOWN))
def test_an_unknown_backend_is_refused_with_every_known_name(name: str) -> None:
    with pytest.raises(MidiBackendError) as refused:
        open_backend(name, "scorchtest")
    message = str(refused.value)
    assert repr(name.partition("/")[0]) in message
    assert all(known in message for known in names())
    assert refused.value.code == "PROCESS_ERROR"


def test_a_backend_of_inputs_only_opens_no_outputs() -> None:
    with pytest.raises(MidiBackendError, match=r"'scorch_jack' offers inputs only.*rtmidi"):
        open_backend("scorch_jack", "scorchtest")


def test_an_unknown_rtmidi_api_names_the_apis() -> None:
    with pytest.raises(MidiBackendError, match=r"no MIDI API 'oss'.*auto, alsa, jack"):
        open_backend("rtmidi/oss", "scorchtest")


@pytest.mark.parametrize(("chosen", "api", "wake"), [
    (None, "alsa", True),        # off JACK: the whole backend's inputs
    (None, "jack", False),       # no eventfd to wake the reader
    (OWN, "coremidi", True),
    ("rtmidi", "jack", True),    # named: rtmidi's queues even on JACK (the benchmark's "poll")
    ("scorch_jack", "alsa", True),  # named, but it runs on JACK only: the whole backend's
])
def test_the_inputs_open_through_the_whole_backend_unless_scorchs_own_runs(
        monkeypatch: pytest.MonkeyPatch, chosen: str | None, api: str, wake: bool) -> None:
    if chosen is None:
        monkeypatch.delenv(INPUT_ENV, raising=False)
    else:
        monkeypatch.setenv(INPUT_ENV, chosen)
    whole = FakeBackend(api)
    bell = Wake() if wake else None
    try:
        inputs: Inputs = open_inputs(whole, "scorchtest", None, bell)  # type: ignore[arg-type]
    finally:
        if bell is not None:
            bell.close()
    assert inputs is whole


def test_an_unknown_input_backend_in_the_environment_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(INPUT_ENV, "portmidi")
    with pytest.raises(MidiBackendError, match="'portmidi'; backends are: rtmidi, scorch_jack"):
        open_inputs(FakeBackend("jack"), "scorchtest")  # type: ignore[arg-type]


def test_rtmidis_listing_failures_are_scorchs_and_name_the_side() -> None:
    rtmidi_backend = importlib.import_module(KNOWN["rtmidi"].module)
    library = importlib.import_module("rtmidi")

    class Gone:
        """An rtmidi client whose driver went away (the ALSA sequencer, say)."""

        def get_ports(self) -> list[str]:
            raise library.SystemError("MidiInAlsa::getPortCount: error")

    with pytest.raises(MidiBackendError, match="MIDI inputs could not be listed: MidiInAlsa"):
        rtmidi_backend._Listing(Gone(), "inputs").get_ports()
