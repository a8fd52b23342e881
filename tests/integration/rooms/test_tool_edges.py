"""No input breaks a room: every tool, fed generated and hostile input through a real client.

A room with a named node, MIDI on JACK, and an MCP client in a blocking portal.
Each call must end in a result or a clear error (never an internal one, never
a hang); afterwards the room is READY, its node is there, and (the fixture
checks) no process is left. bench/tool_fuzz.py runs the same for longer.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorch.app.orchestra import Orchestra
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.state.events import Kind
from tests.conftest import jack_name, node_exists
from tests.support.tool_fuzz import (
    HOSTILE,
    PATHS,
    Call,
    Tally,
    Target,
    fuzz_target,
    generated,
    is_finite_json,
    run_call,
)

pytestmark = pytest.mark.integration

#: Generated calls in the short run (bench/tool_fuzz.py makes thousands).
EXAMPLES = 80


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory,
           library: SynthDefLibrary) -> Iterator[Target]:
    with fuzz_target(tmp_path_factory.mktemp("edges"), jack_name("edges"), library) as t:
        yield t


@pytest.fixture(scope="module")
def orchestra(target: Target) -> Orchestra:
    return target.orchestra


@pytest.fixture(scope="module")
def call(target: Target) -> Call:
    return target.call


def test_hostile_cases_end_in_a_result_or_a_clear_error(
        call: Call, orchestra: Orchestra) -> None:
    tally = Tally()
    for tool, args in HOSTILE:
        run_call(call, tool, args, tally)
    assert tally.calls == len(HOSTILE)
    assert not tally.internal and not tally.hangs
    assert tally.clear_errors > tally.calls // 2  # the cases are mostly bad on purpose
    status = orchestra.rooms.status("room")
    assert status.state == "READY"
    # No bad value was kept; the largest float32, an edge the cases also send, is fine.
    assert orchestra.rooms.nodes("room")["hum"].params["freq"] in (220, 3.4028234e38)
    orchestra.rooms.set("room", "hum", {"freq": 220})


def test_a_bad_value_never_reaches_the_desired_state_or_a_restore(
        call: Call, orchestra: Orchestra) -> None:
    is_error, text = call("set", {"instance": "room", "node": "hum",
                                       "params": {"freq": 1e39}})
    assert is_error and "params.freq" in text and "float32" in text and "1e+39" in text
    since = orchestra.views["room"].events.mark()
    os.kill(orchestra.rooms.status("room").pids["scsynth"], signal.SIGKILL)
    restored = orchestra.views["room"].events.wait_for((Kind.RESTORED, Kind.FAILED), since, 20)
    assert restored is not None and restored.kind == Kind.RESTORED
    osc = orchestra.doors["room"].scsynth
    assert osc is not None and node_exists(osc, orchestra.rooms.nodes("room")["hum"].node_id)


def test_a_path_leading_outside_is_refused_as_such_naming_it(target: Target) -> None:
    wrong = []
    for tool, args in PATHS:
        is_error, text, said = target.ask(tool, args)
        said = said or {}
        if not is_error or said.get("code") != "PATH_REFUSED" or said.get("argument") != "path":
            wrong.append(f"{tool} {args}: {is_error} {said.get('code')} {text[:200]!r}")
    assert not wrong, "\n".join(wrong)


def test_errors_name_the_argument_and_shorten_the_value(call: Call) -> None:
    is_error, text = call("status", {"instance": "r" * (5 * 1024 * 1024)})
    assert is_error and "instance" in text and len(text) < 2000
    is_error, text = call("console", {"instance": "room", "clear": "yes"})
    assert is_error and "clear" in text
    is_error, text = call("execute", {"instance": "room", "code": "1\x002"})
    assert is_error and "NUL" in text and "character 2" in text
    is_error, text = call("execute", {"instance": "room", "code": "1", "timeout_s": 1e-9})
    assert is_error and "timeout_s" in text
    is_error, text = call("wait_for", {"instance": "room", "pattern": "(a)\\1",
                                            "timeout_s": 0.5})
    assert is_error and "RE2" in text and "backreferences" in text


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(data=st.data())
def test_generated_input_for_every_tool_ends_in_a_result_or_a_clear_error(
        data: st.DataObject, target: Target) -> None:
    known, orchestra = target.schemas, target.orchestra
    tool = data.draw(st.sampled_from(sorted(known)), label="tool")
    args = data.draw(generated(known[tool]).filter(is_finite_json), label="args")
    tally = Tally()
    run_call(target.call, tool, args, tally)
    assert not tally.internal, tally.internal
    assert not tally.hangs, tally.hangs
    if orchestra.rooms.status("room").state == "STOPPED":  # a generated quit is a fine answer
        orchestra.rooms.boot("room")


def test_after_the_storm_the_room_is_ready_and_nothing_was_declared_hung(
        orchestra: Orchestra) -> None:
    if orchestra.rooms.status("room").state != "READY":
        orchestra.rooms.boot("room")
    assert orchestra.rooms.status("room").state == "READY"
    assert orchestra.rooms.execute_one("room", "1 + 1").value == "2"
    assert not [e for e in orchestra.rooms.events("room") if e.kind in (Kind.HUNG, Kind.FAILED)]

