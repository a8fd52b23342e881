"""Every error kind says what a program may do about it, and the docs list each code."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import mcp_server.tools
import scorch.wire.envelope
from scorch.errors import (
    CODES,
    NEAREST,
    Booting,
    NodeNotFound,
    NotFound,
    RoomNotFound,
    RouteNotFound,
    SceneNotFound,
    ScorchError,
    UnknownSynthDef,
    nearest,
)

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "errors.md"


def every_kind() -> list[type[ScorchError]]:
    """ScorchError and every subclass of it scorch defines (those the wire and MCP add too)."""
    assert scorch.wire.envelope.BadRequest and mcp_server.tools.Failed  # imported: defined
    kinds, todo = [], [ScorchError]
    while todo:
        kind = todo.pop()
        kinds.append(kind)
        todo.extend(kind.__subclasses__())
    return kinds


def documented_codes() -> list[str]:
    """The codes docs/errors.md's table lists, in its order."""
    return re.findall(r"^\| `([A-Z_]+)` \|", DOCS.read_text(), flags=re.MULTILINE)


def test_every_error_kind_has_a_code_of_the_closed_set_and_says_whether_to_retry() -> None:
    kinds = every_kind()
    assert len(kinds) > 40
    for kind in kinds:
        assert kind.code in CODES, kind
        assert isinstance(kind.retryable, bool), kind
        assert kind.argument is None, kind  # an instance names its argument, not a class


def test_every_kind_made_directly_of_scorch_error_chooses_its_code() -> None:
    """A new top-level kind must say what it is, not fall back on FAILED unawares."""
    for kind in ScorchError.__subclasses__():
        assert "code" in vars(kind), kind


def test_every_code_is_documented_and_the_docs_list_no_other() -> None:
    listed = documented_codes()
    assert sorted(listed) == sorted(CODES)
    assert len(set(listed)) == len(listed)


def test_an_error_tells_a_program_its_code_retry_and_argument_and_people_its_text() -> None:
    err = Booting("room 'a' is BOOTING")
    err.argument = "instance"
    assert err.info() == {"code": "BOOTING", "retryable": True, "argument": "instance",
                          "message": "room 'a' is BOOTING"}


# --- did you mean -------------------------------------------------------------------


def test_a_typo_of_a_room_gets_the_room_it_most_likely_meant() -> None:
    err = RoomNotFound("lobbby", ["lobby", "gallery"], ["rooms"])
    assert str(err) == ("no room or group named 'lobbby'; known rooms: lobby, "
                        "gallery; groups: rooms; did you mean 'lobby'?")
    assert err.name == "lobbby" and err.code == "NOT_FOUND"


def test_every_kind_of_name_is_offered_its_nearest_through_not_found() -> None:
    cases = [
        (NodeNotFound("no node 'drnoe'", name="drnoe", known=["drone", "hum"]), ["drone"]),
        (SceneNotFound("no scene 'Intro'", name="Intro", known=["intro", "finale"]), ["intro"]),
        (RouteNotFound("no route", name="knob-1", known=["knob-2", "knob-3", "fader"]),
         ["knob-2", "knob-3"]),
        (UnknownSynthDef("no SynthDef", name="sine", known=["sin", "saw", "sines"]),
         ["sines", "sin"]),
    ]
    for err, meant in cases:
        assert str(err).endswith("; did you mean " + " or ".join(map(repr, meant)) + "?"), err


def test_a_name_like_none_there_gets_no_guess() -> None:
    for err in (NotFound("no scene 'zzz'; scenes: intro", name="zzz", known=["intro"]),
                NotFound("no scene 'x'; scenes: (none)", name="x", known=[]),
                NotFound("no operation 'q'")):
        assert "did you mean" not in str(err)


def test_nearest_is_case_blind_and_never_offers_the_name_asked_for() -> None:
    assert nearest("LOBBY", ["lobby", "Lobby"]) == ["lobby", "Lobby"]
    assert nearest("lobby", ["lobby"]) == []
    assert nearest("x" * 10_000, ["x" * 199]) == ["x" * 199]  # a huge name costs little


@given(st.text(max_size=80), st.lists(st.text(max_size=40), max_size=60))
def test_nearest_offers_at_most_three_names_that_exist(name: str, known: list[str]) -> None:
    found = nearest(name, known)
    assert len(found) <= NEAREST and set(found) <= set(known) and name not in found
    err = NotFound("no such thing", name=name, known=known)
    assert str(err).startswith("no such thing") and err.code == "NOT_FOUND"


def test_every_not_found_scorch_raises_names_what_was_asked_and_what_exists() -> None:
    """A refusal that passes no ``name`` and ``known`` could offer no nearest name: each
    raise of a NotFound kind in the code passes them, but for the few that cannot."""
    kinds = {kind.__name__ for kind in every_kind() if issubclass(kind, NotFound)}
    # what is asked for is not a name among others: a file path, a port or node that went
    # away between two looks, a SynthDef that exists but failed to load, a class name the
    # docs index suggests by its own search
    exempt = Counter({("scorch/primitives/disk/samples.py", "SampleNotFound"): 2,
                      ("midi/io/backends/rtmidi.py", "MidiPortNotFound"): 3,
                      ("midi/io/backends/scorch_jack.py", "MidiPortNotFound"): 1,
                      ("scorch/app/studio/capture.py", "NodeNotFound"): 1,
                      ("scorch/primitives/synthdefs/library.py", "UnknownSynthDef"): 1,
                      ("scorch/api/ops/knowledge.py", "DocNotFound"): 1})
    bare: list[tuple[str, str]] = []
    for tree in ("scorch", "actors", "midi", "mcp_server"):
        for path in (ROOT / tree).rglob("*.py"):
            where = str(path.relative_to(ROOT))
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                        and node.func.id in kinds and node.func.id != "RoomNotFound"
                        and not {"name", "known"} <= {k.arg for k in node.keywords}):
                    bare.append((where, node.func.id, node.lineno))
    named = [(where, kind, line) for where, kind, line in bare if (where, kind) not in exempt]
    assert named == []
    assert len(bare) >= 5  # the exemptions still exist: the walk saw them


def test_the_tree_drawn_at_the_top_of_errors_is_the_classes_tree() -> None:
    import scorch.errors

    doc = scorch.errors.__doc__ or ""
    drawn = doc.split("(a test keeps it true)::", 1)[1]
    entries = re.split(r"\n    (?=\w)", "\n" + drawn.strip("\n").removeprefix("    "))
    tree = {}
    for entry in filter(None, (e.strip() for e in entries)):
        parent, children = entry.split(":", 1)
        tree[parent] = [name.strip() for name in " ".join(children.split()).split(",")]
    classes = [c for c in vars(scorch.errors).values()
               if isinstance(c, type) and c.__module__ == "scorch.errors"]
    under = {c.__name__: sorted(s.__name__ for s in c.__subclasses__()
                                if s.__module__ == "scorch.errors") for c in classes}
    assert tree == {name: subs for name, subs in under.items() if subs}
    assert {c.__name__ for c in classes} == {"ScorchError"} | {n for s in tree.values() for n in s}
