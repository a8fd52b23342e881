"""The foundation against real jackd, scsynth and sclang: boot, run code, errors, timeouts."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.errors import RoomNotFound
from scorch.primitives.sclang.guard import guard_env
from scorch.primitives.sclang.launch import EarlySclang
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.state.events import Kind
from tests.conftest import (
    MakeConfig,
    jack_name,
    node_exists,
    node_param,
    orchestra_pids,
    pid_alive,
)
from tests.support.processes import terminate

pytestmark = pytest.mark.integration

# MIDI off: rtmidi picks its JACK server from the process environment, so only
# one orchestra per process may use JACK MIDI, and these tests overlap two.
THREE_ROOMS = """
state_dir = "{state}"
[audio]
driver = "dummy"
jack_server = "{jack}"
[midi]
enabled = false
[instances.lobby]
group = "ground"
synthdefs = ["sine"]
[instances.lobby.nodes.drone]
synthdef = "sine"
params = {{ freq = 220, amp = 0.05 }}
[instances.gallery]
group = "ground"
[instances.studio]
"""


@pytest.fixture(scope="module")
def three(
    tmp_path_factory: pytest.TempPathFactory, library: SynthDefLibrary
) -> Iterator[Orchestra]:
    tmp = tmp_path_factory.mktemp("rooms")
    text = THREE_ROOMS.format(state=tmp / "state", jack=jack_name("rooms"))
    orch = Orchestra(parse_config(text, tmp / "config.toml"), library)
    errors = orch.start()
    assert errors == {"lobby": None, "gallery": None, "studio": None}
    pids = orchestra_pids(orch)
    yield orch
    orch.stop()
    assert not [pid for pid in pids if pid_alive(pid)], "a process outlived stop()"


def node_running(orch: Orchestra, instance: str, node_id: int) -> bool:
    osc = orch.doors[instance].scsynth
    assert osc is not None
    return node_exists(osc, node_id)


def test_three_rooms_boot_in_parallel(three: Orchestra) -> None:
    events = three.rooms.events("*")
    first_ready = min(e.time for e in events if e.kind == Kind.READY)
    booting = [e for e in events if e.kind == Kind.BOOTING]
    assert len(booting) == 3
    # Every instance started booting before the first one was ready.
    assert all(e.time < first_ready for e in booting)
    assert [s.state for s in three.rooms.statuses()] == ["READY"] * 3


def test_code_runs_on_each_room_by_name(three: Orchestra) -> None:
    for name in three.rooms.names():
        result = three.rooms.execute_one(name, "s.name")
        assert result.ok, result.error
        assert result.value == name
        assert result.room == name


def test_group_and_star_address_several_rooms(three: Orchestra) -> None:
    assert [r.value for r in three.rooms.execute("ground", "s.name")] == ["lobby", "gallery"]
    assert [r.value for r in three.rooms.execute("*", "1 + 1")] == ["2", "2", "2"]


def test_posted_lines_and_value_come_back_separately(three: Orchestra) -> None:
    result = three.rooms.execute_one("studio", '"one".postln;\n"two".postln;\n3 * 4')
    assert result.ok and result.value == "12"
    assert result.posted == ("one", "two")


def test_multi_line_syntax_error_reports_line_and_char(three: Orchestra) -> None:
    code = "(\nvar freq = 440;\nvar amp = 0.1\nSinOsc.ar(freq) * amp;\n)"
    result = three.rooms.execute_one("gallery", code)
    assert not result.ok and result.error is not None
    assert result.error.kind == "parse"
    assert result.error.line == 4
    assert result.error.char is not None and result.error.char >= 1
    assert "4 | SinOsc.ar(freq) * amp;" in result.error.context
    assert "syntax error" in result.error.message


def test_runtime_error_reports_message_and_receiver(three: Orchestra) -> None:
    result = three.rooms.execute_one("studio", "var x = 7;\nx.fooBar(1)")
    assert not result.ok and result.error is not None
    assert result.error.kind == "runtime"
    assert result.error.message.startswith("Message 'fooBar' not understood.\nPerhaps")
    assert result.error.receiver == "Integer 7"


def test_unknown_room_is_a_clear_error_listing_known_names(three: Orchestra) -> None:
    with pytest.raises(RoomNotFound) as caught:
        three.rooms.execute("lobbby", "1")
    message = str(caught.value)
    assert "'lobbby'" in message and "lobby, gallery, studio" in message and "ground" in message


def test_status_reports_server_fields_pids_and_uptime(three: Orchestra) -> None:
    status = three.rooms.status("lobby")
    assert status.state == "READY"
    server = status.server
    assert server is not None
    assert server.synths >= 1 and server.synthdefs >= 1
    assert server.nominal_sample_rate == 48000.0
    assert pid_alive(status.pids["scsynth"]) and pid_alive(status.pids["sclang"])
    assert status.uptime is not None and status.uptime > 0
    assert list(status.nodes) == ["drone"]


def test_console_reads_last_lines_marks_and_waits(three: Orchestra) -> None:
    console = three.views["studio"].console
    mark = console.mark()
    three.rooms.execute_one("studio", '"console-marker-xyz".postln')
    lines = three.rooms.console("studio", since=mark)
    assert any("console-marker-xyz" in line.text for line in lines)
    three.rooms.execute_one("studio", 'fork { 0.2.wait; "late-line-42".postln }')
    assert three.rooms.wait_for("studio", r"late-line-\d+", timeout=5.0, since=mark) is not None
    assert three.rooms.wait_for("studio", "never-printed", timeout=0.2) is None


def test_infinite_loop_times_out_restarts_sclang_and_the_node_plays_on(three: Orchestra) -> None:
    node_id = three.rooms.nodes("lobby")["drone"].node_id
    old_sclang = three.rooms.status("lobby").pids["sclang"]
    result = three.rooms.execute_one("lobby", "inf.do { }", timeout=1.5)
    assert not result.ok and result.error is not None and result.error.kind == "timeout"
    assert "restarted" in result.error.message
    assert node_running(three, "lobby", node_id)
    after = three.rooms.execute_one("lobby", "s.name")  # waits behind the restart in the actor
    assert after.ok and after.value == "lobby"
    assert three.rooms.status("lobby").pids["sclang"] != old_sclang
    assert not pid_alive(old_sclang)
    assert node_running(three, "lobby", node_id)
    assert any(e.kind == Kind.SCLANG_RESTARTED for e in three.rooms.events("lobby"))


def test_busy_port_at_boot_is_a_clear_error_naming_the_port(
    tmp_path: Path, library: SynthDefLibrary
) -> None:
    blocker = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    blocker.bind(("127.0.0.1", 0))
    port = blocker.getsockname()[1]
    text = f"""
state_dir = "{tmp_path / 'state'}"
[audio]
driver = "dummy"
jack_server = "{jack_name('busy')}"
[midi]
enabled = false
[instances.taken]
port = {port}
[instances.fine]
"""
    orch = Orchestra(parse_config(text, tmp_path / "c.toml"), library)
    try:
        errors = orch.start()
        assert errors["fine"] is None
        assert errors["taken"] is not None
        assert f"UDP port {port} is already in use by pid {os.getpid()} (" in errors["taken"]
        assert "[instances.taken]" in errors["taken"]
        assert orch.rooms.status("taken").state == "FAILED"
        assert orch.rooms.status("fine").state == "READY"
    finally:
        orch.stop()
        blocker.close()


def test_play_set_release_named_node_on_scsynth(three: Orchestra) -> None:
    info = three.rooms.play("studio", "sine", {"freq": 330.0, "amp": 0.01}, node="lead")
    node_id = info["node_id"]
    assert node_running(three, "studio", node_id)
    three.rooms.set("studio", "lead", {"freq": 550.0})
    osc = three.doors["studio"].scsynth
    assert osc is not None
    assert node_param(osc, node_id, "freq") == pytest.approx(550.0)
    three.rooms.release("studio", "lead")
    assert "lead" not in three.rooms.nodes("studio")


def test_outputs_connect_to_the_playback_ports_each_room_names(
    tmp_path: Path, library: SynthDefLibrary
) -> None:
    server = jack_name("connect")
    text = f"""
state_dir = "{tmp_path / 'state'}"
[audio]
driver = "dummy"
jack_server = "{server}"
[midi]
enabled = false
[instances.lobby]
connect = ["system:playback_3", "system:playback_4"]
[instances.attic]
connect = ["system:playback_1", "system:playback_2"]
"""
    orch = Orchestra(parse_config(text, tmp_path / "c.toml"), library)
    try:
        assert orch.start() == {"lobby": None, "attic": None}
        listing = subprocess.run(["jack_lsp", "-s", server, "-c"], capture_output=True,
                                 text=True, timeout=10, check=True,
                                 env={**os.environ, "JACK_NO_START_SERVER": "1"}).stdout
    finally:
        orch.stop()
    connections: dict[str, list[str]] = {}
    port = ""
    for line in listing.splitlines():
        if line.startswith(" "):
            connections[port].append(line.strip())
        else:
            port = line.strip()
            connections[port] = []
    assert connections["scorch-lobby:out_1"] == ["system:playback_3"]
    assert connections["scorch-lobby:out_2"] == ["system:playback_4"]
    assert connections["scorch-attic:out_1"] == ["system:playback_1"]


def test_free_all_frees_every_node_and_forgets_the_named_ones(three: Orchestra) -> None:
    three.rooms.play("gallery", "sine", {"amp": 0.01}, node="pad")
    three.rooms.play("gallery", "sine", {"amp": 0.01})
    osc = three.doors["gallery"].scsynth
    assert osc is not None
    assert osc.status().synths >= 2
    assert three.rooms.free_all("gallery") == {"gallery": ["pad"]}
    assert osc.status().synths == 1  # the safety stage alone: it stays
    assert three.rooms.nodes("gallery") == {}
    assert three.rooms.execute_one("gallery", "1 + 1").value == "2"  # sclang untouched


def test_the_console_shows_what_sclang_printed_and_none_of_scorchs_protocol(
    three: Orchestra,
) -> None:
    mark = three.views["studio"].console.mark()
    three.rooms.execute_one("studio", '"visible line".postln; 42')
    # Let the watchdog ping sclang a few times (its interval is 0.25 s).
    assert three.rooms.wait_for("studio", "never-printed", timeout=1.0) is None
    lines = [line.text for line in three.rooms.console("studio", since=mark)]
    assert "visible line" in lines and "-> 42" in lines
    assert not [line for line in lines if "@@scorch" in line]


# --- rooms' first sclangs started early (``scorch run``'s boot) ----------------------

TWO_ROOMS = """
    [midi]
    enabled = false
    [instances.north]
    [instances.south]
    """


def test_each_room_boots_with_its_early_sclang_and_keeps_what_it_printed_before(
        make_config: MakeConfig, library: SynthDefLibrary) -> None:
    config = make_config(TWO_ROOMS, tag="early")
    # as `scorch run` starts them: with the environment naming the rooms' guard file
    guard = guard_env(config.source, config.host)
    early = {name: EarlySclang(extra_env=guard) for name in ("north", "south", "gone")}
    orch = Orchestra(config, library)
    pids: list[int] = []
    try:
        assert orch.start(early=early) == {"north": None, "south": None}
        pids = orchestra_pids(orch)
        for name in ("north", "south"):
            assert orch.rooms.pids()[f"{name}.sclang"] == early[name].process.pid
            # What it printed while nobody read its pipe is in the room's console.
            text = "\n".join(line.text for line in orch.rooms.console(name, lines=500))
            assert "compiling class library" in text and "Welcome to SuperCollider" in text
            assert orch.rooms.execute_one(name, "6 * 7").value == "42"
        # A room the config does not have: stopped when the boot was over.
        assert early["gone"].process.poll() is not None
    finally:
        orch.stop()
    assert not [pid for pid in pids if pid_alive(pid)], "a process outlived stop()"


def test_an_early_sclang_that_is_not_what_the_room_starts_is_stopped_and_not_taken() -> None:
    early = EarlySclang()
    assert early.waiting()
    assert early.take([*early.argv, "--other"], early.env) is None
    assert early.process.poll() is not None and not pid_alive(early.process.pid)
    assert early.take(early.argv, early.env) is None  # once: never the same process twice
    other = EarlySclang(extra_env={"SCORCH_EARLY_TEST": "1"})
    assert other.take(other.argv, {**other.env, "SCORCH_EARLY_TEST": "2"}) is None
    assert other.process.poll() is not None


def test_discard_stops_what_was_not_taken_and_leaves_what_was(tmp_path: Path) -> None:
    left = EarlySclang()
    left.discard()
    assert left.process.poll() is not None and left.process.stdout is not None
    assert left.process.stdout.closed
    taken = EarlySclang()
    process = taken.take(taken.argv, dict(taken.env))
    try:
        assert process is taken.process
        taken.discard()
        assert process.poll() is None and not taken.waiting()
    finally:
        terminate(process, timeout=5.0)
