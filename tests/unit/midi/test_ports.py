"""Port naming rules that need no MIDI backend."""

from __future__ import annotations

import pytest

from midi.io.ports import own_port


@pytest.mark.parametrize(
    ("port", "ours"),
    [("scorch:scorch", True), ("scorch-in:in", True), ("scorch-scan:x", True),
     ("scorcher:out 1", False), ("scorchtest-hw:knobs", False), ("nanoKONTROL2:0", False)],
)
def test_only_scorchs_own_clients_count_as_its_own_ports(port: str, ours: bool) -> None:
    assert own_port(port, "scorch") is ours
