"""Every library SynthDef is in each room's SynthDescLib, so patterns send all its controls.

scsynth gets the library by ``/d_recv`` from scorch, which sclang never sees
(issue 30, item 1): without its SynthDesc a Pbind on ``\\acid`` sent only freq,
amp, pan and out, and closed a ``gate`` the percussive defs do not have after
they had freed themselves ("FAILURE IN SERVER /n_set Node not found").
"""

from __future__ import annotations

import json
import math
import os
import signal
import time
from collections.abc import Iterator

import pytest

from scorch.app.orchestra import Orchestra
from scorch.primitives.osc import OscMessage, encode_message
from scorch.primitives.scsynth.client import OscClient
from scorch.primitives.synthdefs.library import ParamSpec, SynthDefInfo, SynthDefLibrary
from scorch.state.events import Kind
from tests.conftest import module_orchestra

pytestmark = pytest.mark.integration

#: Controls a pattern never sends (its own release closes ``gate``).
UNSENT = ("gate",)


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory,
         library: SynthDefLibrary) -> Iterator[Orchestra]:
    """One room that loaded every library SynthDef."""
    # a recompile on a loaded machine can keep sclang from pings for seconds: missed = 40
    with module_orchestra(tmp_path_factory.mktemp("descs"), "descs",
                          '[midi]\nenabled = false\n[instances.room]\nsynthdefs = "all"\n'
                          "[watchdog]\nmissed = 40\n", library) as orch:
        yield orch


def value(orch: Orchestra, code: str, timeout: float = 10.0) -> str:
    result = orch.rooms.execute_one("room", code, timeout)
    assert result.ok and result.value is not None, (result.error, result.posted)
    return result.value


def descs(orch: Orchestra) -> dict[str, dict[str, object]]:
    """What the room's SynthDescLib says of each library SynthDef, read as JSON."""
    names = ", ".join(f"\\{n}" for n in orch.library.names())
    code = f"""[{names}].collect {{ |name|
        var d = SynthDescLib.global[name], specs;
        if(d.isNil) {{ "\\"" ++ name ++ "\\":null" }} {{
            specs = (d.metadata ? ())[\\specs] ? ();
            "\\"" ++ name ++ "\\":{{\\"controls\\":["
            ++ d.controlNames.collect {{ |c| "\\"" ++ c ++ "\\"" }}.join(",")
            ++ "],\\"hasGate\\":" ++ d.hasGate
            ++ ",\\"specs\\":{{" ++ specs.keys.asArray.collect {{ |k|
                "\\"" ++ k ++ "\\":[" ++ specs[k].minval ++ "," ++ specs[k].maxval ++ "]"
            }}.join(",") ++ "}},\\"category\\":\\"" ++ d.metadata[\\category] ++ "\\"}}"
        }}
    }}.join(",")"""
    found: dict[str, dict[str, object]] = json.loads("{" + value(orch, code) + "}")
    return found


def assert_known(orch: Orchestra) -> None:
    found = descs(orch)
    for info in orch.library.all():
        desc = found[info.name]
        assert desc is not None, f"{info.name} is not in the SynthDescLib"
        assert desc["controls"] == [p.name for p in info.params], info.name
        assert desc["hasGate"] is info.sustained, info.name
        assert desc["category"] == info.category, info.name
        specs = desc["specs"]
        assert isinstance(specs, dict)
        for param in info.params:
            if param.name in specs:
                assert specs[param.name] == pytest.approx([param.minval, param.maxval])
            else:
                assert param.name in ("out", "in"), f"{info.name}.{param.name} has no spec"


def test_every_library_synthdef_is_in_the_synthdesclib_with_its_specs(room: Orchestra) -> None:
    assert_known(room)


# --- every control of every def, through a Pbind, read back on scsynth ------------------


def other_value(param: ParamSpec) -> float:
    """A value inside the spec that is not the default (on the spec's step)."""
    if param.name in ("out", "in"):
        return 100.0 if param.name == "out" else 102.0  # private buses: nothing is heard
    for at in (0.3, 0.7, 1.0):
        if param.warp == "exp" and param.minval > 0:
            x = param.minval * (param.maxval / param.minval) ** at
        else:
            x = param.minval + (param.maxval - param.minval) * at
        if param.step:
            x = round(x / param.step) * param.step
        x = round(x, 4)
        if not math.isclose(x, param.default, rel_tol=1e-3, abs_tol=1e-4):
            return x
    raise AssertionError(f"no other value for {param}")


def wanted(info: SynthDefInfo) -> dict[str, float]:
    return {p.name: other_value(p) for p in info.params if p.name not in UNSENT}


def on_scsynth(info: SynthDefInfo, values: dict[str, float]) -> dict[str, float]:
    """What scsynth should hold: a Pbind adds ``detune`` to ``freq`` (Event's detunedFreq)."""
    expected = dict(values)
    if "freq" in values and "detune" in values:
        expected["freq"] = values["freq"] + values["detune"]
    return expected


def query_tree(osc: OscClient, group: int) -> dict[int, tuple[str, dict[str, float]]]:
    """The synths in ``group`` (one level) with their controls: ``/g_queryTree`` with flag 1."""
    reply: OscMessage = osc.request("/g_queryTree", group, 1, reply="/g_queryTree.reply",
                                    timeout=2.0, match=lambda m: m.args[1] == group)
    args = [a if isinstance(a, int | float) else str(a) for a in reply.args]
    synths: dict[int, tuple[str, dict[str, float]]] = {}
    count, i = int(args[2]), 3
    for _ in range(count):
        node, children = int(args[i]), int(args[i + 1])
        i += 2
        if children >= 0:
            continue  # a group: this test makes none inside
        name, n = str(args[i]), int(args[i + 1])
        i += 2
        controls = {str(args[i + 2 * k]): float(args[i + 2 * k + 1]) for k in range(n)}
        i += 2 * n
        synths[node] = (name, controls)
    return synths


def test_a_pbind_sends_every_control_of_every_library_synthdef(room: Orchestra) -> None:
    osc = room.doors["room"].scsynth
    assert osc is not None
    since = room.views["room"].console.mark()
    infos = room.library.all()
    # One event of each def into a paused group: the percussive ones cannot free
    # themselves before their controls are read.
    patterns = ",\n".join(
        f"Pbind(\\instrument, \\{info.name}, \\group, g, \\dur, Pn(1, 1), \\sustain, 1.5"
        + "".join(f", \\{k}, {v!r}" for k, v in wanted(info).items()) + ")"
        for info in infos)
    group = int(value(room, f"~descsGroup = Group(s).run(false); "
                            f"fork {{ var g = ~descsGroup; s.sync; Ppar([{patterns}]).play }}; "
                            "~descsGroup.nodeID"))
    deadline = time.monotonic() + 10
    while len(synths := query_tree(osc, group)) < len(infos):
        assert time.monotonic() < deadline, synths
        time.sleep(0.05)
    by_def = {name: controls for name, controls in synths.values()}
    for info in infos:
        got = by_def[info.name]
        for name, expected in on_scsynth(info, wanted(info)).items():
            assert got[name] == pytest.approx(expected, rel=1e-4, abs=1e-4), \
                f"{info.name}.{name}: {got[name]} on scsynth, the Pbind said {expected}"
    osc.send(encode_message("/n_run", group, 1))  # they end: on their own, or by their release
    deadline = time.monotonic() + 20
    while query_tree(osc, group):
        assert time.monotonic() < deadline, query_tree(osc, group)
        time.sleep(0.1)
    value(room, "~descsGroup.free; 1")
    failures = [x.text for x in room.views["room"].console.since(since) if "FAILURE" in x.text]
    assert failures == []


def test_percussive_defs_are_never_sent_a_gate(room: Orchestra) -> None:
    """Hits released well after they freed themselves: no ``/n_set`` to a node gone."""
    osc = room.doors["room"].scsynth
    assert osc is not None
    since = room.views["room"].console.mark()
    drums = [i.name for i in room.library.all() if not i.sustained]
    assert {"kick", "hihat", "snare", "clap"} <= set(drums)
    patterns = ", ".join(f"Pbind(\\instrument, \\{name}, \\out, 100, \\dur, Pn(0.1, 3), "
                         "\\sustain, 1.0)" for name in drums)
    value(room, f"~drums = Ppar([{patterns}]).play; 1")
    # The last release would come 0.2 + 0.2 + 1.0 s after the start: a gate sent to a
    # node gone would be posted by then.
    failure = room.rooms.wait_for("room", "FAILURE", 2.5, since=since)
    assert failure is None, failure.text
    deadline = time.monotonic() + 10  # and they freed themselves (pluck rings longest)
    while left := [d for d, _ in query_tree(osc, 1).values() if d in drums]:
        assert time.monotonic() < deadline, left
        time.sleep(0.1)


# --- they stay known ------------------------------------------------------------------------


def test_a_killed_sclang_comes_back_knowing_them(room: Orchestra) -> None:
    view = room.views["room"]
    value(room, "SynthDescLib.global.removeAt(\\acid); 1")
    pid = view.snapshot.sclang_pid
    assert pid is not None
    since = view.events.mark()
    os.kill(pid, signal.SIGKILL)
    event = view.events.wait_for(Kind.RESTORED, since, 30.0)
    assert event is not None and event.details.get("process") == "sclang", \
        room.rooms.events("room", since)
    assert_known(room)


def test_a_recompile_reads_them_again(room: Orchestra) -> None:
    since = room.views["room"].events.mark()
    assert value(room, "thisProcess.recompile; 12") == "12"
    event = room.views["room"].events.wait_for(Kind.RESTORED, since, 30.0)
    assert event is not None and "recompiled" in event.message
    assert_known(room)


def test_synthdefs_load_reads_the_desc_again(room: Orchestra) -> None:
    value(room, "SynthDescLib.global.removeAt(\\kick); 1")
    assert value(room, "SynthDescLib.global[\\kick].isNil") == "true"
    assert room.rooms.load_synthdef("room", "kick") == ["room"]
    assert value(room, "SynthDescLib.global[\\kick].controlNames") == \
        "[ out, amp, pan, freq, sweep, sweepTime, decay, click, drive ]"
    assert value(room, "SynthDescLib.global[\\kick].hasGate") == "false"


def test_their_defs_hold_the_librarys_bytes_and_can_be_sent_again(room: Orchestra) -> None:
    """``SynthDescLib.send(s)`` (JITLib's snippets call it) sends every desc's def."""
    compiled = room.library.compiled("kick")
    assert value(room, "SynthDescLib.global[\\kick].def.class") == "ScorchSynthDef"
    assert value(room, "SynthDescLib.global[\\kick].def.asBytes.size") == str(len(compiled))
    since = room.views["room"].console.mark()
    assert value(room, "fork { SynthDescLib.send(s); s.sync; \\sent.postln }; 1") == "1"
    assert room.rooms.wait_for("room", "^sent$", 10.0, since=since) is not None
    assert [x.text for x in room.views["room"].console.since(since)
            if "FAILURE" in x.text or "ERROR" in x.text] == []


def test_after_an_scsynth_crash_code_defs_come_back_and_the_library_is_still_known(
        room: Orchestra) -> None:
    view = room.views["room"]
    value(room, "SynthDef(\\mine, { Out.ar(100, DC.ar(0)) }).add; 1")
    pid = view.snapshot.scsynth_pid
    assert pid is not None
    since, console = view.events.mark(), view.console.mark()
    os.kill(pid, signal.SIGKILL)
    event = view.events.wait_for(Kind.RESTORED, since, 30.0)
    assert event is not None and event.details.get("process") == "scsynth"
    deadline = time.monotonic() + 5  # sclang sends its own defs again once scsynth is back
    while room.rooms.execute_one("room", "Synth(\\mine).free; 1").server_errors:
        assert time.monotonic() < deadline, "sclang did not send \\mine again"
        time.sleep(0.1)
    assert_known(room)
    assert [x.text for x in view.console.since(console, source="sclang")
            if x.text.startswith("ERROR")] == []
