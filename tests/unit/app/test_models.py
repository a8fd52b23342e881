"""An instance's status is built once from its snapshot and rendered as that model."""

from __future__ import annotations

import time
from dataclasses import replace

from scorch.api.status_text import describe, render
from scorch.app.models import RoomRow, RoomStatus
from scorch.primitives.scsynth.client import ServerStatus
from scorch.state.desired import NodeState
from scorch.state.events import State
from scorch.state.view import STARTING, Snapshot

SERVER = ServerStatus(ugens=12, synths=2, groups=3, synthdefs=40, avg_cpu=3.25, peak_cpu=7.5,
                      nominal_sample_rate=48000.0, actual_sample_rate=48000.1)


def ready() -> Snapshot:
    """A room READY for 65 s, restarted once."""
    return Snapshot("lobby", "ground", state=State.READY, since=1000.0, port=57110,
                    lang_port=57120, scsynth_pid=11, sclang_pid=12, sclang_state="ready",
                    booted_at=time.time() - 65, restarts_in_window=1, restart_budget_left=4,
                    nodes=("drone",), sclang_restarts=1)


def test_a_ready_room_status_carries_its_server_nodes_and_uptime() -> None:
    nodes = {"drone": NodeState("drone", "sine", 1001, {"freq": 220.0})}
    status = RoomStatus.of(ready(), nodes, SERVER, host="lobby-pi")
    assert status.state == "READY" and status.host == "lobby-pi"
    assert status.pids == {"scsynth": 11, "sclang": 12}
    assert status.server is not None and status.server.synths == 2
    assert status.nodes["drone"].node_id == 1001 and status.nodes["drone"].params == {
        "freq": 220.0}
    assert status.uptime is not None and 64 < status.uptime < 70
    assert status.reason is None and status.last_crash is None


def test_a_room_not_ready_has_no_uptime_and_says_why() -> None:
    snap = replace(ready(), state=State.FAILED, reason="5 restarts within 60 s",
                   last_crash="SIGKILL")
    status = RoomStatus.of(snap, {}, None, host=None)
    assert status.uptime is None and status.server is None
    assert status.reason == "5 restarts within 60 s" and status.last_crash == "SIGKILL"


def test_the_row_and_the_text_come_from_the_same_status() -> None:
    nodes = {"drone": NodeState("drone", "sine", 1001, {"freq": 220.0})}
    status = RoomStatus.of(ready(), nodes, SERVER, host=None)
    row = RoomRow.of(status)
    assert (row.cpu, row.synths, row.restarts, row.nodes) == (3.25, 2, 1, ["drone"])
    assert render([row]).splitlines()[2].split() == [
        "lobby", "ground", "READY", "57110", "3.2", "2", "sclang", "1"]
    text = describe(status)
    assert "lobby  READY since" in text and "(up 1m 0" in text
    assert "cpu 3.2 % (peak 7.5)  synths 2  ugens 12" in text
    assert "node drone (sine #1001): freq 220" in text


def test_restarts_say_which_process_restarted_how_often() -> None:
    snap = replace(ready(), scsynth_restarts=2, sclang_restarts=3, restarts_in_window=4)
    status = RoomStatus.of(snap, {}, SERVER, host=None)
    assert status.restarts_by == {"scsynth": 2, "sclang": 3}
    assert RoomRow.of(status).restarts_by == {"scsynth": 2, "sclang": 3}
    assert "scsynth 2, sclang 3" in render([RoomRow.of(status)])
    assert "  restarts: scsynth 2, sclang 3 (4 in the window, 4 left)" in describe(status)
    never = RoomStatus.of(replace(ready(), sclang_restarts=0), {}, SERVER, host=None)
    assert "restarts: 0 (1 in the window" in describe(never)


def test_a_booting_room_says_its_phase_where_it_would_say_scorch_is_starting() -> None:
    starting = replace(ready(), state=State.BOOTING, reason=STARTING, scsynth_pid=None,
                       sclang_state="down")
    phases = [
        (starting, STARTING),
        (replace(starting, reason=""), "starting scsynth"),
        (replace(starting, reason="", scsynth_pid=11, sclang_state="starting"),
         "scsynth up, sclang starting"),
        (replace(starting, reason="", scsynth_pid=11, sclang_state="ready"),
         "scsynth and sclang up, restoring its SynthDefs, buffers and nodes"),
        (replace(starting, state=State.RESTARTING, reason="scsynth killed by SIGKILL"),
         "starting scsynth; scsynth killed by SIGKILL"),
    ]
    for snap, phase in phases:
        row = RoomRow.of(RoomStatus.of(snap, {}, None, host=None))
        assert row.reason == phase
        assert f"{snap.state} ({phase})" in render([row])
