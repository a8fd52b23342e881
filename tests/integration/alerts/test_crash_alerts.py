"""A real room's scsynth killed: the alert and the recovery reach HTTP and SMTP servers,
and /metrics counts the restart and its cause."""

from __future__ import annotations

import os
import re
import signal
import urllib.request
from collections.abc import Callable

import pytest
from prometheus_client.parser import text_string_to_metric_families

from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import Config
from scorch.errors import ScorchError
from scorch.state.events import Kind
from scorch.web.metrics import MetricsServer, RoomCollector
from scorch.wire.access import READONLY_TOKEN_FILE, load_token
from tests.conftest import MakeConfig
from tests.support.alerts.sinks import json_endpoint, smtp_server

pytestmark = pytest.mark.integration

ROOM = """
[instances.lobby]
synthdefs = ["sine"]
[instances.lobby.nodes.drone]
synthdef = "sine"
params = { freq = 220, amp = 0.02 }
"""

WATCHDOG = """
[watchdog]
interval = 0.25
missed = 8
backoff_min = 0.05
backoff_max = 1
"""


def test_killing_a_rooms_scsynth_sends_the_crash_then_its_recovery_by_http_and_mail(
        make_config: MakeConfig, start_orchestra: Callable[[Config], Orchestra]) -> None:
    with json_endpoint() as (hook, posts), smtp_server() as (mail, mails):
        extra = (f'[alerts]\nurls = ["{hook}", {{ url = "{mail}", kinds = ["CRASHED"] }}]\n'
                 "backoff_s = 0.1\n")
        orch = start_orchestra(make_config(ROOM, watchdog=WATCHDOG, extra=extra,
                                           tag="alerts"))
        metrics = MetricsServer(RoomCollector.of(orch), "127.0.0.1", 0,
                                orch.config.state_path())
        metrics.start()
        token = load_token(orch.config.state_path(), READONLY_TOKEN_FILE)
        service = LocalService(orch)
        service.call("list_instances", {})
        with pytest.raises(ScorchError):
            service.call("set", {"instance": "nowhere", "node": "drone", "values": {"amp": 0}})
        before = scrape(metrics.port, token)
        since = orch.views["lobby"].events.mark()
        pid = orch.rooms.status("lobby").pids["scsynth"]
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        restored = orch.views["lobby"].events.wait_for((Kind.RESTORED, Kind.FAILED), since, 20)
        assert restored is not None and restored.kind == Kind.RESTORED, restored

        crash, back = posts.wait(2, 15.0)
        crash_mail, back_mail = mails.wait(2, 15.0)
        after = scrape(metrics.port, token)
        metrics.stop()
    restarts = ("scorch_room_restarts_total", (("process", "scsynth"), ("room", "lobby")))
    assert after[restarts] == before[restarts] + 1
    assert after[("scorch_room_events_total", (("kind", "CRASHED"), ("room", "lobby")))] == 1
    assert after[("scorch_room_state", (("room", "lobby"), ("state", "READY")))] == 1
    assert after[("scorch_alerts_total", (("outcome", "sent"),))] >= 2
    assert after[("scorch_calls_total", (("operation", "list_instances"),))] == 1
    assert after[("scorch_call_errors_total", (("operation", "list_instances"),))] == 0
    assert after[("scorch_call_errors_total", (("operation", "set"),))] == 1
    assert ("scorch_room_xruns_total", (("room", "lobby"),)) in after  # its JACK server's
    # the drone, a 220 Hz sine at 0.02: -37.7 LUFS once the stage's 3 s window is full
    # again since the restart, less while it fills
    assert -50 < after[("scorch_room_loudness_lufs", (("room", "lobby"),))] <= -37
    assert crash["type"] == "failure" and crash["title"].startswith("scorch: lobby CRASHED")
    assert "SIGKILL" in crash["message"]
    assert back["type"] == "success" and "lobby recovered from CRASHED" in back["title"]
    assert re.match(r"(READY|RESTORED) after \d+\.\d s: scsynth killed", back["message"])
    assert "lobby CRASHED" in crash_mail["subject"] and crash_mail["to"] == ["tech@example.org"]
    assert "recovered from CRASHED" in back_mail["subject"]
    assert len(posts.items) == 2 and len(mails.items) == 2  # nothing else was alerted
    assert orch.alerts.counts["failed"] == 0 and orch.alerts.counts["dropped"] == 0


def scrape(port: int, token: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of /metrics, parsed by prometheus_client's own parser."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics",
                                     headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=5) as answer:
        text = answer.read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}
