"""The coordinator: the one API over every host of an installation, for the laptop.

A :class:`Coordinator` is a :class:`~scorch.api.operation.Service` like the
others: the CLI and the MCP tools call it the same way. It runs no room. Each
call goes to the hosts of the rooms it names (``scorch.api.fanout``), in
parallel, each within its own timeout, and the answers are merged into one:
rooms listed with their host, and every host with its state. A host that is
down or cut off never holds the others up: its rooms are reported with why,
and the rest is done.

A long-lived coordinator (``scorch mcp``) watches every host in a thread of
its own (:meth:`~scorch.hosts.link.HostLink.watch`): a lost host is
retried with backoff and reconciled when it is back, and calls to it fail at
once meanwhile instead of waiting out a timeout. A one-shot command (``scorch
status``) asks each host once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from functools import partial
from typing import Any

from scorch.api import fanout
from scorch.api.operation import Args, Operation, Result
from scorch.api.ops import lookup
from scorch.config import Config
from scorch.errors import HostUnreachable, NotRunning, ScorchError, Unavailable
from scorch.hosts import CONNECT_TIMEOUT, Channel, HostLink, HostState, open_channel
from scorch.wire import derive, new_key

log = logging.getLogger(__name__)

#: Seconds a host may take to answer a read that does not wait (status, list...).
READ_TIMEOUT = 2.0
#: Seconds beyond its own timeout the coordinator waits for all hosts' answers.
MARGIN = 1.0

Opener = Callable[[str | None, Config], Channel]


class Coordinator:
    """Every host's ``scorch run`` behind the one API (thread-safe)."""

    mode = "coordinator"

    def __init__(self, config: Config, *, watch: bool = False,
                 only: Sequence[str | None] | None = None, opener: Opener = open_channel) -> None:
        self.config = config
        self.parts: list[str | None] = list(only) if only is not None else config.parts()
        self.links: dict[str | None, HostLink] = {}
        for part in self.parts:
            host = config.hosts.get(part) if part is not None else None
            self.links[part] = HostLink(
                part, host.via if host else "local",
                host.address if host else "127.0.0.1",
                [n for n, i in config.instances.items() if i.host == part],
                partial(opener, part, config), config.digest)
        self.watching = watch
        self._pool = ThreadPoolExecutor(max_workers=max(4, 4 * len(self.links)),
                                        thread_name_prefix="coordinator")
        self._stop = threading.Event()
        self._watchers: list[threading.Thread] = []
        if watch:
            for link in self.links.values():
                thread = threading.Thread(target=link.watch, args=(self._stop,),
                                          name=f"host-{link.label}", daemon=True)
                thread.start()
                self._watchers.append(thread)

    # --- the API -------------------------------------------------------------------

    def call(self, name: str, args: Mapping[str, Any] | Args, key: str | None = None) -> Result:
        """Run operation ``name`` on the hosts it concerns; one answer.

        A call that is not idempotent carries a request key (``key``, or a new one) to
        each host, derived from it per host: sent again with the same ``key``, it runs
        once on each host.
        """
        op = lookup(name)
        parsed = _absolute(op.parse(args))
        if key is None and not op.access_of(parsed).idempotent:
            key = new_key()
        try:
            return self._call(op, parsed, key)
        except ScorchError as err:
            op.blame(err, parsed)
            raise

    def _call(self, op: Operation[Any, Any], parsed: Args, key: str | None) -> Result:
        name = op.name
        if op.spread.across is not None:
            own = op.spread.across(self, parsed)
            if own is not None:
                return own
        plan = fanout.plan(op, parsed, self.config, self.parts)
        timeout = host_timeout(op, parsed)
        if plan.one:
            return self._first(op, parsed, plan.hosts, timeout, key)
        answers, failures = self._fan(op, parsed, plan.hosts, timeout, key)
        if op.spread.roll_call:
            for host, answer in answers.items():
                self.links[host].keep_rows(answer.get("instances") or [])
        for error in failures.values():
            if not isinstance(error, Unavailable):
                raise error  # the host refused the request itself: say why
        parts = list(answers.items())
        for host, error in failures.items():
            view = self.links[host].view
            last = {row["name"]: row for row in view.rows}
            filler = fanout.unanswered(op, plan.rooms[host], f"host {fanout.label(host)}: "
                                       f"{error}", self.config, last, str(view.state))
            if filler is None:
                raise _partial(name, answers, failures)
            parts.append((host, filler))
        merged = fanout.merge(op, parsed, parts, self.config)
        if "hosts" in op.result.model_fields:
            merged["hosts"] = [link.info().model_dump() for link in self.links.values()]
        if "hosted_by" in op.result.model_fields:
            merged["hosted_by"] = "coordinator"
        result: Result = op.result.model_validate(merged)
        return result

    def answers(self, name: str, args: Args) -> dict[str | None, dict[str, Any]]:
        """Every host's own answer to ``name`` (those that gave one), for an ``across``."""
        op = lookup(name)
        answers, _ = self._fan(op, args, tuple(self.parts), host_timeout(op, args))
        return answers

    def ask(self, host: str | None, name: str, args: Args) -> dict[str, Any]:
        """One host's own answer to ``name``, for an ``across`` (its error when it fails).

        A change gets a key of its own, as :meth:`call` gives one: the link's resend after
        a dropped connection then gets the host's first answer, never a second run."""
        op = lookup(name)
        key = None if op.access_of(args).idempotent else new_key()
        return self._ask(self.links[host], name, args.model_dump(mode="json"),
                         host_timeout(op, args), key=_part(key, host))

    def _fan(self, op: Operation[Any, Any], args: Args, hosts: tuple[str | None, ...],
             timeout: float, key: str | None = None,
             ) -> tuple[dict[str | None, dict[str, Any]], dict[str | None, ScorchError]]:
        """Ask ``hosts`` in parallel; their answers and their errors, by host."""
        dumped = args.model_dump(mode="json")
        ping = "hosts" in op.result.model_fields and not self.watching
        futures = {host: self._pool.submit(self._ask, self.links[host], op.name, dumped,
                                           timeout, ping, _part(key, host))
                   for host in hosts}
        answers: dict[str | None, dict[str, Any]] = {}
        failures: dict[str | None, ScorchError] = {}
        deadline = time.monotonic() + timeout + CONNECT_TIMEOUT + MARGIN
        for host, future in futures.items():
            try:
                answers[host] = future.result(timeout=max(0.0, deadline - time.monotonic()))
            except FutureTimeout:
                failures[host] = HostUnreachable(f"no answer within {timeout:g} s")
            except ScorchError as err:
                failures[host] = err
        return answers, failures

    def _ask(self, link: HostLink, name: str, args: dict[str, Any],
             timeout: float, ping: bool = False, key: str | None = None) -> dict[str, Any]:
        """One host's answer; a host known to be down fails at once while it is watched.

        ``ping`` first (a one-shot status): the host's round trip, clock and config.
        """
        view = link.view
        if self.watching and view.state in (HostState.UNREACHABLE, HostState.NOT_RUNNING):
            kind = NotRunning if view.state == HostState.NOT_RUNNING else HostUnreachable
            raise kind(f"{view.state} since {time.strftime('%H:%M:%S', time.localtime(view.since))}"
                       f" ({view.reason}); retried in the background")
        if self.watching and view.state == HostState.CONNECTING:
            link.wait_for(HostState.CONNECTED, CONNECT_TIMEOUT)
        first = link.view.state != HostState.CONNECTED and not self.watching
        if ping:
            link.ping(timeout + (CONNECT_TIMEOUT if first else 0.0))
            first = False
        answer: dict[str, Any] = link.call(name, args,
                                           timeout + (CONNECT_TIMEOUT if first else 0.0), key)
        return answer

    def _first(self, op: Operation[Any, Any], args: Args, hosts: tuple[str | None, ...],
               timeout: float, key: str | None = None) -> Result:
        """The answer of the first host that gives one (hosts known down are tried last)."""
        ordered = sorted(hosts, key=lambda h: self.links[h].view.state != HostState.CONNECTED)
        errors: list[str] = []
        for host in ordered:
            try:
                answer = self._ask(self.links[host], op.name, args.model_dump(mode="json"),
                                   timeout, key=_part(key, host))
            except Unavailable as err:
                errors.append(f"{fanout.label(host)}: {err}")
                continue
            result: Result = op.result.model_validate(answer)
            return result
        raise HostUnreachable(f"{op.name}: no host answered: {'; '.join(errors)}")

    def hosts(self) -> list[dict[str, Any]]:
        """Every host and its state now."""
        return [link.info().model_dump() for link in self.links.values()]

    def close(self) -> None:
        """Stop watching, close every channel (the hosts go on)."""
        self._stop.set()
        for thread in self._watchers:
            thread.join(timeout=5.0)
        for link in self.links.values():
            link.close()
        self._pool.shutdown(wait=False, cancel_futures=True)


def host_timeout(op: Operation[Any, Any], args: Args) -> float:
    """How long one host may take: a quick read gets READ_TIMEOUT, the rest their patience.

    The operation's access, not its action's: an action that only reads may still take
    its time (a sample search, a session diff).
    """
    if op.access.read_only and op.waits is None:
        return READ_TIMEOUT
    return op.answer_within(args)


def _part(key: str | None, host: str | None) -> str | None:
    """A host's key of a keyed call: the same for every resend of it, another per host."""
    return derive(key, fanout.label(host)) if key is not None else None


def _absolute(args: Args) -> Args:
    """``delay`` as the time it ends, here, once: every host gets the same ``at``."""
    delay = getattr(args, "delay", None)
    if delay is None:
        return args
    return args.model_copy(update={"at": time.time() + delay, "delay": None})


def _partial(name: str, answers: Mapping[str | None, Any],
             failures: Mapping[str | None, ScorchError]) -> ScorchError:
    failed = "; ".join(f"host {fanout.label(h)}: {err}" for h, err in failures.items())
    done = ", ".join(fanout.label(h) for h in answers)
    if not answers:
        first = next(iter(failures.values()))
        return type(first)(f"{name}: {failed}") if isinstance(first, Unavailable) else first
    return HostUnreachable(f"{name} was done on {done}, not on every host: {failed}")
