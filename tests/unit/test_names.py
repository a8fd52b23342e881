"""Names are checked whole: a trailing newline or a control character is no name (issue 37).

``re.match`` with ``$`` takes ``"verse\\n"``; every name that becomes a file's name or an
sclang symbol is checked with ``fullmatch`` (or a pattern with ``\\Z``) instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from scorch import values
from scorch.api.ops import OPERATIONS
from scorch.app.studio.capture import Slots
from scorch.app.studio.recorder import Recorder
from scorch.errors import InvalidRequest, InvalidSnippet
from scorch.knowledge.snippets import validate_name

NAMES: list[Any] = [values.RoomName, values.GroupName, values.NodeName, values.ParamName,
                    values.SynthDefName, values.RouteId, values.BufferName, values.SessionName,
                    values.SceneName, values.HostName, values.Selector]
#: What follows a good name to spoil it: a trailing newline first (what `$` lets through).
SPOILERS = st.sampled_from(["\n", "\r\n", "\r", "\x00", "\t", "\x0b", "\x0c", "\x1b", "\x7f",
                            " ", "\n\n"])
GOOD = st.from_regex(r"[a-z][a-z0-9_-]{0,30}", fullmatch=True)


#: One adapter per kind, built once: building them in every example took most of its time,
#: past hypothesis's deadline on a loaded machine.
ADAPTERS = {id(kind): TypeAdapter(kind) for kind in NAMES}


def refused_by(kind: Any, text: str) -> bool:
    try:
        ADAPTERS[id(kind)].validate_python(text)
    except ValidationError:
        return True
    return False


@pytest.mark.parametrize("kind", NAMES)
def test_a_name_with_a_trailing_newline_is_refused(kind: Any) -> None:
    assert not refused_by(kind, "verse")
    assert refused_by(kind, "verse\n")


@given(GOOD, SPOILERS, st.booleans())
def test_a_good_name_spoilt_by_a_control_character_is_refused_by_every_kind(
        name: str, spoiler: str, at_end: bool) -> None:
    spoilt = name + spoiler if at_end else name[:1] + spoiler + name[1:]
    for kind in NAMES:
        assert refused_by(kind, spoilt), (kind, spoilt)


@given(GOOD, SPOILERS)
def test_snippet_pattern_and_checkpoint_names_are_checked_whole(name: str, spoiler: str) -> None:
    with pytest.raises(InvalidSnippet):
        validate_name(name + spoiler)
    define = {"action": "define", "instance": "room", "kind": "Pdef",
              "name": "p" + name.replace("-", "_") + spoiler, "source": "Pbind()"}
    with pytest.raises(InvalidRequest) as caught:
        OPERATIONS["pattern"].parse(define)
    assert caught.value.argument == "name"
    with pytest.raises(InvalidRequest) as caught:
        OPERATIONS["undo"].parse({"action": "checkpoint", "name": name + spoiler})
    assert caught.value.argument == "name"


@given(GOOD, SPOILERS)
def test_a_recordings_name_is_checked_whole(name: str, spoiler: str) -> None:
    recorder = Recorder(Path("/nonexistent-scorch-recordings"), {}, {}, Slots())
    with pytest.raises(InvalidRequest, match="recording name"):
        recorder._new_path("room", "wav", name + spoiler)  # the file's name is made here
    assert recorder._new_path("room", "wav", name).name == f"{name}.wav"
