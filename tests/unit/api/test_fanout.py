"""Where the coordinator sends each operation, and how the hosts' answers become one.

The pure part (``scorch.api.fanout``) is tested on its own; the
coordinator then against real control servers of two local hosts, each
serving an orchestra that is not started (its rooms answer STOPPED, no
process needed: ``conftest.py``).
"""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

import pytest

from scorch.api import fanout
from scorch.api.coordinator import Coordinator
from scorch.api.ops import lookup
from scorch.config.installation import Config, parse_config
from scorch.errors import HostUnreachable, InvalidRequest, NotRunning, RoomNotFound
from scorch.hosts.channel import ssh_argv
from tests.unit.api.conftest import Served


def plan(config: Config, op: str, **args: object) -> fanout.Plan:
    return fanout.plan(lookup(op), lookup(op).parse(args), config)


def test_an_operation_goes_to_the_hosts_of_the_rooms_it_names(config: Config) -> None:
    assert plan(config, "execute", instance="y", code="1").hosts == ("b",)
    assert plan(config, "execute", instance="g", code="1").rooms == {"a": ("x",), "b": ("y",)}
    assert plan(config, "status").hosts == ("a", "b")  # "*" by default
    assert plan(config, "instance", name="z", action="restart").hosts == ("b",)
    assert plan(config, "reload").hosts == ("a", "b")
    assert plan(config, "tempo", bpm=100.0).hosts == ("a", "b")
    assert plan(config, "tempo", bpm=100.0, group="z").hosts == ("b",)  # where its rooms are
    assert not plan(config, "reload").one
    assert plan(config, "docs", name="SinOsc").one
    assert plan(config, "synthdefs").one
    assert plan(config, "synthdefs", action="load", name="sine", instance="x").hosts == ("a",)
    mapped = plan(config, "midi", action="map", spec={"instance": "y", "cc": 1})
    assert mapped.hosts == ("b",)
    assert plan(config, "midi", action="map", spec={"host": "a", "instance": "y"}).hosts == (
        "a",)
    with pytest.raises(RoomNotFound, match="known rooms: x, y, z"):
        plan(config, "console", instance="w")


def test_one_host_alone_knows_only_its_rooms(config: Config) -> None:
    with pytest.raises(RoomNotFound, match="known rooms: y, z"):
        fanout.plan(lookup("execute"), lookup("execute").parse({"instance": "x", "code": "1"}),
                    config, ["b"])


def test_answers_are_joined_in_config_order_and_logs_by_time(config: Config) -> None:
    rows = [({"name": "y"}, "b"), ({"name": "x"}, "a")]
    merged = fanout.merge(lookup("list_instances"), None, [
        ("b", {"hosted_by": "scorch run", "instances": [rows[0][0]]}),
        ("a", {"hosted_by": "scorch run", "instances": [rows[1][0]]})], config)
    assert [(r["name"], r["host"]) for r in merged["instances"]] == [("x", "a"), ("y", "b")]
    args = lookup("logs").parse({"lines": 2})
    merged = fanout.merge(lookup("logs"), args, [
        ("a", {"entries": [{"time": 1.0}, {"time": 4.0}], "cursor": {"x": 1}}),
        ("b", {"entries": [{"time": 2.0}, {"time": 3.0}], "cursor": {"y": 5}})], config)
    assert [e["time"] for e in merged["entries"]] == [3.0, 4.0]
    assert merged["cursor"] == {"x": 1, "y": 5}
    merged = fanout.merge(lookup("reload"), None, [("a", {"changes": ["nothing changed"]}),
                                           ("b", {"changes": ["room y: node n added"]})],
                          config)
    assert merged["changes"] == ["a: nothing changed", "b: room y: node n added"]
    tempo = {"action": "tempo", "instance": None, "target": "installation",
             "detail": "tempo of installation: 120 -> 96 bpm"}
    merged = fanout.merge(lookup("session"), None, [
        ("a", {"action": "diff", "changes": [tempo]}),
        ("b", {"action": "diff", "changes": [tempo, {"action": "set", "instance": "y",
                                                     "target": "n", "detail": "set n"}]})],
        config)
    assert [c["detail"] for c in merged["changes"]] == [
        "a: tempo of installation: 120 -> 96 bpm", "b: tempo of installation: 120 -> 96 bpm",
        "set n"]
    merged = fanout.merge(lookup("notes"), None, [
        ("a", {"action": "played", "listing": "bar 1", "count": 2, "summarised": False,
               "notes": [{"onset": 1.0}, {"onset": 4.0}]}),
        ("b", {"action": "played", "listing": "bar 2", "count": 1, "summarised": False,
               "notes": [{"onset": 2.0}]})], config)
    assert [n["onset"] for n in merged["notes"]] == [1.0, 2.0, 4.0]
    assert merged["count"] == 3 and merged["listing"] == "a:\nbar 1\nb:\nbar 2"


def test_the_coordinator_merges_rooms_with_hosts_and_says_each_hosts_state(
        config: Config, served: Served) -> None:
    coordinator = Coordinator(config)
    try:
        listed = coordinator.call("list_instances", {})
        assert [(r.name, r.host, r.state) for r in listed.instances] == [  # type: ignore[attr-defined]
            ("x", "a", "STOPPED"), ("y", "b", "STOPPED"), ("z", "b", "STOPPED")]
        assert listed.hosted_by == "coordinator"  # type: ignore[attr-defined]
        assert [(h.name, h.state) for h in listed.hosts] == [  # type: ignore[attr-defined]
            ("a", "CONNECTED"), ("b", "CONNECTED")]
        pinged = coordinator.call("ping", {})
        assert pinged.instances == ["x", "y", "z"]  # type: ignore[attr-defined]
        with pytest.raises(InvalidRequest, match=r"midi action 'unmap'.*\n.*route_id: this "
                           r"argument is required"):
            coordinator.call("midi", {"action": "unmap"})  # its own schema: no host asked
        with pytest.raises(InvalidRequest, match="buffer action 'search' needs `query`"):
            coordinator.call("buffer", {"action": "search"})  # the hosts' own refusal
    finally:
        coordinator.close()


def test_a_host_that_does_not_answer_leaves_its_rooms_unknown_and_the_rest_done(
        config: Config, served: Served) -> None:
    served.stop("b")
    coordinator = Coordinator(config)
    try:
        started = time.monotonic()
        listed = coordinator.call("list_instances", {})
        assert time.monotonic() - started < 2.0
        assert [(r.name, r.state) for r in listed.instances] == [  # type: ignore[attr-defined]
            ("x", "STOPPED"), ("y", "UNKNOWN"), ("z", "UNKNOWN")]
        assert listed.instances[1].reason == "host b NOT_RUNNING"  # type: ignore[attr-defined]
        status = coordinator.call("status", {"instance": "g"})
        assert [(r.name, r.state) for r in status.instances] == [  # type: ignore[attr-defined]
            ("x", "STOPPED"), ("y", "UNKNOWN")]
        ran = coordinator.call("execute", {"instance": "*", "code": "1"})
        kinds = {r.instance: r.error.kind for r in ran.results}  # type: ignore[attr-defined]
        assert kinds == {"x": "unavailable", "y": "unavailable", "z": "unavailable"}
        assert "not running" in ran.results[1].error.message  # type: ignore[attr-defined]
        with pytest.raises(NotRunning, match="console: host b"):
            coordinator.call("console", {"instance": "y"})
        with pytest.raises(HostUnreachable, match="events was done on a, not on every host"):
            coordinator.call("events", {})
    finally:
        coordinator.close()


def test_ssh_argv_quotes_the_remote_command_and_keeps_options_apart(tmp_path: Path) -> None:
    path = tmp_path / "my rooms" / "cfg.toml"
    config = parse_config(textwrap.dedent("""
        [hosts.pi]
        address = "pi.local"
        ssh_user = "pi"
        ssh_port = 2222
        identity = "keys/id"
        ssh_options = { ConnectionAttempts = "2" }
        config_path = "/etc/scorch/rooms of pi.toml"
        [instances.x]
        host = "pi"
        """), path)
    argv = ssh_argv("pi", config.hosts["pi"], config)
    assert argv[argv.index("-i") + 1] == str(tmp_path / "my rooms" / "keys" / "id")
    assert argv[argv.index("-p") + 1] == "2222" and argv[argv.index("-l") + 1] == "pi"
    assert "ConnectionAttempts=2" in argv
    assert argv[-3:] == ["--", "pi.local",
                         "scorch bridge --config '/etc/scorch/rooms of pi.toml' --host pi"]
