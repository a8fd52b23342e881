"""Hosted and attached give the same answers: a real, started orchestra served on its
control socket, called in process (LocalService) and through the socket (RemoteService),
and through MCP tools over both."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from mcp import Client

from mcp_server.server import build_server
from scorch.api.local import LocalService
from scorch.api.remote import RemoteService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.errors import (
    InvalidRequest,
    MidiUnavailable,
    NodeNotFound,
    RoomNotFound,
)
from scorch.wire.server import ControlServer
from tests.conftest import jack_name

# --- hosted and attached, on a real orchestra --------------------------------

REAL = """
state_dir = "{state}"
[audio]
driver = "dummy"
jack_server = "{jack}"
[midi]
enabled = false
[instances.alpha]
group = "rooms"
synthdefs = ["sine"]
[instances.beta]
group = "rooms"
"""

#: Fields that change between two calls one after the other (``synths`` and
#: ``ugens`` too: a released synth fades out on its own, and /status is polled).
VOLATILE = frozenset({"since", "uptime", "cpu", "peak_cpu", "avg_cpu", "actual_sample_rate",
                      "synths", "ugens", "elapsed_ms", "request", "console_since"})


def stable(answer: Any) -> Any:
    """``answer`` without the fields that change between two calls."""
    if isinstance(answer, dict):
        return {k: stable(v) for k, v in answer.items() if k not in VOLATILE}
    if isinstance(answer, list):
        return [stable(v) for v in answer]
    return answer


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlServer]:
    """A started two-instance orchestra, served on its control socket (once per module)."""
    state = tmp_path_factory.mktemp("control") / "state"
    text = REAL.format(state=state, jack=jack_name("control"))
    orch = Orchestra(parse_config(text, state.parent / "config.toml"))
    server = ControlServer(LocalService(orch), state)
    try:
        assert orch.start() == {"alpha": None, "beta": None}
        server.start()
        yield server
    finally:
        server.stop()
        orch.stop()


@pytest.fixture
def services(real: ControlServer) -> Iterator[tuple[LocalService, RemoteService]]:
    remote = RemoteService(real.path)
    yield real.service, remote
    remote.close()


def answer(service: LocalService | RemoteService, operation: str, **args: Any) -> Any:
    """An operation's answer as JSON, the same shape on both sides."""
    return service.call(operation, args).model_dump(mode="json")


@pytest.mark.integration
def test_instances_and_status_agree_on_every_stable_field(
        services: tuple[LocalService, RemoteService]) -> None:
    local, remote = services
    rows = answer(local, "list_instances")["instances"]
    assert [(r["name"], r["state"]) for r in rows] == [("alpha", "READY"), ("beta", "READY")]
    assert stable(answer(remote, "list_instances")["instances"]) == stable(rows)
    status = answer(local, "status", instance="rooms")["instances"]
    assert status[0]["pids"]["scsynth"] > 0 and status[0]["server"]["nominal_sample_rate"]
    assert stable(answer(remote, "status", instance="rooms")["instances"]) == stable(status)


@pytest.mark.integration
@pytest.mark.parametrize(("code", "ok"), [("1 + 1", True), ("1 +* ) (", False)])
def test_execute_gives_the_same_value_or_the_same_error_at_the_same_place(
        services: tuple[LocalService, RemoteService], code: str, ok: bool) -> None:
    local, remote = services
    mine = answer(local, "execute", instance="rooms", code=code, timeout_s=5.0)["results"]
    assert [r["ok"] for r in mine] == [ok, ok]
    if ok:
        assert mine[0]["value"] == "2"
    else:
        assert mine[0]["error"]["kind"] == "parse"
        assert (mine[0]["error"]["line"], mine[0]["error"]["char"]) == (1, 6)
    theirs = answer(remote, "execute", instance="rooms", code=code, timeout_s=5.0)["results"]
    assert stable(theirs) == stable(mine)


@pytest.mark.integration
def test_play_set_and_release_of_a_named_node_give_the_same_answers(
        services: tuple[LocalService, RemoteService]) -> None:
    answers = []
    for service in services:  # the same node, played and released by each side in turn
        played = answer(service, "play", instance="alpha", synthdef="sine",
                        params={"freq": 440.0}, name="pair")
        assert played.pop("node_id") > 0
        nodes = answer(service, "status", instance="alpha")["instances"][0]["nodes"]
        assert nodes["pair"]["params"]["freq"] == 440.0
        changed = answer(service, "set", instance="alpha", node="pair", params={"freq": 220.0})
        released = answer(service, "release", instance="alpha", node="pair")
        answers.append((played, changed, released))
    assert answers[0][1]["params"]["freq"] == 220.0 and answers[0][2]["released"] is True
    assert answers[1] == answers[0]


@pytest.mark.integration
def test_console_wait_for_and_events_give_the_same_lines(
        services: tuple[LocalService, RemoteService]) -> None:
    local, remote = services
    answer(local, "execute", instance="alpha", code='"parity-mark".postln', timeout_s=5.0)
    waited = answer(local, "wait_for", instance="alpha", pattern="parity-mark", timeout_s=5.0,
                    since=0)
    assert waited["matched"]
    assert answer(remote, "wait_for", instance="alpha", pattern="parity-mark", timeout_s=5.0,
                  since=0) == waited
    lines = answer(local, "console", instance="alpha", lines=5)["lines"]
    assert waited["line"] in lines
    assert answer(remote, "console", instance="alpha", lines=5)["lines"] == lines
    events = answer(local, "events", instance="*")["events"]
    assert {e["instance"] for e in events} == {"alpha", "beta"}
    assert answer(remote, "events", instance="*")["events"] == events


@pytest.mark.integration
@pytest.mark.parametrize(("name", "args", "kind"), [
    ("status", {"instance": "nobody"}, RoomNotFound),
    ("execute", {"instance": "nobody", "code": "1"}, RoomNotFound),
    ("console", {"instance": "nobody"}, RoomNotFound),
    ("release", {"instance": "alpha", "node": "nobody"}, NodeNotFound),
    ("play", {"instance": "alpha", "synthdef": "sine", "params": {"fre": 1.0}},
     InvalidRequest),
    ("midi", {"action": "ports"}, MidiUnavailable),
])
def test_errors_are_the_same_kind_with_the_same_message(
        services: tuple[LocalService, RemoteService], name: str, args: dict[str, Any],
        kind: type[Exception]) -> None:
    raised = []
    for service in services:
        with pytest.raises(kind) as error:
            service.call(name, args)
        raised.append((type(error.value), str(error.value)))
    assert raised[0][0] is kind and raised[0][1]
    assert raised[1] == raised[0]


# --- the MCP tools over both services ----------------------------------------


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def both(real: ControlServer) -> AsyncIterator[tuple[Client, Client]]:
    remote = RemoteService(real.path)
    async with Client(build_server(real.service)) as local, \
            Client(build_server(remote)) as attached:
        yield local, attached
    remote.close()


@pytest.mark.integration
@pytest.mark.anyio
@pytest.mark.parametrize(("tool", "args", "is_error"), [
    ("list_instances", {}, False),
    ("status", {"instance": "rooms"}, False),
    ("status", {"instance": "nobody"}, True),
    ("execute", {"instance": "rooms", "code": "1"}, False),
    ("execute", {"instance": "alpha", "code": "1 +* ) ("}, True),
    ("execute", {"instance": "alpha", "code": ""}, True),
    ("synthdefs", {"action": "describe", "name": "sine"}, False),
    ("synthdefs", {"action": "describe", "name": "nope"}, True),
    ("play", {"instance": "alpha", "synthdef": "sine", "params": {"fre": 1}}, True),
    ("console", {"instance": "beta"}, False),
    ("events", {"instance": "*"}, False),
    ("midi", {"action": "ports"}, True),
])
async def test_hosted_and_attached_tools_give_the_same_answers(
        both: tuple[Client, Client], tool: str, args: dict[str, Any], is_error: bool) -> None:
    local, remote = both
    mine, theirs = await local.call_tool(tool, args), await remote.call_tool(tool, args)
    assert mine.is_error is is_error and theirs.is_error is is_error
    if is_error:  # the same text, code, retryable and argument, across the wire too
        assert mine.content == theirs.content
        assert mine.structured_content == theirs.structured_content
        assert mine.structured_content is not None and mine.structured_content["code"]
        return
    assert mine.structured_content is not None and theirs.structured_content is not None
    assert stable(mine.structured_content) == stable(theirs.structured_content)

