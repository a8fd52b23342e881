"""What loading a session changes: the diff of two desired states, in the order it applies."""

from __future__ import annotations

from scorch.state.session import BufferSpec, NodeSpec, RoomSpec, Session, diff

DEFAULTS = {"sine": {"freq": 440.0, "amp": 0.4, "pan": 0.0}}


def defaults(synthdef: str) -> dict[str, float]:
    return DEFAULTS.get(synthdef, {})


def room(nodes: dict[str, NodeSpec] | None = None,
         buffers: dict[str, BufferSpec] | None = None) -> RoomSpec:
    return RoomSpec(nodes=nodes or {}, buffers=buffers or {})


def test_an_equal_session_changes_nothing() -> None:
    state = Session({"a": room({"pad": NodeSpec("sine", {"freq": 220.0})},
                               {"k": BufferSpec("/k.wav", 768)})})
    assert diff(state, state, defaults) == []


def test_params_left_out_are_at_their_defaults_and_only_differences_are_set() -> None:
    now = Session({"a": room({"pad": NodeSpec("sine", {"freq": 220.0, "amp": 0.2})})})
    want = Session({"a": room({"pad": NodeSpec("sine", {"freq": 220.0, "pan": 0.0})})})
    (change,) = diff(now, want, defaults)
    assert (change.action, change.room, change.target) == ("set", "a", "pad")
    assert change.params == {"amp": 0.4}  # amp back to its default; pan already is
    assert change.detail == "set pad: amp 0.2 -> 0.4"


def test_float32_rounding_is_no_difference() -> None:
    now = Session({"a": room({"pad": NodeSpec("sine", {"amp": 0.20000000298023224})})})
    want = Session({"a": room({"pad": NodeSpec("sine", {"amp": 0.2})})})
    assert diff(now, want, defaults) == []


def test_buffers_are_freed_and_loaded_before_nodes_and_a_taken_bufnum_is_freed_first() -> None:
    now = Session({"a": room({"old": NodeSpec("sine"), "pad": NodeSpec("sine")},
                             {"kick": BufferSpec("/kick.wav", 768)})})
    want = Session({"a": room({"pad": NodeSpec("saw"), "new": NodeSpec("sine", {"freq": 1.0})},
                              {"kick": BufferSpec("/kick.wav", 769),
                               "snare": BufferSpec("/snare.wav", 768)})})
    steps = [(c.action, c.target) for c in diff(now, want, defaults)]
    assert steps == [("free", "kick"), ("load", "kick"), ("load", "snare"),
                     ("release", "old"), ("play", "pad"), ("play", "new")]
    loads = {c.target: (c.path, c.bufnum) for c in diff(now, want, defaults)
             if c.action == "load"}
    assert loads == {"kick": ("/kick.wav", 769), "snare": ("/snare.wav", 768)}


def test_a_changed_path_under_the_same_bufnum_is_loaded_again_without_a_free() -> None:
    now = Session({"a": room(buffers={"kick": BufferSpec("/old.wav", 768)})})
    want = Session({"a": room(buffers={"kick": BufferSpec("/new.wav", 768)})})
    assert [(c.action, c.path) for c in diff(now, want, defaults)] == [("load", "/new.wav")]


def test_routes_are_unmapped_mapped_and_replaced_by_id_unless_unknown() -> None:
    a = {"id": "a", "type": "control", "cc": 1}
    b = {"id": "b", "type": "control", "cc": 2}
    b2 = {**b, "cc": 3}
    now, want = Session(routes=(a, b)), Session(routes=(b2, {**a, "id": "c"}))
    assert [(c.action, c.target) for c in diff(now, want, defaults)] == [
        ("unmap", "a"), ("map", "b"), ("map", "c")]
    assert diff(Session(routes=(a,), routes_known=False), want, defaults) == []


def test_a_tempo_is_set_where_both_sides_know_its_scope() -> None:
    now = Session(tempos={"": 120.0, "ground": 90.0})
    want = Session(tempos={"": 96.0, "ground": 90.0, "gone": 70.0})
    (change,) = diff(now, want, defaults)
    assert (change.action, change.target, change.scope, change.bpm) == (
        "tempo", "installation", "", 96.0)
    assert change.detail == "tempo of installation: 120 -> 96 bpm"
    # A scope the installation does not set (a MIDI clock drives it) or a file without one.
    assert diff(Session(tempos={"ground": 90.0}), want, defaults) == []
    assert diff(now, Session(), defaults) == []


def test_a_node_is_played_in_its_place_after_its_target_and_moved_back_when_moved() -> None:
    fx = NodeSpec("sine", {}, "src", "after")
    want = Session({"a": room({"fx": fx, "src": NodeSpec("sine"),
                               "top": NodeSpec("sine", {}, None, "head")})})
    steps = [(c.action, c.target, c.placed, c.add_action)
             for c in diff(Session({"a": room()}), want, defaults)]
    assert steps == [("play", "src", None, "tail"), ("play", "fx", "src", "after"),
                     ("play", "top", None, "head")]  # the target first
    # moved since (to the head): moved back after src, params untouched
    now = Session({"a": room({"src": NodeSpec("sine"), "fx": NodeSpec("sine", {}, None, "head"),
                              "top": NodeSpec("sine", {}, None, "head")})})
    (move,) = diff(now, want, defaults)
    assert (move.action, move.target, move.placed, move.add_action) == (
        "move", "fx", "src", "after")
    assert move.detail == "move node fx to after src"
    # its target played again (another SynthDef): it goes back beside the new one
    now = Session({"a": room({"src": NodeSpec("saw"), "fx": fx,
                              "top": NodeSpec("sine", {}, None, "head")})})
    assert [(c.action, c.target) for c in diff(now, want, defaults)] == [
        ("play", "src"), ("move", "fx")]


def test_a_node_of_unknown_place_is_left_where_it_is() -> None:
    now = Session({"a": room({"src": NodeSpec("sine"), "fx": NodeSpec("sine", {}, "src")})})
    want = Session({"a": room({"src": NodeSpec("sine"), "fx": NodeSpec("sine", {}, None, None)})})
    assert diff(now, want, defaults) == []  # a file of version 2 says nothing of places


def test_places_that_cannot_be_are_named() -> None:
    from scorch.state.session import placement_order, placement_problems

    nodes = {"a": NodeSpec("sine", {}, "b", "after"), "b": NodeSpec("sine", {}, "a", "before"),
             "c": NodeSpec("sine", {}, "gone", "after"), "d": NodeSpec("sine", {}, None, "before"),
             "e": NodeSpec("sine", {}, "a", "head"), "f": NodeSpec("sine", {}, "f", "after"),
             "g": NodeSpec("sine", {}, "a", "after")}
    problems = placement_problems(nodes)
    assert sorted(problems) == ["a", "b", "c", "d", "e", "f"]
    assert "relative to itself" in problems["a"] and "no node of this room" in problems["c"]
    assert "needs a target" in problems["d"] and "default group" in problems["e"]
    assert placement_order(nodes) == ["b", "a", "c", "d", "e", "f", "g"]  # ends, circles too


def test_a_master_gain_is_faded_where_both_sides_know_it() -> None:
    now = Session(rooms={"a": RoomSpec(gain_db=0.0), "b": RoomSpec(gain_db=-6.0),
                         "c": RoomSpec(gain_db=-3.0)})
    want = Session(rooms={"a": RoomSpec(gain_db=-12.0), "b": RoomSpec(gain_db=-6.0),
                          "c": RoomSpec()})
    changes = diff(now, want, defaults)
    assert [(c.action, c.room, dict(c.params)) for c in changes] == [
        ("gain", "a", {"db": -12.0})]
    assert changes[0].detail == "master gain of a: 0 -> -12 dB"
