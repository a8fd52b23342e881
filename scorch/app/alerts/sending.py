"""Alerts that leave the machine: rooms' events through apprise (docs/alerts.md).

A watch thread reads every room's :class:`~scorch.state.events.EventLog` (rooms never
call in here, so nothing an alert does can slow a room or the MIDI path), asks the
:class:`~scorch.app.alerts.policy.AlertPolicy` what to say and puts it in a bounded
queue; a send thread delivers it to each target whose kinds match, trying again with
backoff. Failures are logged (by scheme: URLs may hold tokens) and counted.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from scorch.app.alerts.policy import AlertPolicy, Message, Phase, matches
from scorch.config import AlertsConfig, AlertTarget
from scorch.state import RoomView

if TYPE_CHECKING:
    import apprise

log = logging.getLogger(__name__)

POLL_S = 0.25  # how often the rooms' event logs are read (an alert's added latency)


def scheme(url: str) -> str:
    """What a URL may show in a log: its scheme only."""
    return url.split("://", 1)[0] + "://…"


class Alerts:
    """Watch the rooms' events and send what the policy says; two daemon threads."""

    def __init__(self, config: AlertsConfig, views: Callable[[], Mapping[str, RoomView]],
                 clock: Callable[[], float] = time.time) -> None:
        self._config = config
        self._views = views
        self._clock = clock
        self._policy = AlertPolicy(config.kinds, config.rate_s, config.remind_s)
        self._queue: queue.Queue[Message] = queue.Queue(maxsize=config.queue)
        self._stopping = threading.Event()
        self._marks: dict[str, int] = {}
        self._threads: list[threading.Thread] = []
        self.counts: Counter[str] = Counter()
        """Messages ``queued``, ``sent``, ``failed`` (after every try), ``dropped``."""

    @property
    def enabled(self) -> bool:
        """Whether any URL is configured (none: no thread is ever started)."""
        return bool(self._config.urls)

    def start(self) -> None:
        """Begin watching and sending (nothing when no URL is configured)."""
        if not self.enabled or self._threads:
            return
        # Events before the start are history; a room added later is read from its first.
        self._marks = {name: view.events.mark() for name, view in self._views().items()}
        self._threads = [threading.Thread(target=self._watch, name="alerts-watch", daemon=True),
                         threading.Thread(target=self._send_all, name="alerts-send",
                                          daemon=True)]
        for thread in self._threads:
            thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop both threads; messages still queued are not sent."""
        self._stopping.set()
        for thread in self._threads:
            thread.join(timeout)
        self._threads = []

    def _watch(self) -> None:
        while not self._stopping.wait(POLL_S):
            try:
                self.poll()
            except Exception:  # a bug here must not end alerting for the run
                log.exception("alerts: reading the rooms' events failed")

    def poll(self) -> None:
        """Read new events of every room, queue their messages and due reminders."""
        for name, view in list(self._views().items()):
            events = view.events.since(self._marks.get(name, 0))
            if events:
                self._marks[name] = events[-1].seq
            for event in events:
                for message in self._policy.event(name, str(event.kind), event.message,
                                                  event.time, event.details):
                    self._put(message)
        for message in self._policy.tick(self._clock()):
            self._put(message)

    def _put(self, message: Message) -> None:
        try:
            self._queue.put_nowait(message)
            self.counts["queued"] += 1
        except queue.Full:
            self.counts["dropped"] += 1
            log.warning("alerts: queue full, %s of %s dropped", message.kind, message.room)

    def _send_all(self) -> None:
        targets = [(target, _apprise(target, index))
                   for index, target in enumerate(self._config.targets())]
        while not self._stopping.is_set():
            try:
                message = self._queue.get(timeout=POLL_S)
            except queue.Empty:
                continue
            for target, notifier in targets:
                if notifier is not None and target.kinds is not None \
                        and matches(message.kind, target.kinds):
                    self._deliver(target, notifier, message)

    def _pause(self, seconds: float) -> None:
        """Wait between tries, ended early by :meth:`stop`."""
        self._stopping.wait(seconds)

    def _deliver(self, target: AlertTarget, notifier: apprise.Apprise, message: Message) -> None:
        from tenacity import (
            RetryError,
            Retrying,
            retry_if_result,
            stop_after_attempt,
            wait_exponential,
        )

        def attempt() -> bool:
            return bool(notifier.notify(body=message.body, title=message.title,
                                        notify_type=_notify_type(message)))

        retrying = Retrying(
            stop=stop_after_attempt(self._config.retries + 1),
            wait=wait_exponential(multiplier=self._config.backoff_s,
                                  max=self._config.backoff_s * 32),
            retry=retry_if_result(lambda ok: not ok and not self._stopping.is_set()),
            sleep=self._pause)
        try:
            ok = retrying(attempt)
        except RetryError:
            ok = False
        except Exception as err:  # apprise raising is apprise's bug, not the rooms' problem
            log.warning("alerts: %s raised %s", scheme(target.url), type(err).__name__)
            ok = False
        self.counts["sent" if ok else "failed"] += 1
        if not ok:
            log.warning("alerts: %s of %s not delivered to %s after %d tries", message.kind,
                        message.room, scheme(target.url), self._config.retries + 1)


def _apprise(target: AlertTarget, index: int) -> apprise.Apprise | None:
    """One apprise object per target (so each is filtered and retried alone)."""
    import apprise

    notifier = apprise.Apprise()
    if not notifier.add(target.url):
        log.error("alerts: [alerts] urls[%d] (%s) is not a URL apprise knows; nothing "
                  "goes there", index, scheme(target.url))
        return None
    return notifier


def _notify_type(message: Message) -> Any:
    import apprise

    return (apprise.NotifyType.SUCCESS if message.phase is Phase.RECOVERED
            else apprise.NotifyType.WARNING if message.phase is Phase.REMINDER
            else apprise.NotifyType.FAILURE)
