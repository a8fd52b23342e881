"""Alerts through apprise to a real local HTTP endpoint: delivery, retries, drops, secrets."""

from __future__ import annotations

import logging

import pytest

from scorch.app.alerts import Alerts, scheme
from scorch.config.alerts import AlertsConfig
from scorch.state.events import Kind
from scorch.state.view import RoomView
from tests.support.alerts.sinks import json_endpoint


def alerts_to(url: str, **keys: object) -> tuple[Alerts, RoomView]:
    view = RoomView("lobby", None)
    config = AlertsConfig.model_validate({"urls": [url], "backoff_s": 0.05} | keys)
    return Alerts(config, lambda: {"lobby": view}), view


def test_a_crash_and_its_restoration_arrive_as_a_failure_and_a_success(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with json_endpoint() as (url, inbox):
        alerts, view = alerts_to(url)
        view.events.add(Kind.CRASHED, "before the start: not told")
        alerts.start()
        try:
            view.events.add(Kind.CRASHED, "scsynth exited (SIGKILL)", pid=123)
            view.events.add(Kind.RESTORED, "restored")
            fault, back = inbox.wait(2, 10.0)
        finally:
            alerts.stop()
    assert fault["type"] == "failure" and "lobby CRASHED" in fault["title"]
    assert "SIGKILL" in fault["message"] and "pid: 123" in fault["message"]
    assert back["type"] == "success" and "recovered from CRASHED" in back["title"]
    assert len(inbox.items) == 2 and alerts.counts["sent"] == 2
    assert fault["authorization"]  # the URL's credentials went where they belong...
    assert "s3cret-token" not in caplog.text  # ...and never into a log


def test_a_failing_endpoint_is_tried_again_with_backoff_until_it_takes() -> None:
    with json_endpoint() as (url, inbox):
        inbox.refuse = 2
        alerts, view = alerts_to(url, retries=3)
        alerts.start()
        try:
            view.events.add(Kind.FAILED, "gave up")
            [message] = inbox.wait(1, 10.0)
        finally:
            alerts.stop()
    assert "FAILED" in message["title"] and inbox.tries == 3
    assert alerts.counts["sent"] == 1 and alerts.counts["failed"] == 0


def test_an_endpoint_that_never_answers_is_counted_failed_and_logged_without_its_secret(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with json_endpoint() as (url, inbox):
        inbox.refuse = 100
        alerts, view = alerts_to(url, retries=1)
        alerts.start()
        try:
            view.events.add(Kind.HUNG, "no answer")
            deadline = 100
            while alerts.counts["failed"] == 0 and deadline:
                inbox.wait(1, 0.1)
                deadline -= 1
        finally:
            alerts.stop()
    assert alerts.counts["failed"] == 1 and inbox.tries == 2
    assert "not delivered to json://" in caplog.text and "s3cret-token" not in caplog.text


def test_more_messages_than_the_queue_holds_are_dropped_and_counted() -> None:
    alerts, view = alerts_to("json://127.0.0.1:9/none", queue=2, rate_s=0)
    for n in range(5):  # not started: nothing takes from the queue
        view.events.add(Kind.CRASHED, f"crash {n}")
    alerts.poll()
    assert alerts.counts["queued"] == 2 and alerts.counts["dropped"] == 3


def test_a_log_shows_only_a_urls_scheme() -> None:
    assert scheme("mailto://user:pw@host?to=x") == "mailto://…"
