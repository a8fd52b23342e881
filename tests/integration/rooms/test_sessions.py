"""Sessions: their files read back with located errors, and real rooms.

The file format is read against the repo's SynthDef library (the diff is in
tests/unit/state/test_session.py, TOML values in tests/unit/app/test_sessions.py);
then a real orchestra saves, changes and loads a session (values read from scsynth
itself), and a `scorch run` killed with SIGKILL comes back from its autosave with --resume.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.app.sessions import Reading, parse, render
from scorch.config.installation import Config, parse_config
from scorch.errors import SessionFileError, SessionNotFound
from scorch.primitives.scsynth.client import OscClient
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.primitives.system.process import DIE_WITH_PARENT
from scorch.state.desired import PERSISTENT_NODE_BASE, SAMPLE_BUFFER_BASE
from scorch.state.session import BufferSpec, NodeSpec, RoomSpec, Session
from tests.conftest import MakeConfig, jack_name, node_param, pid_alive, scsynth_param
from tests.support.processes import children
from tests.support.shm.cleanup import release
from tests.support.shm.scan import mapped_by

Start = Callable[[Config], Orchestra]


def room(nodes: dict[str, NodeSpec] | None = None,
         buffers: dict[str, BufferSpec] | None = None) -> RoomSpec:
    return RoomSpec(nodes=nodes or {}, buffers=buffers or {})


# --- the file -------------------------------------------------------------------------------


@pytest.fixture
def reading(tmp_path: Path, library: SynthDefLibrary) -> Reading:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "kick.wav").write_bytes(b"RIFF")
    config = parse_config(textwrap.dedent(f"""
        [instances.lobby]
        [instances.attic]
        [samples]
        paths = ["{tmp_path / 's'}"]
        """), tmp_path / "config.toml")
    return Reading(config, library)


def test_a_session_written_reads_back_as_itself(reading: Reading, tmp_path: Path) -> None:
    session = Session(
        {"lobby": room({"drone": NodeSpec("sine", {"freq": 110.0, "amp": 0.125})},
                       {"kick": BufferSpec(str(tmp_path / "s" / "kick.wav"), 770)}),
         "attic": room()},
        tempos={"": 96.5},
        routes=({"id": "knob", "type": "control", "port": "*", "instance": "lobby", "cc": 74,
                 "node": "drone", "param": "freq", "range": [100.0, 800.0], "curve": "exp",
                 "takeover": "pickup", "pitchbend": False, "aftertouch": False,
                 "hires": False, "step": 1 / 127},))
    text = render(session, "evening")
    assert 'params = {freq = 110.0, amp = 0.125}' in text
    assert text.startswith("# scorch session 'evening'")
    again = parse(text, tmp_path / "evening.toml", reading)
    assert again.rooms == session.rooms
    assert again.tempos == {"": 96.5}
    assert [dict(r) for r in again.routes] == [dict(r) for r in session.routes]


#: A version 2 session as scorch wrote it by hand, before tomlkit wrote them (a route's
#: keys in the order sessions keep them).
WRITTEN_BY_HAND = """\
# scorch session 'evening': the desired state of every room.
# Edit it by hand if you like: `scorch session diff NAME` shows what loading it
# would change, and a mistake is reported with its line before anything changes.
version = 2
saved_at = "2025-11-24T16:00:00Z"

[tempo]
bpm = 96.5

[rooms.lobby.buffers.kick]
path = "SAMPLES/kick.wav"
bufnum = 770

[rooms.lobby.nodes.drone]
synthdef = "sine"
params = { freq = 110.0, amp = 0.125 }

[rooms.attic]

[[midi.routes]]
id = "knob"
type = "control"
port = "nano \\"K2\\" \\\\ \\u007f"
instance = "lobby"
cc = 74
pitchbend = false
aftertouch = false
hires = false
step = 0.007874015748031496
node = "drone"
param = "freq"
range = [100.0, 800.0]
curve = "exp"
takeover = "pickup"
"""


def test_a_session_the_hand_writer_wrote_loads_and_is_written_again_alike(
        reading: Reading, tmp_path: Path) -> None:
    old = WRITTEN_BY_HAND.replace("SAMPLES", str(tmp_path / "s"))
    session = parse(old, tmp_path / "evening.toml", reading)
    assert session.rooms["lobby"].nodes["drone"] == NodeSpec(
        "sine", {"freq": 110.0, "amp": 0.125}, None, None)  # version 2 kept no places
    assert session.rooms["lobby"].buffers["kick"].bufnum == 770
    assert session.rooms["attic"] == room()
    assert session.tempos == {"": 96.5}
    assert session.routes[0]["port"] == 'nano "K2" \\ \x7f'
    again = render(session, "evening", saved_at=1764000000.0)
    back = parse(again, tmp_path / "again.toml", reading)
    assert back.rooms["lobby"].nodes["drone"].add_action == "tail"  # written as version 3
    assert back.routes == session.routes and back.tempos == session.tempos
    assert render(back, "evening", saved_at=1764000000.0) == again
    # The same lines, but for the spaces tomlkit leaves out inside an inline table.
    assert again == old.replace("{ freq = 110.0, amp = 0.125 }", "{freq = 110.0, amp = 0.125}"
                                ).replace("version = 2", "version = 3")


def _located(text: str, reading: Reading, tmp_path: Path) -> str:
    with pytest.raises(SessionFileError) as caught:
        parse(textwrap.dedent(text), tmp_path / "x.toml", reading)
    return str(caught.value)


HEAD = "version = 1\n"


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("version = 1\n[rooms.lobby\n", ["x.toml: invalid TOML", "line 2"],
                 id="not-toml"),
    pytest.param("version = 4\n", ["x.toml:1: version", "1, 2 or 3"], id="version"),
    pytest.param(HEAD + "[tempo]\nbpm = 5\n", ["x.toml:3: tempo.bpm", "greater than or equal "
                                              "to 20"], id="tempo-slow"),
    pytest.param(HEAD + "[tempo.groups.ground]\nbpm = 90\n",
                 ["x.toml:2: tempo.groups.ground: group 'ground' has no tempo of its own"],
                 id="tempo-group"),
    pytest.param("[rooms.lobby]\n", ["version: this key is required"], id="no-version"),
    pytest.param(HEAD + "[rooms.kitchen]\n",
                 ["x.toml:2: rooms.kitchen: no room 'kitchen'", "lobby, attic"],
                 id="unknown-room"),
    pytest.param(HEAD + '[rooms.lobby.nodes.pad]\nsynthdef = "sinus"\n',
                 ["x.toml:3: rooms.lobby.nodes.pad.synthdef", "unknown SynthDef 'sinus'"],
                 id="unknown-synthdef"),
    pytest.param(HEAD + '[rooms.lobby.nodes.pad]\nsynthdef = "sine"\n'
                 "params = { freq = 1, fre = 2 }\n",
                 ["x.toml:4: rooms.lobby.nodes.pad.params.fre", "no param 'fre'"],
                 id="unknown-param"),
    pytest.param(HEAD + '[rooms.lobby.nodes.pad]\nsynthdef = "sine"\nparams = { freq = "a" }\n',
                 ["x.toml:4: rooms.lobby.nodes.pad.params.freq", "valid number"],
                 id="param-not-number"),
    pytest.param(HEAD + '[rooms.lobby.nodes.pad]\nsynthdef = "sine"\nparams = { freq = 1e39 }\n',
                 ["x.toml:4", "float32"], id="param-beyond-float32"),
    pytest.param(HEAD + '[rooms.lobby.nodes.pad]\nsynthdef = "sine"\nsynth = "x"\n',
                 ["x.toml:4: rooms.lobby.nodes.pad.synth: unknown key"], id="unknown-key"),
    pytest.param(HEAD + '[rooms.lobby.buffers.k]\npath = "kick.wav"\nbufnum = 12\n',
                 ["x.toml:4: rooms.lobby.buffers.k.bufnum", "greater than or equal to 768"],
                 id="bufnum-low"),
    pytest.param(HEAD + '[rooms.lobby.buffers.k]\npath = "kick.wav"\nbufnum = 768\n'
                 '[rooms.lobby.buffers.j]\npath = "kick.wav"\nbufnum = 768\n',
                 ["x.toml:7: rooms.lobby.buffers.j.bufnum", "also buffer 'k'"],
                 id="bufnum-twice"),
    pytest.param(HEAD + '[rooms.lobby.buffers.k]\npath = "gone.wav"\nbufnum = 768\n',
                 ["x.toml:3: rooms.lobby.buffers.k.path", "no sound file 'gone.wav'"],
                 id="sample-missing"),
    pytest.param(HEAD + '[[midi.routes]]\nid = "a"\ntype = "control"\ninstance = "lobby"\n'
                 'cc = 300\nnode = "pad"\nparam = "amp"\n',
                 ["x.toml:6: midi.routes.0.cc", "less than or equal to 127"], id="route-cc"),
    pytest.param(HEAD + '[[midi.routes]]\nid = "a"\ntype = "knob"\n',
                 ["x.toml:4: midi.routes.0.type",
                  "expected 'control', 'key', 'page' or 'cue', found 'knob'"], id="route-type"),
    pytest.param(HEAD + '[[midi.routes]]\nid = "a"\ntype = "key"\ninstance = "cellar"\n'
                 'synthdef = "sine"\n',
                 ["x.toml:5: midi.routes.0.instance", "no room or group named 'cellar'"],
                 id="route-instance"),
])
def test_a_bad_session_file_names_line_key_and_problem(
        text: str, expected: list[str], reading: Reading, tmp_path: Path) -> None:
    message = _located(text, reading, tmp_path)
    for part in expected:
        assert part in message, f"{part!r} not in:\n{message}"


def test_every_problem_of_a_file_is_listed_at_once(reading: Reading, tmp_path: Path) -> None:
    message = _located(HEAD + "[rooms.kitchen]\n[rooms.lobby.nodes.a]\nsynthdef = \"nope\"\n",
                       reading, tmp_path)
    assert "x.toml:2: rooms.kitchen" in message and "x.toml:4: rooms.lobby.nodes.a" in message


def test_a_resume_leaves_out_what_the_installation_no_longer_has(
        reading: Reading, tmp_path: Path) -> None:
    text = HEAD + textwrap.dedent("""
        [tempo]
        bpm = 96
        [tempo.groups.gone]
        bpm = 90
        [rooms.kitchen.nodes.pad]
        synthdef = "sine"
        [rooms.lobby.nodes.drone]
        synthdef = "sine"
        params = { freq = 110, fre = 2 }
        [rooms.lobby.nodes.old]
        synthdef = "sinus"
        [rooms.lobby.buffers.k]
        path = "kick.wav"
        bufnum = 768
        [rooms.lobby.buffers.j]
        path = "kick.wav"
        bufnum = 768
        """)
    with pytest.raises(SessionFileError):  # a session load is strict
        parse(text, tmp_path / "x.toml", reading)
    resume = Reading(reading.config, reading.library, resume=True)
    session = parse(text, tmp_path / "x.toml", resume)
    assert session.rooms == {"lobby": room({"drone": NodeSpec("sine", {"freq": 110.0}, None,
                                                              None)},  # version 1: no places
                                           {"k": BufferSpec("kick.wav", 768)})}
    assert session.tempos == {"": 96.0}


def test_an_unreadable_autosave_is_set_aside_and_the_installation_starts_anyway(
        tmp_path: Path) -> None:
    config = parse_config(f'state_dir = "{tmp_path / "state"}"\n[instances.lobby]\n',
                          tmp_path / "config.toml")
    orch = Orchestra(config)  # not started: reading the autosave needs no room
    folder = config.state_path() / "sessions"
    folder.mkdir(parents=True)
    (folder / "autosave.toml").write_text("version = 1\n[rooms.lobby\n")
    assert orch.sessions.autosaved() is None
    assert not (folder / "autosave.toml").exists()
    assert (folder / "autosave-unreadable.toml").read_text().startswith("version = 1")


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=300))
def test_any_text_is_a_session_or_a_session_file_error(text: str, reading: Reading,
                                                       tmp_path: Path) -> None:
    try:
        parse(HEAD + text, tmp_path / "x.toml", reading)
    except SessionFileError as err:
        assert str(err).startswith(str(tmp_path / "x.toml"))


# --- real rooms -------------------------------------------------------------------------------

ROOMS = """
[instances.lobby]
[instances.lobby.nodes.drone]
synthdef = "sine"
params = { freq = 220, amp = 0.01 }
[instances.attic]
"""


@pytest.mark.integration
def test_a_session_saved_changed_and_loaded_brings_the_params_back(
        make_config: MakeConfig, start_orchestra: Start) -> None:
    orch = start_orchestra(make_config(ROOMS, tag="sess", extra="[sessions]\nautosave = 0\n"))
    api = LocalService(orch)
    osc = orch.doors["lobby"].scsynth
    assert osc is not None
    drone = orch.rooms.nodes("lobby")["drone"].node_id

    saved = api.call("session", {"action": "save", "name": "evening"})
    path = Path(saved.path)  # type: ignore[attr-defined]
    assert path.parent == orch.config.state_path() / "sessions"
    assert 'params = {freq = 220.0, amp = 0.01}' in path.read_text()

    assert "[tempo]\nbpm = 120.0" in path.read_text()

    api.call("set", {"instance": "lobby", "node": "drone", "params": {"freq": 330, "pan": 0.5}})
    api.call("play", {"instance": "attic", "synthdef": "sine", "node": "hum",
                      "params": {"amp": 0.01}})
    api.call("tempo", {"bpm": 96.0})
    shown = api.call("session", {"action": "diff", "name": "evening"})
    assert [(c.action, c.instance, c.target) for c in shown.changes] == [  # type: ignore[attr-defined]
        ("set", "lobby", "drone"), ("release", "attic", "hum"), ("tempo", None, "installation")]
    assert "freq 330 -> 220" in shown.changes[0].detail  # type: ignore[attr-defined]
    assert node_param(osc, drone, "freq") == 330  # diff applied nothing
    assert orch.tempo.state()["bpm"] == 96.0

    loaded = api.call("session", {"action": "load", "name": "evening"})
    assert loaded.failure() is None and len(loaded.changes) == 3  # type: ignore[attr-defined]
    assert orch.tempo.state()["bpm"] == 120.0
    assert node_param(osc, drone, "freq") == 220  # the same node, set back
    assert node_param(osc, drone, "pan") == 0  # back to its default
    assert "hum" not in orch.rooms.nodes("attic")
    assert api.call("session", {"action": "diff", "name": "evening"}).changes == []  # type: ignore[attr-defined]
    listed = api.call("session", {"action": "list"}).sessions  # type: ignore[attr-defined]
    assert [s.name for s in listed] == ["evening"]

    # A hand edit with a mistake: the error names its line, and nothing is applied.
    path.write_text(path.read_text().replace("freq = 220.0", "freq = 440.0").replace(
        'synthdef = "sine"', 'synthdef = "sinus"'))
    api.call("set", {"instance": "lobby", "node": "drone", "params": {"freq": 330}})
    with pytest.raises(SessionFileError, match=r"evening\.toml:\d+: rooms\.lobby\.nodes\.drone"
                                               r"\.synthdef: unknown SynthDef 'sinus'"):
        api.call("session", {"action": "load", "name": "evening"})
    assert node_param(osc, drone, "freq") == 330
    with pytest.raises(SessionNotFound, match="saved sessions: evening"):
        api.call("session", {"action": "load", "name": "morning"})


def _run(config: Path, *extra: str) -> subprocess.Popen[str]:
    log = config.with_suffix(f".{len(list(config.parent.glob('*.log')))}.log")
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "scorch.cli.main", "run", "--config",
                                 str(config), *extra], stdout=subprocess.PIPE, stderr=err,
                                text=True, preexec_fn=DIE_WITH_PARENT, start_new_session=True)
    assert proc.stdout is not None
    head = "".join(proc.stdout.readline() for _ in range(3))
    assert "READY" in head, log.read_text()[-3000:]
    return proc


def _status(config: Path, room: str) -> dict[str, Any]:
    return _scorch(config, "status", room)["instances"][0]  # type: ignore[no-any-return, index]


def _scorch(config: Path, *args: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-m", "scorch.cli.main", *args, "--config",
                           str(config), "--json"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.integration
def test_resume_after_sigkill_of_scorch_run_restores_the_autosaved_state(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(textwrap.dedent(f"""
        state_dir = "{tmp_path / 'state'}"
        [audio]
        jack_server = "{jack_name('resume')}"
        [sessions]
        autosave = 0.2
        [samples]
        paths = ["{tmp_path}"]
        {ROOMS}
        [instances.attic.nodes.bell]
        synthdef = "sine"
        params = {{ amp = 0.01 }}
        """))
    autosave = tmp_path / "state" / "sessions" / "autosave.toml"
    sf.write(tmp_path / "tone.wav", np.zeros(4800), 48000, subtype="FLOAT")
    proc = _run(config)
    pids: list[int] = []
    try:
        _scorch(config, "set", "lobby", "drone", "--params", '{"freq": 330, "amp": 0.02}')
        _scorch(config, "play", "attic", "sine", "--node", "hum", "--params", '{"freq": 55}')
        _scorch(config, "release", "attic", "bell")
        _scorch(config, "buffer", "load", "attic", "tone.wav")
        deadline = time.monotonic() + 10
        while not (autosave.exists() and "tone.wav" in autosave.read_text()):
            assert time.monotonic() < deadline, "the autosave never held the new state"
            time.sleep(0.05)
        assert "freq = 330.0, amp = 0.02" in autosave.read_text()
        pids = children(proc.pid)  # jackd, and each room's scsynth and sclang
        assert len(pids) >= 5
        held = mapped_by([proc.pid, *pids])  # their segments: no one frees a killed one's
        os.killpg(proc.pid, signal.SIGKILL)  # scorch run and nothing else: its group
        proc.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(pid_alive(p) for p in pids):  # its children die with it (parent-death signal)
            assert time.monotonic() < deadline, "children outlived scorch run"
            time.sleep(0.05)
        release(held)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    proc = _run(config, "--resume")
    try:
        lobby, attic = _status(config, "lobby"), _status(config, "attic")
        drone, hum = lobby["nodes"]["drone"], attic["nodes"]["hum"]
        assert drone["params"] == {"freq": 330.0, "amp": 0.02}
        assert hum["synthdef"] == "sine" and set(attic["nodes"]) == {"hum"}
        # The rooms booted with the saved nodes: the released config node never started
        # (it would have taken the first id), and hum is the first node attic ever played.
        assert hum["node_id"] == PERSISTENT_NODE_BASE
        (buf,) = _scorch(config, "buffer", "list")["buffers"]  # type: ignore[misc]
        assert (buf["name"], buf["bufnum"], buf["frames"]) == ("tone", SAMPLE_BUFFER_BASE, 4800)
        osc = OscClient(attic["port"])
        try:  # scsynth read it again, under its bufnum
            info = osc.request("/b_query", SAMPLE_BUFFER_BASE, reply="/b_info", timeout=1.0)
            assert list(info.args)[:3] == [SAMPLE_BUFFER_BASE, 4800, 1]
        finally:
            osc.close()
        # and scsynth itself plays them so
        assert scsynth_param(lobby["port"], drone["node_id"], "freq") == 330
        assert scsynth_param(attic["port"], hum["node_id"], "freq") == 55
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0


@pytest.mark.integration
def test_the_state_is_autosaved_at_shutdown_even_without_an_interval(
        make_config: MakeConfig, start_orchestra: Start) -> None:
    orch = start_orchestra(make_config(ROOMS, tag="sess", extra="[sessions]\nautosave = 0\n"))
    autosave = orch.config.state_path() / "sessions" / "autosave.toml"
    orch.sessions.start_autosave()
    orch.rooms.set("lobby", "drone", {"freq": 275.5})
    assert not autosave.exists()  # no interval: nothing written while it runs
    orch.stop()
    assert "freq = 275.5" in autosave.read_text()
