"""The harness the MIDI tests and benchmark stand on (``tests/support/harness.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorch.primitives.system.jackd import wait_for_server
from tests.conftest import jack_name
from tests.support.harness import (
    PARAM_DEF,
    VOICE_DEF,
    Scsynth,
    compile_test_synthdefs,
    jack_server,
    needs_tools,
)

pytestmark = [pytest.mark.integration, needs_tools]


def test_harness_starts_and_stops_jack_and_scsynth(tmp_path: Path) -> None:
    defs = compile_test_synthdefs(tmp_path / "defs")
    assert (defs / f"{VOICE_DEF}.scsyndef").exists()
    with jack_server(jack_name("harness")) as jack:
        assert wait_for_server(jack, 1.0, lambda: True)
        server = Scsynth(jack, defs, "harness")
        try:
            server.call("/s_new", PARAM_DEF, 1000, 0, 1, "cutoff", 500.0)
            assert server.param(1000, "cutoff") == 500.0
            assert server.synths() == 1
        finally:
            server.close()
        assert not server.alive()
    assert not wait_for_server(jack, 0.01, lambda: True)


def test_a_jack_name_another_server_holds_is_skipped() -> None:
    with jack_server(jack_name("harness")) as first, jack_server(jack_name("harness")) as second:
        assert first != second
        assert wait_for_server(second, 1.0, lambda: True)
