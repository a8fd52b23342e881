"""execute carries what scsynth said about the commands the code sent before it returned.

``Synth(\\nosuchdef)`` gave "FAILURE IN SERVER /s_new SynthDef not found" on the
console and ``ok: true`` with nothing else (issue 30, item 7).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator

import pytest

from scorch.api.ops.code import ExecuteOutcome, ExecuteOutput
from scorch.app.orchestra import Orchestra
from scorch.primitives.sclang.result import ExecuteResult
from scorch.primitives.synthdefs.library import SynthDefLibrary
from tests.conftest import module_orchestra

pytestmark = pytest.mark.integration

NOT_FOUND = ("*** ERROR: SynthDef nosuchdef not found",
             "FAILURE IN SERVER /s_new SynthDef not found")


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory,
         library: SynthDefLibrary) -> Iterator[Orchestra]:
    with module_orchestra(tmp_path_factory.mktemp("server-errors"), "srverr",
                          '[midi]\nenabled = false\n[instances.room]\nsynthdefs = ["sine"]\n',
                          library) as orch:
        yield orch


def run(orch: Orchestra, code: str) -> ExecuteResult:
    return orch.rooms.execute_one("room", code, 10.0)


def test_a_synth_of_an_unknown_def_comes_back_with_scsynths_failure(room: Orchestra) -> None:
    result = run(room, "Synth(\\nosuchdef); 1")
    assert result.ok and result.value == "1"  # the code ran; scsynth refused
    assert result.server_errors == NOT_FOUND
    text = ExecuteOutput(results=[ExecuteOutcome.of(result)]).text()
    assert "scsynth: FAILURE IN SERVER /s_new SynthDef not found" in text


@pytest.mark.parametrize(("code", "expected"), [
    ("s.sendMsg(\\n_set, 99999, \\freq, 1); 3",
     ("FAILURE IN SERVER /n_set Node 99999 not found",)),
    ("s.sendBundle(nil, [\\n_free, 99998]); 4",
     ("FAILURE IN SERVER /n_free Node 99998 not found",)),
    ("s.listSendMsg([\\s_new, \\nosuchdef, -1, 0, 1]); 5", NOT_FOUND),
    ("Synth(\\nosuchdef); 1.foo", NOT_FOUND),  # an error after it: still told
])
def test_every_way_of_sending_is_heard(room: Orchestra, code: str,
                                       expected: tuple[str, ...]) -> None:
    assert run(room, code).server_errors == expected


def test_code_that_sends_nothing_or_nothing_wrong_carries_none(room: Orchestra) -> None:
    assert run(room, "Synth(\\sine, [\\amp, 0]).free; 1").server_errors == ()
    assert run(room, "1 + 1").server_errors == ()
    # scheduled with latency: it fails after the code returned, not before
    assert run(room, "s.bind { Synth(\\nosuchdef) }; 1").server_errors == ()
    assert room.rooms.wait_for("room", "FAILURE IN SERVER /s_new", 2.0) is not None


def test_failures_of_other_commands_meanwhile_are_not_the_requests(room: Orchestra) -> None:
    """A routine failing /n_set every 5 ms while the request sends /s_new."""
    run(room, "~spam = fork { loop { s.sendMsg(\\n_set, 99997, \\freq, 1); 0.005.wait } }; 1")
    try:
        assert room.rooms.wait_for("room", "/n_set Node 99997", 2.0) is not None
        for _ in range(5):
            assert run(room, "Synth(\\nosuchdef); 1").server_errors == NOT_FOUND
            assert run(room, "1").server_errors == ()
    finally:
        run(room, "~spam.stop; 1")


def test_code_that_sends_nothing_is_not_slowed(room: Orchestra) -> None:
    """The fence is only for code that sent something: ``1`` stays well under 5 ms."""
    times = []
    for _ in range(50):
        started = time.perf_counter()
        assert run(room, "1").value == "1"
        times.append(time.perf_counter() - started)
    assert statistics.median(times) < 0.005, times


def test_a_library_def_the_room_did_not_load_is_known_to_sclang_only(room: Orchestra) -> None:
    """sclang knows every library SynthDesc, but sends none on its own: scsynth holds what
    the room loaded (its config, `synthdefs load`), which scorch restores."""
    assert run(room, "SynthDescLib.global[\\kick].notNil").value == "true"
    assert run(room, "Synth(\\kick); 1").server_errors == (
        "*** ERROR: SynthDef kick not found", "FAILURE IN SERVER /s_new SynthDef not found")
