"""One host as a coordinator sees it: a channel to its ``scorch run``, its state, and its return.

A :class:`HostLink` opens its :class:`~scorch.hosts.channel.Channel` when
first needed, calls through it, and keeps what it learned: CONNECTED while the
host's ``scorch run`` answers, NOT_RUNNING when the host answers but no
``scorch run`` does, UNREACHABLE when nothing answers in time (the machine is
down, the network cut, ssh refused). A failed call marks it at once.

:meth:`HostLink.watch` (a thread the coordinator starts when it lives long, as
``scorch mcp`` does) pings a CONNECTED host every heartbeat and retries a lost
one with tenacity's exponential backoff, forever, until the coordinator stops.
When a host comes back its rooms are read again and compared with the config
(:meth:`HostLink.reconcile`): the coordinator keeps no state of its own, the
truth of each room is on its host.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel, Field
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    sleep_using_event,
    stop_when_event_set,
)

from scorch.errors import HostUnreachable, NotRunning, ScorchError
from scorch.hosts.channel import Channel
from scorch.state import Backoff

log = logging.getLogger(__name__)


class HostInfo(BaseModel):
    """One host of an installation across several, as the coordinator sees it now."""

    name: str | None = Field(description="the [hosts.NAME]; null: the rooms without a host "
                             "(this machine's own `scorch run`)")
    transport: str = Field(description="how the coordinator reaches it (its config's `via`): "
                           "ssh or local")
    address: str
    state: str = Field(description="CONNECTED (its scorch run answers), NOT_RUNNING (the "
                       "host answers, no scorch run does), UNREACHABLE (no answer: down, cut "
                       "off, ssh refused) or CONNECTING (first contact)")
    since: float = Field(description="Unix time the state began")
    reason: str | None = Field(description="why it is not CONNECTED")
    rooms: list[str] = Field(description="the rooms the config puts there")
    last_seen: float | None = Field(description="Unix time it last answered")
    rtt_ms: float | None = Field(description="round trip of its last ping, ms")
    clock_offset_ms: float | None = Field(
        description="its clock minus this one's, estimated from the last ping (+- rtt/2); "
        "chrony keeps it under a millisecond on a LAN")
    reconciled_at: float | None = Field(
        description="Unix time its rooms were last read again after it came back")
    warnings: list[str] = Field(default_factory=list, description="where the host and this "
                                "config disagree (another config file, other rooms)")

#: Seconds between two pings of a CONNECTED host, and how long each may take.
HEARTBEAT = 0.5
PING_TIMEOUT = 1.5
#: Seconds a first contact (ssh's handshake and the bridge's start included) may take.
CONNECT_TIMEOUT = 5.0
#: Waits between tries to reach a lost host: 0.25 s doubling to 5 s, with jitter.
RETRY = Backoff(minimum=0.25, maximum=5.0, stable_after=0.0)


class HostState(enum.StrEnum):
    """Where a host is, as the coordinator sees it."""

    CONNECTING = "CONNECTING"
    CONNECTED = "CONNECTED"
    NOT_RUNNING = "NOT_RUNNING"
    UNREACHABLE = "UNREACHABLE"


class _Lost(Exception):
    """A try to reach the host failed (tenacity retries on it)."""


@dataclass(frozen=True)
class HostView:
    """What is known of a host now (replaced whole, read without a lock)."""

    state: HostState = HostState.CONNECTING
    since: float = field(default_factory=time.time)
    reason: str | None = "not asked yet"
    last_seen: float | None = None
    rtt_ms: float | None = None
    clock_offset_ms: float | None = None
    reconciled_at: float | None = None
    warnings: tuple[str, ...] = ()
    rows: tuple[dict[str, Any], ...] = ()
    """Its rooms as its ``list_instances`` last gave them."""


class HostLink:
    """A host of the installation: calls to its ``scorch run``, and its state (thread-safe)."""

    def __init__(self, name: str | None, via: str, address: str, rooms: list[str],
                 opener: Callable[[], Channel], digest: str | None = None) -> None:
        self.name = name
        self.label = name or "(this machine)"
        self.via = via
        """How the coordinator reaches it: ssh or local."""
        self.address = address
        self.rooms = rooms
        """The rooms the config puts on this host."""
        self.digest = digest
        """The coordinator's config digest: a host that runs another text is warned about."""
        self._open = opener
        self._channel: Channel | None = None
        self._lock = threading.Lock()
        self._connecting = threading.Lock()
        self.view = HostView()
        self.changed = threading.Condition()
        """Notified whenever the view changes (tests and the watch wait on it)."""

    # --- calls ---------------------------------------------------------------------

    def channel(self) -> Channel:
        """The open channel, or a new one (one opener at a time)."""
        with self._connecting:
            with self._lock:
                if self._channel is not None and not getattr(self._channel, "dead", None):
                    return self._channel
                old, self._channel = self._channel, None
            if old is not None:
                old.close()
            channel = self._open()
            with self._lock:
                self._channel = channel
            return channel

    def call(self, method: str, args: Mapping[str, Any] | None = None,
             timeout: float = 30.0, key: str | None = None) -> Any:
        """Call ``method`` on the host's ``scorch run``; its state follows what happened.

        ``key``: the request's own id there (``Request.key``).
        """
        try:
            result = self.channel().call(method, dict(args or {}), timeout, key)
        except NotRunning as err:
            self._mark(HostState.NOT_RUNNING, str(err))
            raise
        except HostUnreachable as err:
            self._lost(str(err))
            raise
        except OSError as err:
            self._lost(f"{type(err).__name__}: {err}")
            raise HostUnreachable(f"host {self.label}: {err}") from err
        except ScorchError:
            self._answered()  # the host said no: it is there
            raise
        self._answered()
        return result

    def _answered(self) -> None:
        if self.view.state != HostState.CONNECTED:
            self._mark(HostState.CONNECTED, None)
        else:
            self._set(last_seen=time.time())

    def ping(self, timeout: float = PING_TIMEOUT) -> dict[str, Any]:
        """Ping the host: its round trip and clock offset are kept; raise if it does not answer."""
        before = time.time()
        answer: dict[str, Any] = self.call("ping", {}, timeout)
        after = time.time()
        rtt = after - before
        offset = None
        if isinstance(answer.get("time"), int | float):
            offset = (answer["time"] - (before + after) / 2) * 1000.0
        warnings = []
        if self.digest and answer.get("config_digest") and answer["config_digest"] != self.digest:
            warnings.append(f"it runs another text of the config ({answer.get('config')}): "
                            "copy this file there and `scorch reload`")
        extra = sorted(set(answer.get("instances") or []) - set(self.rooms))
        missing = sorted(set(self.rooms) - set(answer.get("instances") or []))
        if extra:
            warnings.append(f"it runs rooms this config does not put there: {', '.join(extra)}")
        if missing:
            warnings.append(f"it does not run {', '.join(missing)}, which this config puts "
                            "there: copy the config and `scorch reload` there")
        self._set(rtt_ms=round(rtt * 1000.0, 3),
                  clock_offset_ms=round(offset, 3) if offset is not None else None,
                  warnings=tuple(warnings))
        return answer

    def reconcile(self, timeout: float = PING_TIMEOUT) -> None:
        """Read the host's rooms (again, once it is back), and how it differs from the config."""
        first = self.view.reconciled_at is None
        self.ping(timeout)
        listed = self.call("list_instances", {}, timeout)
        self.keep_rows(listed.get("instances") or [])
        self._set(reconciled_at=time.time())
        log.log(logging.DEBUG if first else logging.INFO, "host %s: rooms read%s: %s",
                self.label, "" if first else " again", ", ".join(
                    f"{row['name']} {row['state']}" for row in listed.get("instances") or ()))

    def keep_rows(self, rows: list[dict[str, Any]]) -> None:
        """Keep the host's rooms as its ``list_instances`` gave them (shown while it is away)."""
        self._set(rows=tuple(rows))

    def reach(self, timeout: float = CONNECT_TIMEOUT) -> None:
        """Make sure the host answers now (one try); raise why it does not."""
        if self.view.state == HostState.CONNECTED:
            return
        self.ping(timeout)

    # --- state ---------------------------------------------------------------------

    def _set(self, **changes: Any) -> None:
        with self.changed:
            self.view = replace(self.view, **changes)
            self.changed.notify_all()

    def _mark(self, state: HostState, reason: str | None) -> None:
        now = time.time()
        with self.changed:
            old = self.view
            if old.state == state and old.reason == reason:
                return
            seen = now if state == HostState.CONNECTED else old.last_seen
            self.view = replace(old, state=state, reason=reason, last_seen=seen,
                                since=now if old.state != state else old.since)
            self.changed.notify_all()
        if old.state != state:
            level = (logging.DEBUG if old.state == HostState.CONNECTING
                     else logging.INFO if state == HostState.CONNECTED else logging.WARNING)
            log.log(level, "host %s: %s%s", self.label, state,
                    f" ({reason})" if reason else "")

    def _lost(self, reason: str) -> None:
        self._mark(HostState.UNREACHABLE, reason)
        with self._lock:
            channel, self._channel = self._channel, None
        if channel is not None:
            threading.Thread(target=channel.close, name="host-close", daemon=True).start()

    def info(self) -> HostInfo:
        """The host as the API shows it."""
        view = self.view
        return HostInfo(name=self.name, transport=self.via, address=self.address,
                        state=str(view.state), since=view.since, reason=view.reason,
                        rooms=list(self.rooms), last_seen=view.last_seen, rtt_ms=view.rtt_ms,
                        clock_offset_ms=view.clock_offset_ms, reconciled_at=view.reconciled_at,
                        warnings=list(view.warnings))

    def wait_for(self, state: HostState, timeout: float) -> bool:
        """Wait until the host is in ``state``; False when ``timeout`` passed first."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while self.view.state != state:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(left)
        return True

    # --- the watch (its own thread) ----------------------------------------------------

    def watch(self, stop: threading.Event, heartbeat: float = HEARTBEAT,
              backoff: Backoff = RETRY) -> None:
        """Ping while CONNECTED; retry with backoff while not; reconcile on return."""
        while not stop.is_set():
            self._reach_with_backoff(stop, backoff)
            while not stop.wait(heartbeat):
                try:
                    self.ping()
                except ScorchError:
                    break  # marked by call(): back to retrying
            else:
                return

    def _reach_with_backoff(self, stop: threading.Event, backoff: Backoff) -> None:
        def note(state: RetryCallState) -> None:
            wait = state.next_action.sleep if state.next_action else 0.0
            log.debug("host %s: next try in %.2f s (attempt %d)", self.label, wait,
                      state.attempt_number)

        retrying = Retrying(wait=backoff.wait(), sleep=sleep_using_event(stop),
                            stop=stop_when_event_set(stop),
                            retry=retry_if_exception_type(_Lost), before_sleep=note,
                            reraise=False)
        try:
            for attempt in retrying:
                with attempt:
                    self._try_once()
        except Exception:  # stopped while retrying: RetryError
            return

    def _try_once(self) -> None:
        try:
            self.ping(CONNECT_TIMEOUT)
            self.reconcile()
        except ScorchError as err:
            raise _Lost(str(err)) from err

    def close(self) -> None:
        """Close the channel (the host goes on)."""
        with self._lock:
            channel, self._channel = self._channel, None
        if channel is not None:
            channel.close()
