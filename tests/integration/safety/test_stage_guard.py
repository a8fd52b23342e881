"""sclang's guard of the safety stage (ScorchStage.sc) against generated hostile messages.

Whatever command, add action, target or node list code sends, what leaves sclang never
targets the root, never places a node relative to the stage, the readers or the meter,
never moves, frees, pauses or sets them, and never carries a node path: checked on
messages hypothesis makes, in a real sclang with scorch's classes.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorch.primitives.sclang.launch import SCLANG_ENV, class_library_conf
from scorch.primitives.scsynth.placement import METER_NODE, READERS_GROUP, ROOM_GROUP, STAGE_NODE
from scorch.primitives.system.process import DIE_WITH_PARENT, child_env

pytestmark = pytest.mark.integration

KEPT = {STAGE_NODE, READERS_GROUP, METER_NODE}
COMMANDS = {"s_new": 9, "g_new": 21, "p_new": 63, "n_free": 11, "s_noid": 49, "n_before": 18,
            "n_after": 19, "n_order": 62, "g_head": 22, "g_tail": 23, "n_run": 12, "n_set": 15,
            "n_map": 14, "g_freeAll": 24, "g_deepFree": 50, "g_queryTree": 57, "b_alloc": 28}
NODES = st.sampled_from([0, ROOM_GROUP, STAGE_NODE, READERS_GROUP, METER_NODE, 1, 1000, -1])
ARG = st.one_of(NODES, NODES.map(float), st.sampled_from(['"t"', "\\t", '"h"', "nil", '"x"']),
                st.integers(-3, 5), st.floats(-1, 1, allow_nan=False).map(lambda f: f"{f:.3f}"))


@st.composite
def message(draw: st.DrawFn, depth: int = 0) -> str:
    name = draw(st.sampled_from(sorted(COMMANDS)))
    head = draw(st.sampled_from([f'"/{name}"', f'"{name}"', f"'/{name}'", str(COMMANDS[name])]))
    args = [str(a) for a in draw(st.lists(ARG, max_size=8))]
    if name == "s_new":
        args = ['"loud"', *args]
    if name == "b_alloc" and depth == 0:
        args = ["0", "8", "1", draw(message(depth=1))]
    return "[" + ", ".join([head, *args]) + "]"


def guarded(messages: list[str], folder: Path) -> list[list[list[str]]]:
    """Each message as ScorchStage lets it go: a list of messages, each a list of fields
    (strings as ``s:TEXT``, numbers as they print, nested messages as ``m:``)."""
    show = ('{ |x| case { x.isString or: { x.isKindOf(Symbol) } } { "s:" ++ x } '
            '{ x.isKindOf(Array) } { "m:" ++ x.collect { |y| y.asString }.join(",") } '
            '{ x.asString } }')
    lines = [f"~show = {show};", "~check = { |m| ScorchStage.message(m).do { |out| "
             '("OUT " ++ out.collect(~show).join("|")).postln }; "END".postln };',
             '("IDS " ++ [ScorchStage.room, ScorchStage.stage, ScorchStage.readers, '
             'ScorchStage.meter].join(",")).postln;']
    lines += [f"~check.({m});" for m in messages]
    env = child_env({**SCLANG_ENV, "XDG_CONFIG_HOME": str(folder / "config"),
                     "XDG_DATA_HOME": str(folder / "data")})
    # As scorch feeds it: code on stdin, a form feed to run it; it ends at stdin's end (its
    # `0.exit` is scorch's refusal).
    out = subprocess.run(["sclang", "-i", "scorch", "-l", str(class_library_conf())],
                         input="(\n" + "\n".join(lines) + "\n)\n\x0c", env=env, cwd=folder,
                         capture_output=True, text=True, timeout=120,
                         preexec_fn=DIE_WITH_PARENT).stdout
    ids = re.search(r"^IDS (.*)$", out, re.MULTILINE)
    assert ids is not None, out[-2000:]
    assert [int(x) for x in ids.group(1).split(",")] == [ROOM_GROUP, STAGE_NODE,
                                                          READERS_GROUP, METER_NODE]
    results: list[list[list[str]]] = [[]]
    for line in out.splitlines():
        if line.startswith("OUT "):
            results[-1].append(line[4:].split("|"))
        elif line == "END":
            results.append([])
    assert len(results) == len(messages) + 1, out[-2000:]
    return results[:-1]


def node(field: str) -> int:
    assert not field.startswith("s:"), f"a node path left sclang: {field}"
    return int(float(field))


def check(msg: list[str]) -> None:
    """No root target, nothing relative to or acting on the protected nodes."""
    name = msg[0].removeprefix("s:").lstrip("/")
    name = next((k for k, v in COMMANDS.items() if str(v) == name), name)
    args = msg[1:]
    if name == "s_new":
        assert node(args[3]) not in {0, *KEPT} and node(args[1]) not in {ROOM_GROUP, *KEPT}
    elif name in ("g_new", "p_new"):
        for i in range(0, len(args), 3):
            assert node(args[i + 2]) not in {0, *KEPT}
            assert node(args[i]) not in {ROOM_GROUP, *KEPT}
    elif name in ("n_free", "s_noid"):
        assert not {node(a) for a in args} & {ROOM_GROUP, *KEPT}
    elif name in ("n_before", "n_after"):
        for a, b in zip(args[::2], args[1::2], strict=True):
            assert node(a) not in {0, ROOM_GROUP, *KEPT} and node(b) not in {0, *KEPT}
    elif name == "n_order":
        assert node(args[1]) not in {0, *KEPT}
        assert not {node(a) for a in args[2:]} & {0, ROOM_GROUP, *KEPT}
    elif name in ("g_head", "g_tail"):
        for g, n in zip(args[::2], args[1::2], strict=True):
            assert node(g) not in {0, *KEPT} and node(n) not in {0, ROOM_GROUP, *KEPT}
    elif name == "n_run":
        assert not {node(a) for a in args[::2]} & {0, *KEPT}
    elif name in ("n_set", "n_map"):
        assert not args or node(args[0]) not in {0, *KEPT}
    elif name in ("g_freeAll", "g_deepFree"):
        assert not {node(a) for a in args} & {0, *KEPT}
    elif name == "g_queryTree":  # a read: any group but the root, which means the room
        assert 0 not in {node(a) for a in args[::2]}
    elif name == "b_alloc" and len(args) > 3 and args[3].startswith("m:"):
        check(args[3][2:].split(","))


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(messages=st.lists(message(), min_size=150, max_size=150))
def test_no_generated_message_reaches_past_the_guard(messages: list[str],
                                                     tmp_path_factory: pytest.TempPathFactory
                                                     ) -> None:
    folder = tmp_path_factory.mktemp("guard")
    for sent in guarded(messages, folder):
        for msg in sent:
            check(msg)


def test_ordinary_messages_pass_unchanged(tmp_path: Path) -> None:
    ordinary = ['["/n_set", 1000, "freq", 440]', '["/s_new", "x", 1001, 0, 1, "amp", 0.1]',
                '[9, "x", -1, 3, 1000]', '["/n_free", 1000, 1001]', '["/status"]',
                '["/g_new", 2000, 1, 1]', '["/b_alloc", 0, 8, 1]', '["/n_after", 1000, 1001]']
    results = guarded(ordinary, tmp_path)
    assert [len(r) for r in results] == [1] * len(ordinary)
    assert results[0] == [["s:/n_set", "1000", "s:freq", "440"]]
    assert results[2] == [["9", "s:x", "-1", "3", "1000"]]
