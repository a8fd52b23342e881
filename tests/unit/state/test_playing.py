"""Who made each synth: named nodes, MIDI voices, Ndefs, patterns, code."""

from __future__ import annotations

import pytest

from scorch.primitives.sclang.patterns import PatternRecord
from scorch.primitives.scsynth.node_tree import CLIENT_SPAN, TreeNode
from scorch.state.playing import instrument, ndef_of, owner

PATTERNS = [
    PatternRecord("Pdef", "acc", True, "1.0", "source",
                  "Pdef('acc', Pbind('instrument', 'default', 'degree', 1))"),
    PatternRecord("Pbindef", "bass", True, "1.0", "source", "Pbindef('bass', 'degree', 1)"),
    PatternRecord("Pdef", "lead", True, "1.0", "code", "Pdef(\\lead, Pbind(\\instrument, \\saw))"),
    PatternRecord("Pdef", "off", False, "1.0", "source", "Pdef('off', Pbind('instrument', 'pad'))"),
    PatternRecord("Ndef", "drone", True, "nil", "source", "Ndef('drone', { SinOsc.ar })"),
    PatternRecord("Ndef", "drone2", True, "nil", "source", "Ndef('drone2', { Saw.ar })"),
]
NAMED = {2**30: "hum"}


@pytest.mark.parametrize(("node", "expected"), [
    (TreeNode(0, 0, None), "root"),
    (TreeNode(1, 0, None), "default group of client 0"),
    (TreeNode(2**30, 1, "sine"), "node hum"),
    (TreeNode(2**29 + 3, 1, "sine"), "midi"),
    (TreeNode(2**30 + 2**29 + 7, 1, "sine"), "scorch (play, capture)"),
    (TreeNode(CLIENT_SPAN + 1000, 1, "sine"), "client 1"),
    (TreeNode(1000, 1, None), "sclang (group)"),
    (TreeNode(1001, 1000, "temp__0drone-1234_5"), "Ndef drone"),
    (TreeNode(1002, 1000, "temp__0drone21234_6"), "Ndef drone2"),
    (TreeNode(1003, 1000, "system_link_audio_2"), "Ndef monitor"),
    (TreeNode(1004, 1, "default"), "Pdef acc or Pdef bass"),
    (TreeNode(1005, 1, "saw"), "Pdef lead"),
    (TreeNode(1006, 1, "pad"), "sclang (code)"),  # its Pdef is stopped
])
def test_each_node_gets_its_owner(node: TreeNode, expected: str) -> None:
    assert owner(node, NAMED, PATTERNS, client_id=0) == expected


def test_the_instrument_is_read_from_compile_strings_and_from_code() -> None:
    assert instrument("Pbind('instrument', 'saw', 'dur', 1)") == "saw"
    assert instrument("Pbind(\\instrument, \\saw_2)") == "saw_2"
    assert instrument("Pbind('degree', 1)") == "default"


def test_an_ndef_is_found_by_its_synthdefs_name_only_with_the_hash_and_counter_after() -> None:
    assert ndef_of("temp__0a99_1", 0, ["a", "a9"]) == "a9"  # the longest name that fits
    assert ndef_of("temp__0a-5_1", 0, ["a"]) == "a"
    assert ndef_of("temp__1a5_1", 0, ["a"]) is None  # another client's
    assert ndef_of("temp__0ab_1", 0, ["a"]) is None
