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
    assert (change.action, change.instance, change.target) == ("set", "a", "pad")
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
