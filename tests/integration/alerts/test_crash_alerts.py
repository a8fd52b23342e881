"""A real room's scsynth killed: the alert and the recovery reach HTTP and SMTP servers."""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable

import pytest

from scorch.app.orchestra import Orchestra
from scorch.config.installation import Config
from scorch.state.events import Kind
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
        since = orch.views["lobby"].events.mark()
        pid = orch.rooms.status("lobby").pids["scsynth"]
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        restored = orch.views["lobby"].events.wait_for((Kind.RESTORED, Kind.FAILED), since, 20)
        assert restored is not None and restored.kind == Kind.RESTORED, restored

        crash, back = posts.wait(2, 15.0)
        crash_mail, back_mail = mails.wait(2, 15.0)
    assert crash["type"] == "failure" and crash["title"].startswith("scorch: lobby CRASHED")
    assert "SIGKILL" in crash["message"]
    assert back["type"] == "success" and "lobby recovered from CRASHED" in back["title"]
    assert re.match(r"(READY|RESTORED) after \d+\.\d s: scsynth killed", back["message"])
    assert "lobby CRASHED" in crash_mail["subject"] and crash_mail["to"] == ["tech@example.org"]
    assert "recovered from CRASHED" in back_mail["subject"]
    assert len(posts.items) == 2 and len(mails.items) == 2  # nothing else was alerted
    assert orch.alerts.counts["failed"] == 0 and orch.alerts.counts["dropped"] == 0
