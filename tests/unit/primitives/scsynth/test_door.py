"""The door to a room's scsynth, through a fake scsynth: no process, no socket.

The door forwards to the client its owner opened it on; shut, every call raises the
error the owner gives (the room's state); a caller that holds it across a restart
reaches the new scsynth; listeners outlive the scsynth they were set on.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from scorch.errors import Booting, OscFailure, OscTimeout, ScorchError
from scorch.primitives.osc import OscMessage
from scorch.primitives.scsynth import commands
from scorch.primitives.scsynth.client import OscClient
from scorch.primitives.scsynth.door import ScsynthDoor
from scorch.primitives.scsynth.fake import FakeScsynth, scsynth_answers


def restarting() -> ScorchError:
    return Booting("instance 'lobby' is RESTARTING")


def answers(msg: OscMessage) -> list[OscMessage]:
    """A scsynth with one synth (1000, sine, freq 440) under group 1."""
    if msg.address == "/g_queryTree":
        return [OscMessage("/g_queryTree.reply", (0, 0, 1, 1, 1, 1000, -1, "sine"))]
    if msg.address == "/s_get":
        if msg.args[0] != 1000:
            return [OscMessage("/fail", ("/s_get", "Node not found"))]
        return [OscMessage("/n_set", (1000, "freq", 440.0))]
    return scsynth_answers(msg)


@pytest.fixture
def fake() -> FakeScsynth:
    return FakeScsynth(answers)


@pytest.fixture
def client(fake: FakeScsynth) -> Iterator[OscClient]:
    made = OscClient(57110, name="fake", wire=fake)
    yield made
    made.close()


def test_a_shut_door_raises_the_rooms_own_error_on_every_call() -> None:
    door = ScsynthDoor("lobby", restarting)
    assert not door.is_open and door.last_status is None and door.last_heard == 0.0
    for call in (lambda: door.send(commands.status()), lambda: door.status(),
                 lambda: door.sync(), door.query_tree, lambda: door.s_get(1000, "freq"),
                 lambda: door.at(0.0, commands.status())):
        with pytest.raises(Booting, match="RESTARTING"):
            call()


def test_an_open_door_forwards_requests_and_reads_replies(
    fake: FakeScsynth, client: OscClient
) -> None:
    door = ScsynthDoor("lobby", restarting)
    door.open(client)
    assert door.status(timeout=1.0).nominal_sample_rate == 48000.0
    assert door.last_status is not None and door.last_heard > 0
    door.sync(timeout=1.0)
    tree = door.query_tree()
    assert [(n.node_id, n.parent, n.synthdef) for n in tree] == [(1, 0, None), (1000, 1, "sine")]
    assert door.s_get(1000, "freq") == {"freq": 440.0}
    with pytest.raises(OscFailure, match="Node not found"):
        door.s_get(2000, "freq", timeout=1.0)
    door.at(1.5, commands.n_free(1000))
    assert fake.sent[-1] == OscMessage("/n_free", (1000,))


def test_a_caller_holding_the_door_reaches_the_next_scsynth_after_a_restart() -> None:
    door = ScsynthDoor("lobby", restarting)
    first, second = FakeScsynth(), FakeScsynth()
    old, new = OscClient(1, wire=first), OscClient(2, wire=second)
    try:
        door.open(old)
        before = door.generation
        door.send(commands.n_free(1))
        door.shut()
        with pytest.raises(Booting):
            door.send(commands.n_free(2))
        door.open(new)
        door.send(commands.n_free(3))
        assert door.generation == before + 1
        assert [m.args for m in first.sent] == [(1,)]
        assert [m.args for m in second.sent] == [(3,)]
    finally:
        old.close()
        new.close()


def test_a_listener_set_on_one_scsynth_hears_the_next_one_too() -> None:
    door = ScsynthDoor("lobby", restarting)
    heard: list[OscMessage] = []
    came = threading.Event()

    def listener(msg: OscMessage) -> None:
        heard.append(msg)
        came.set()

    first, second = FakeScsynth(), FakeScsynth()
    clients = [OscClient(1, wire=first), OscClient(2, wire=second)]
    try:
        door.open(clients[0])
        door.listen("/meter", listener)
        first.tell(OscMessage("/meter", (1,)))
        assert came.wait(1.0)
        came.clear()
        door.open(clients[1])
        second.tell(OscMessage("/meter", (2,)))
        assert came.wait(1.0)
        door.unlisten("/meter")
        second.tell(OscMessage("/meter", (3,)))
        door.sync(timeout=1.0)  # the message before the sync's answer was read by now
        assert [m.args for m in heard] == [(1,), (2,)]
    finally:
        for client in clients:
            client.close()


def test_a_request_nobody_answers_times_out(client: OscClient) -> None:
    door = ScsynthDoor("lobby", restarting)
    door.open(client)
    with pytest.raises(OscTimeout):
        door.request("/b_query", 1, reply="/b_info", timeout=0.05)


def test_calls_from_many_threads_across_restarts_either_answer_or_raise_the_rooms_error(
) -> None:
    door = ScsynthDoor("lobby", restarting)
    fakes = [FakeScsynth() for _ in range(6)]
    clients = [OscClient(i, wire=f) for i, f in enumerate(fakes)]
    outcomes: list[str] = []
    stop = threading.Event()

    def caller() -> None:
        while not stop.is_set():
            try:
                door.status(timeout=1.0)
                outcomes.append("answered")
            except Booting:
                outcomes.append("restarting")

    threads = [threading.Thread(target=caller) for _ in range(4)]
    try:
        for thread in threads:
            thread.start()
        for client in clients:
            door.open(client)
            stop.wait(0.02)
            door.shut()
            stop.wait(0.01)
    finally:
        stop.set()
        for thread in threads:
            thread.join(5.0)
        for client in clients:
            client.close()
    assert "answered" in outcomes and "restarting" in outcomes
    assert set(outcomes) == {"answered", "restarting"}  # no other error ever
