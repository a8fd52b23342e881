"""The [midi] config models: defaults, and readable refusals."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from midi.schema import ControlRoute, KeyRoute, MidiConfig

BASE = {"instance": "lobby", "node": "drone", "param": "cutoff"}


def test_defaults_need_no_config():
    config = MidiConfig()
    assert (config.backend, config.virtual_port, config.controls, config.keys) == (
        "auto", "scorch", (), ()
    )


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "exactly one of control, cc, nrpn, pitchbend, aftertouch, note \\(found: none\\)"),
        ({"cc": 1, "pitchbend": True}, "found: cc, pitchbend"),
        ({"cc": 128}, "less than or equal to 127"),
        ({"cc": 40, "hires": True}, "cc must be 0-31, got 40"),
        ({"cc": 1, "channel": 0}, "greater than or equal to 1"),
        ({"cc": 1, "channel": 17}, "less than or equal to 16"),
        ({"cc": 1, "curve": "exp"}, "does not cross or touch 0"),
        ({"cc": 1, "curve": "bendy"}, "unknown curve"),
        ({"cc": 1, "takeover": "jump"}, "immediate"),
        ({"nrpn": 3, "relative": "signed_bit"}, "relative encodings apply to cc"),
        ({"cc": 1, "colour": "red"}, "Extra inputs are not permitted"),
    ],
)
def test_control_route_refuses_bad_fields_with_a_reason(fields, message):
    with pytest.raises(ValidationError, match=message):
        ControlRoute(**BASE, **fields)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"notes": (60, 40)}, "0 <= low <= high <= 127"),
        ({"notes": (0, 128)}, "0 <= low <= high <= 127"),
        ({"voices": 0}, "greater than or equal to 1"),
        ({"params": {"freq": 3}}, "set by the router"),
    ],
)
def test_key_route_refuses_bad_fields_with_a_reason(fields, message):
    with pytest.raises(ValidationError, match=message):
        KeyRoute(instance="lobby", synthdef="pluck", **fields)


def test_route_ids_must_be_unique():
    route = ControlRoute(**BASE, cc=1, id="same")
    with pytest.raises(ValidationError, match="repeated: \\['same'\\]"):
        MidiConfig(controls=(route, route))


def test_models_are_frozen():
    route = ControlRoute(**BASE, cc=1)
    with pytest.raises(ValidationError):
        route.cc = 2  # type: ignore[misc]
    assert route.kind == "cc"
