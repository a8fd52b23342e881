"""execute tells exactly what sclang did, and sclang follows its scsynth through restarts.

Each defect of issue 18 against a real room (scsynth + sclang on a private
JACK server): values, posts and errors; registration after a restart, s.reboot
and s.quit; calls during a restore; a failing sclang next to a healthy scsynth.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from scorch.app.orchestra import Orchestra
from scorch.config.installation import Config
from scorch.primitives.sclang.result import ExecuteResult
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.primitives.system.thread_timing import realtime_granted
from scorch.state.events import Kind
from tests.conftest import MakeConfig, node_exists
from tests.support.bare_sclang import BareSclang
from tests.support.differential import Unit, compare
from tests.support.harness import Scsynth
from tests.support.skips import missing

pytestmark = pytest.mark.integration

ROOM = """
[instances.room]
synthdefs = ["sine"]
startup = "{startup}"
[instances.room.nodes.hum]
synthdef = "sine"
params = {{ freq = 330, amp = 0.001 }}
"""
#: A synth that sends /tr 50 times a second, made again after every scsynth restart.
STARTUP = """
fork {
    SynthDef(\\scorchtrig, { SendReply.kr(Impulse.kr(50), '/tr', [1]) }).add;
    s.sync;
    Synth(\\scorchtrig);
};
"""
WATCHDOG = """
[watchdog]
interval = 0.25
missed = 8
max_restarts = 3
period = 60
backoff_min = 0.05
backoff_max = 0.5
"""


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory,
         library: object) -> Iterator[Orchestra]:
    """One room for the whole module (its state is checked, not assumed, by each test)."""
    from scorch.config.installation import parse_config
    from tests.conftest import jack_name

    folder = tmp_path_factory.mktemp("truth")
    (folder / "startup.scd").write_text(STARTUP)
    text = (f'state_dir = "{folder / "state"}"\n[audio]\n'
            f'driver = "dummy"\njack_server = "{jack_name("truth")}"\n'
            "[midi]\nenabled = false\n" + ROOM.format(startup=folder / "startup.scd") + WATCHDOG)
    orch = Orchestra(parse_config(text, folder / "config.toml"), library)  # type: ignore[arg-type]
    try:
        assert orch.start() == {"room": None}
        yield orch
    finally:
        orch.stop()


@pytest.fixture(scope="module")
def bare(room: Orchestra, tmp_path_factory: pytest.TempPathFactory,
         library: SynthDefLibrary) -> Iterator[BareSclang]:
    """A plain sclang, fed as the IDE feeds it, on its own scsynth beside the room's."""
    from tests.conftest import jack_name

    defs = tmp_path_factory.mktemp("bare-defs")
    (defs / "sine.scsyndef").write_bytes(library.compiled("sine"))
    server = Scsynth(jack_name("truth"), defs, "bare")
    try:
        sclang = BareSclang(server.port, "room")
        try:
            yield sclang
        finally:
            sclang.close()
    finally:
        server.close()


def agrees(room: Orchestra, bare: BareSclang, code: str) -> ExecuteResult:
    """Run ``code`` on both sides; assert that execute tells what the bare sclang printed."""
    printed = bare.run(code)
    assert printed is not None, "the bare sclang did not finish"
    result = run(room, code)
    verdict = compare(Unit("case", code), [printed], result, late=[])
    assert verdict.same, f"{verdict.reason}\nbare sclang printed:\n{printed}"
    return result


def run(orch: Orchestra, code: str, timeout: float = 10.0) -> ExecuteResult:
    return orch.rooms.execute_one("room", code, timeout)


def value(orch: Orchestra, code: str) -> str | None:
    result = run(orch, code)
    assert result.ok, result.error
    return result.value


# --- 1-6: values, posts and errors --------------------------------------------------


def test_output_posted_after_the_value_goes_to_the_console_marked(room: Orchestra) -> None:
    for _ in range(10):  # the race this used to lose half the time
        result = run(room, 'fork { "from-a-routine".postln }; 5')
        assert result.ok and result.value == "5" and result.posted == ()
    lines = room.rooms.wait_for("room", "from-a-routine", 5.0, since=0)
    assert lines is not None
    marked = [line for line in room.rooms.console("room", 200) if line.text == "from-a-routine"]
    assert marked and all(line.note.startswith("after #") for line in marked)
    routine = run(room, "r = Routine { 0.yield; 1.yield }; r")
    assert routine.value == "a Routine"


def test_a_partial_line_before_the_value_is_kept_and_the_value_too(room: Orchestra) -> None:
    result = run(room, '"abc".post; 5')
    assert result.ok and result.value == "5" and result.posted == ("abc",)


def test_a_routine_failing_later_is_not_the_codes_error(room: Orchestra) -> None:
    result = run(room, "fork { 0.05.wait; nil.foo }; 5")
    assert result.ok and result.value == "5"
    error_line = room.rooms.wait_for("room", "not understood", 5.0, since=result.console_since)
    assert error_line is not None and error_line.note.startswith("error after #")
    fake = run(room, '"ERROR: fake".postln; 3')
    assert fake.ok and fake.value == "3" and fake.posted == ("ERROR: fake",)


def test_an_error_in_a_routine_started_at_once_is_told_as_left_running(room: Orchestra) -> None:
    result = run(room, "fork { nil.foo }; 5")
    assert result.ok and result.value == "5"
    if result.late is not None:  # the routine ran before the request closed
        assert "failed: Message 'foo' not understood" in result.late


def test_the_receiver_is_one_line_and_the_protected_stack_apart(room: Orchestra) -> None:
    result = run(room, r"protect { [1, 2, 3].put(\a, 1) } { }")
    error = result.error
    assert not result.ok and error is not None and error.kind == "runtime"
    assert error.receiver == "Array [ 1, 2, 3 ]"
    assert "Index not an Integer" in error.message
    assert "PROTECTED" not in (error.receiver or "")
    assert error.error_class == "PrimitiveFailedError"


def test_a_code_line_starting_with_a_tab_is_never_a_frame(room: Orchestra) -> None:
    result = run(room, "(\n\tvar a = 1;\n\ta + 1;\n\tnil.foo;\n\t2\n)")
    error = result.error
    assert error is not None and error.message.startswith("Message 'foo' not understood.")
    assert not any("var a = 1" in frame for frame in error.library_frames)
    assert all(frame.startswith("{") or ":" in frame
               for frame in (*error.call_stack, *error.library_frames))


def test_arrows_and_trailing_newlines_are_kept(room: Orchestra) -> None:
    arrow = run(room, '"-> hello".postln; 6')
    assert arrow.value == "6" and arrow.posted == ("-> hello",)
    assert value(room, '"two lines\\n"') == "two lines\n"


@pytest.mark.parametrize("code", [
    '"@@scorch:abc:end:2@@ok".postln; 9',
    'thisProcess.interpreter.preProcessor = { |c| c }; 9',
    '"@@scorch-deadbeef-end-1@@".postln; 9',
])
def test_marker_like_text_and_a_preprocessor_do_not_confuse_the_framing(
        room: Orchestra, code: str) -> None:
    assert value(room, code) == "9"
    assert value(room, "thisProcess.interpreter.preProcessor = nil; 10") == "10"


def test_a_megabyte_of_posts_is_bounded_and_the_request_still_ends(room: Orchestra) -> None:
    result = run(room, "1000.do { String.fill(999, $a).postln }; 77", timeout=30)
    assert result.ok and result.value == "77"
    assert any("bytes not kept" in line for line in result.posted)
    assert sum(len(line) for line in result.posted) < 200_000


def test_a_parse_error_keeps_line_char_and_caret(room: Orchestra) -> None:
    result = run(room, "(\nvar x = 1;\nx = x + ) 3;\n)")
    error = result.error
    assert error is not None and error.kind == "parse" and (error.line, error.char) == (3, 9)
    assert error.context.splitlines()[-1].endswith("^")


def test_check_only_compiles_and_runs_nothing(room: Orchestra) -> None:
    ok = room.rooms.execute("room", '~ran = "yes"; 1', 5.0, check_only=True)[0]
    assert ok.ok and ok.value is None
    assert value(room, "~ran") == "nil"
    bad = room.rooms.execute("room", "1 + ) 2", 5.0, check_only=True)[0]
    assert bad.error is not None and bad.error.kind == "parse" and bad.error.line == 1


def test_a_failing_preprocessor_under_check_only_shows_no_frame_of_scorchs(
        room: Orchestra) -> None:
    run(room, 'thisProcess.interpreter.preProcessor = { |code| if(code == "1") { nil.foo }; '
              'code }; 1')
    try:
        failed = room.rooms.execute("room", "1", 5.0, check_only=True)[0]
        error = failed.error
        assert error is not None and error.kind == "runtime", error
        assert "foo" in error.message
        frames = error.call_stack + error.library_frames
        assert not any("Scorch" in frame or "Interpreter" in frame for frame in frames), frames
        assert len(error.call_stack) == 1, error.call_stack  # the preprocessor's function
    finally:
        run(room, "thisProcess.interpreter.preProcessor = nil")


def test_a_top_level_return_ends_the_request_as_aborted(room: Orchestra) -> None:
    result = run(room, "{ |a| ^a }.value(1); ^2")
    assert not result.ok and result.error is not None and result.error.kind == "aborted"
    assert value(room, "1 + 1") == "2"  # and the next request is fine


@pytest.mark.parametrize("code", ["/*", "1 + 1 /* an open comment", '"abc" /*'])
def test_what_the_compiler_says_is_posted_where_sclang_prints_it(
        room: Orchestra, bare: BareSclang, code: str) -> None:
    result = agrees(room, bare, code)
    assert result.warnings and result.warnings[0].startswith("Open ended comment")


def test_a_parse_error_after_a_compiler_warning_agrees(room: Orchestra, bare: BareSclang) -> None:
    result = agrees(room, bare, "(\nvar x; x = 3;\n/* never closed")
    assert result.error is not None and result.error.kind == "parse"
    assert result.posted == ("Open ended comment started on line 3 of interpreted text",)


def test_what_the_users_preprocessor_posts_is_the_requests(
        room: Orchestra, bare: BareSclang) -> None:
    install = 'thisProcess.interpreter.preProcessor = { |code| "preprocessed".postln; code }; 1'
    try:
        agrees(room, bare, install)
        assert agrees(room, bare, '"from the code".postln; 2').posted == (
            "preprocessed", "from the code")
        assert agrees(room, bare, "3 /* open").posted[:2] == (
            "preprocessed", "Open ended comment started on line 1 of interpreted text")
    finally:
        bare.run("thisProcess.interpreter.preProcessor = nil")
        run(room, "thisProcess.interpreter.preProcessor = nil")


def test_a_routine_that_holds_sclang_after_the_code_returned_leaves_the_value(
        room: Orchestra, bare: BareSclang) -> None:
    """sclang prints the value, then may run the routine before reading its next input.

    Whether the routine or the next chunk of input comes first is sclang's own race:
    about half the time each with realtime scheduling; without it the input's thread
    takes the lock again nearly every time (1 try in 14 to 20). Both outcomes must tell
    the value; the stuck one must come up where it can (a skip says when it did not).
    """
    # The interpreter spins 50 ms after the fork: the routine's thread is then waiting for
    # sclang's lock when the code returns (without realtime priority it may not be awake
    # yet). The routine spins longer than the room's answer waits (0.6 s of the 0.8 s
    # timeout): each try costs two spins, about 2.4 s.
    code = ("fork { var t = Main.elapsedTime; while { Main.elapsedTime - t < 1.2 } { } }; "
            "{ var t = Main.elapsedTime; while { Main.elapsedTime - t < 0.05 } { } }.value; "
            '"returned".postln; 5')
    tries = 20 if realtime_granted() else 12
    for attempt in range(tries):
        printed = bare.run(code)
        assert printed is not None
        # sclang runs routines on a realtime thread (as root here): two spinning at once
        # would take both cores and starve this test of the CPU. Let the bare one finish.
        assert bare.run("nil", timeout=10.0) is not None
        result = run(room, code, timeout=0.8)  # answered 0.2 s before
        verdict = compare(Unit("case", code), [printed], result, late=[])
        assert verdict.same, f"{verdict.reason}\nbare sclang printed:\n{printed}"
        assert result.ok and result.value == "5" and result.posted == ("returned",)
        assert value(room, "6") == "6"  # sclang is free again, and the room goes on
        if result.late is not None and "stayed busy" in result.late:
            print(f"the routine held sclang on try {attempt + 1}")
            return
    assert not realtime_granted(), f"the routine never beat the closing chunk in {tries} tries"
    missing(f"realtime scheduling (CI has it): without, the routine never took sclang's lock "
            f"first in {tries} tries; each value was right, the stuck outcome unchecked")


# --- 7: sclang stays registered with its scsynth --------------------------------------


def counting(room: Orchestra) -> Callable[[], int]:
    """An OSCFunc on /tr, fed by the startup's SendReply synth; returns a reader."""
    assert value(room, "~trs = 0; OSCFunc({ ~trs = ~trs + 1 }, '/tr'); 1") == "1"

    def count() -> int:
        return int(value(room, "~trs") or 0)

    return count


def responding(count: Callable[[], int], seconds: float = 5.0) -> bool:
    before = count()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.1)
        if count() > before + 3:
            return True
    return False


def restored_after(room: Orchestra, act: Callable[[], object]) -> None:
    since = room.views["room"].events.mark()
    act()
    event = room.views["room"].events.wait_for((Kind.RESTORED, Kind.FAILED), since, 20.0)
    assert event is not None and event.kind == Kind.RESTORED, room.rooms.events("room")


@pytest.mark.parametrize("how", ["sigkill", "s.reboot"])
def test_responders_watchers_and_restored_nodes_follow_a_restart(
        room: Orchestra, how: str) -> None:
    count = counting(room)
    assert responding(count)
    hum = room.rooms.nodes("room")["hum"].node_id
    assert value(room, f"~hum = Synth.basicNew(\\sine, s, {hum}); "
                       "NodeWatcher.register(~hum, true); ~w = Synth(\\sine, [\\amp, 0]); "
                       "NodeWatcher.register(~w, true); [~hum.isPlaying, ~w.isPlaying]"
                 ) in ("[ true, true ]", "[ false, true ]")
    pid = room.rooms.status("room").pids["scsynth"]
    if how == "sigkill":
        restored_after(room, lambda: os.kill(pid, signal.SIGKILL))
    else:
        restored_after(room, lambda: run(room, "s.reboot; 1"))
    assert room.rooms.status("room").pids["scsynth"] != pid
    assert room.rooms.status("room").state == "READY"
    assert responding(count), "OSCFunc('/tr') stopped hearing SendReply"
    deadline = time.monotonic() + 5
    while value(room, "[~hum.isPlaying, ~w.isPlaying, s.serverRunning]") != \
            "[ true, false, true ]":
        assert time.monotonic() < deadline, value(room, "[~hum.isPlaying, ~w.isPlaying]")
        time.sleep(0.05)
    synced = run(room, "~synced = false; fork { s.sync; ~synced = true }; 5")
    assert synced.value == "5"
    deadline = time.monotonic() + 5
    while value(room, "~synced") != "true":
        assert time.monotonic() < deadline, "s.sync never returned"
        time.sleep(0.05)
    new = run(room, "x = Synth(\\sine, [\\amp, 0]); x.nodeID > 1000")
    assert new.value == "true"
    run(room, "x.free; ~w.free; 1")


def test_s_quit_in_code_is_refused_and_the_room_plays_on(room: Orchestra) -> None:
    pid = room.rooms.status("room").pids["scsynth"]
    result = run(room, "s.quit; 3")
    assert result.ok and result.value == "3"
    assert any("s.quit refused" in line for line in result.posted)
    assert value(room, "s.serverRunning") == "true"
    assert room.rooms.status("room").pids["scsynth"] == pid
    assert any(e.kind == Kind.SERVER_REQUEST and "quit" in e.message
               for e in room.rooms.events("room"))


def test_exit_is_refused_every_time_and_the_kill_of_every_server_is_scorchs(
        room: Orchestra) -> None:
    pids = room.rooms.status("room").pids
    for _ in range(6):
        assert value(room, "0.exit; 4") == "4"
    assert room.rooms.status("room").pids == pids
    assert room.rooms.status("room").state == "READY"
    # The class library's kill of every scsynth on the machine goes by process name: a
    # test never calls it (were the guard missing, it would end other tests' servers).
    # Its definition is scorch's refusal (SystemOverwrites/ScorchOverwrites.sc), the one
    # class method of Server that scorch replaces.
    replaced = value(room, 'Meta_Server.methods.select { |m| m.filenameSymbol.asString'
                           '.endsWith("SystemOverwrites/ScorchOverwrites.sc") }'
                           '.collect { |m| m.argNames.size }')
    assert replaced == "[ 1 ]"  # one method, no argument but the class


def test_a_raw_quit_is_a_crash_that_responders_survive(room: Orchestra) -> None:
    """/quit over OSC from code cannot be intercepted: scsynth ends, and comes back."""
    count = counting(room)
    pid = room.rooms.status("room").pids["scsynth"]
    restored_after(room, lambda: run(room, 's.sendMsg("/quit"); 1'))
    assert room.rooms.status("room").pids["scsynth"] != pid
    assert responding(count), "OSCFunc('/tr') stopped hearing SendReply"
    assert value(room, "s.serverRunning") == "true"


# --- 9: calls during a restore wait for it ---------------------------------------------


def test_calls_during_a_restore_wait_for_it(room: Orchestra) -> None:
    pid = room.rooms.status("room").pids["scsynth"]
    since = room.views["room"].events.mark()
    os.kill(pid, signal.SIGKILL)
    assert room.views["room"].events.wait_for(Kind.CRASHED, since, 5.0) is not None
    result = run(room, "s.serverRunning")  # arrives while scsynth is restored
    assert result.ok and result.value == "true", result.error
    stopped = room.rooms.stop_sound("room")
    assert list(stopped) == ["room"] and stopped["room"].nodes == ("hum",)
    room.rooms.play("room", "sine", {"freq": 330, "amp": 0.001}, "hum")  # back for later tests


# --- a failing sclang never stops a healthy scsynth --------------------------------------


def test_an_sclang_that_keeps_dying_leaves_the_room_degraded_and_sounding(
        make_config: MakeConfig, start_orchestra: Callable[[Config], Orchestra],
        tmp_path: Path) -> None:
    orch = start_orchestra(make_config(
        "[midi]\nenabled = false\n[instances.solo]\nsynthdefs = [\"sine\"]\n"
        "[instances.solo.nodes.hum]\nsynthdef = \"sine\"\nparams = { amp = 0.001 }\n",
        watchdog=WATCHDOG.replace("max_restarts = 3", "max_restarts = 2"), tag="degraded"))
    scsynth = orch.rooms.status("solo").pids["scsynth"]
    view = orch.views["solo"]
    deadline = time.monotonic() + 30
    while view.snapshot.state != "DEGRADED":
        assert time.monotonic() < deadline, orch.rooms.events("solo")
        pid = view.snapshot.sclang_pid
        if pid:
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
    assert orch.rooms.status("solo").pids["scsynth"] == scsynth
    osc = orch.doors[view.name].scsynth
    assert osc is not None and node_exists(osc, orch.rooms.nodes("solo")["hum"].node_id)
    failed = orch.rooms.execute_one("solo", "1")
    assert failed.error is not None and "instance restart" in failed.error.message
    orch.rooms.set("solo", "hum", {"freq": 440.0})  # the sound is still playable
    orch.rooms.restart("solo")
    assert orch.rooms.status("solo").state == "READY"
    assert orch.rooms.execute_one("solo", "2 + 2").value == "4"


def test_a_recompile_in_code_installs_the_evaluator_and_attaches_again(room: Orchestra) -> None:
    since = room.views["room"].events.mark()
    assert value(room, "thisProcess.recompile; 12") == "12"
    event = room.views["room"].events.wait_for(Kind.RESTORED, since, 30.0)
    assert event is not None and "recompiled" in event.message
    assert value(room, "[s.class, s.serverRunning]") == "[ class ScorchServer, true ]"
    assert value(room, "1 + 1") == "2"
