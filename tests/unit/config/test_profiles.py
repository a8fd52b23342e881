"""Controller profiles: scorch's own files load, hostile ones are told where they are wrong."""

from __future__ import annotations

import contextlib
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from midi.controllers.feedback import encode
from scorch.config.profiles import BUILT_IN, load_profiles, parse_profile
from scorch.errors import ConfigError

REQUIRED = {"korg-nanokontrol2", "novation-launch-control-xl", "akai-apc-mini-mk2",
            "behringer-x-touch-mini", "arturia-beatstep", "novation-launchpad-mini-mk3",
            "generic"}

SMALL = """
name = "Tiny"
ports = ["tiny"]
[source]
title = "Tiny MIDI chart"
[[controls]]
name = "knob{n}"
count = 4
kind = "absolute"
number = 20
feedback = { message = "cc", channel = 2 }
[[controls]]
name = "play"
kind = "button"
message = "note"
number = 5
"""


def test_every_device_the_issue_names_has_a_profile_that_cites_its_source() -> None:
    profiles = load_profiles().all
    assert set(profiles) >= REQUIRED
    for profile in profiles.values():
        assert profile.source.title and profile.source.url, profile.id
        text = (BUILT_IN / f"{profile.id}.toml").read_text()
        assert profile.source.url in text


def test_a_group_of_controls_expands_into_named_controls_with_their_numbers() -> None:
    profile = parse_profile(SMALL, "tiny.toml")
    assert list(profile.controls) == ["knob1", "knob2", "knob3", "knob4", "play"]
    assert profile.controls["knob3"].key == ("cc", 0, 22)
    assert profile.controls["play"].key == ("note", 0, 5)
    feedback = profile.controls["knob4"].feedback
    assert feedback is not None and encode(feedback, 1.0) == bytes([0xB1, 23, 127])


@pytest.mark.parametrize(("port", "device"), [
    ("nanoKONTROL2:nanoKONTROL2 nanoKONTROL2 _ CTR 20:0", "korg-nanokontrol2"),
    ("a2j:Launch Control XL [24] (capture): Launch Control XL MIDI 1",
     "novation-launch-control-xl"),
    ("APC mini mk2 Control", "akai-apc-mini-mk2"),
    ("X-TOUCH MINI:X-TOUCH MINI MIDI 1 28:0", "behringer-x-touch-mini"),
    ("Arturia BeatStep:Arturia BeatStep MIDI 1 24:0", "arturia-beatstep"),
    ("Arturia BeatStep Pro:Arturia BeatStep Pro MIDI 1 24:0", "generic"),
    ("Launchpad Mini MK3:Launchpad Mini MK3 LPMiniMK3 MI 20:1",
     "novation-launchpad-mini-mk3"),
    ("Launchpad Mini MK3 LPMiniMK3 MIDI Out", "novation-launchpad-mini-mk3"),
    ("Some Keyboard:Some Keyboard MIDI 1", "generic"),
])
def test_a_port_is_recognised_by_its_name(port: str, device: str) -> None:
    profile = load_profiles().for_port(port)
    assert profile is not None and profile.id == device


@pytest.mark.parametrize(("device", "control", "position", "pending", "expected"), [
    ("korg-nanokontrol2", "solo3", 1.0, False, "b0 22 7f"),
    ("korg-nanokontrol2", "solo3", 0.2, False, "b0 22 00"),
    ("novation-launch-control-xl", "knob10", 0.7, False, "f0 00 20 29 02 11 78 08 09 2c f7"),
    ("novation-launch-control-xl", "knob10", 0.7, True, "f0 00 20 29 02 11 78 08 09 3b f7"),
    ("novation-launch-control-xl", "focus5", 1.0, False, "98 39 3c"),
    ("akai-apc-mini-mk2", "pad1", 1.0, False, "96 38 15"),
    ("akai-apc-mini-mk2", "pad64", 1.0, True, "9e 07 15"),
    ("akai-apc-mini-mk2", "track2", 1.0, False, "90 65 01"),
    ("behringer-x-touch-mini", "knob3", 1.0, False, "b0 0b 0d"),
    ("behringer-x-touch-mini", "knob3", 0.5, True, "b0 0b 14"),
    ("behringer-x-touch-mini", "button9", 1.0, False, "90 08 01"),
    ("arturia-beatstep", "pad16", 1.0, False, "f0 00 20 6b 7f 42 02 00 10 7f 7f f7"),
    ("novation-launchpad-mini-mk3", "pad1", 1.0, False, "90 51 15"),
    ("novation-launchpad-mini-mk3", "pad64", 1.0, True, "91 12 15"),
    ("novation-launchpad-mini-mk3", "side8", 0.0, False, "b0 13 00"),
])
def test_feedback_is_the_bytes_the_maker_documents(device: str, control: str, position: float,
                                                   pending: bool, expected: str) -> None:
    feedback = load_profiles().all[device].controls[control].feedback
    assert feedback is not None
    assert encode(feedback, position, pending).hex(" ") == expected


@pytest.mark.parametrize(("text", "line", "says"), [
    (SMALL.replace('kind = "absolute"', 'kind = "slider"'), 9, "controls.0.kind"),
    (SMALL.replace("number = 20", "number = 126"), 6, "passes 127"),
    (SMALL.replace("number = 5", "number = 20\nmessage = 'cc'").replace(
        'message = "note"\n', ""), 12, "sends what knob1 sends"),
    (SMALL.replace('name = "play"', 'name = "knob2"'), 12, "taken"),
    (SMALL.replace('title = "Tiny MIDI chart"', 'titel = "x"'), 5, "did you mean 'title'"),
    (SMALL + 'init = ["F0 01 F8 F7"]', None, "init"),
])
def test_a_wrong_profile_is_refused_with_its_line(text: str, line: int | None,
                                                  says: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_profile(text, "tiny.toml")
    assert says in str(err.value)
    if line is not None:
        assert f"tiny.toml:{line}:" in str(err.value)


def test_a_user_profile_replaces_the_built_in_one_and_a_broken_one_is_skipped(
        tmp_path: Path) -> None:
    (tmp_path / "korg-nanokontrol2.toml").write_text(SMALL.replace("Tiny", "My nano"))
    (tmp_path / "broken.toml").write_text("name = ")
    profiles = load_profiles([tmp_path]).all
    assert profiles["korg-nanokontrol2"].name == "My nano"
    assert "broken" not in profiles


_values = st.recursive(
    st.none() | st.booleans() | st.integers(-300, 300) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["name", "ports", "kind", "number", "numbers", "count", "message",
                         "feedback", "channel", "blink", "sysex", "levels", "range", "x"]),
        inner, max_size=5), max_leaves=10)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from(["name", "ports", "source", "controls", "init",
                                        "channel", "unless", "rate", "fallback"]),
                       _values, max_size=6))
def test_hostile_profile_data_gets_a_config_error_or_a_profile(data: dict[str, object]) -> None:
    text = _toml(data)
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return
    with contextlib.suppress(ConfigError):
        parse_profile(text, "hostile.toml")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_hostile_profile_text_gets_a_config_error_or_a_profile(text: str) -> None:
    with contextlib.suppress(ConfigError):
        parse_profile(text, "hostile.toml")


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(REQUIRED)), st.floats(-2, 2), st.booleans())
def test_every_feedback_message_is_well_formed_midi(device: str, position: float,
                                                   pending: bool) -> None:
    for control in load_profiles().all[device].controls.values():
        if control.feedback is None:
            continue
        data = encode(control.feedback, position, pending)
        if data[0] == 0xF0:
            assert data[-1] == 0xF7 and all(b < 0x80 for b in data[1:-1])
        else:
            assert 0x80 <= data[0] < 0xF0 and all(b < 0x80 for b in data[1:]) \
                and len(data) == 3


def _toml(value: object, key: str | None = None) -> str:
    """A TOML document of a dict (top-level keys as assignments; nested as inline)."""
    assert isinstance(value, dict)
    return "\n".join(f"{k} = {_inline(v)}" for k, v in value.items())


def _inline(value: object) -> str:
    if value is None:
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').encode(
            "unicode_escape").decode().replace("\\\\", "\\") + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{" + ", ".join(f"{k} = {_inline(v)}" for k, v in value.items()) + "}"
