"""At most once: a request resent with the same key gets the first run's answer, never a second run.

A client that loses its connection mid-call cannot know whether the call ran;
it sends the request again, with the key it gave the first time
(``Request.key``), on a new connection. The server keeps a table of the keys
of recent calls that are not idempotent: a key it has not seen runs; a key
whose run is still going waits for that run's reply; a key whose run is done
gets its reply at once. The table is bounded (``size`` keys: the oldest
finished ones go first) and time-limited (a finished key is forgotten after
``keep`` seconds). Given a journal file, every finished key is appended to it
with its reply, and a new server reads it back: a request resent after the server
itself restarted (a crash, systemd) still gets the first run's reply. The journal
is rewritten with only the live keys when it holds twice as many lines.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from scorch.errors import InvalidRequest, NoAnswer
from scorch.wire.envelope import Reply, Request

#: Seconds a finished call's reply is kept for a resend.
KEEP = 600.0
#: Keys kept at most (finished ones; a call still running is never forgotten).
SIZE = 4096
#: Seconds a resend waits for the first run's reply.
WAIT = 900.0
#: The journal's name in the state directory.
JOURNAL = "request-keys.jsonl"

log = logging.getLogger(__name__)


def new_key() -> str:
    """A request key no other request has: for a call its caller gave none."""
    return uuid.uuid4().hex


def derive(key: str, part: str) -> str:
    """The key of one part of a keyed request (a host's share of a coordinator's call).

    The same on every resend of the request, and another for every part.
    """
    return hashlib.sha256(f"{key}\0{part}".encode()).hexdigest()[:32]


@dataclass
class _Entry:
    """One key: what was asked with it, and its reply once the run is done."""

    fingerprint: str
    done: threading.Event = field(default_factory=threading.Event)
    reply: Reply | None = None
    finished: float = 0.0


def fingerprint(request: Request) -> str:
    """What a key stands for: the operation (a key given to another one is refused).

    Not its arguments: a resend may rightly differ in them (a coordinator turns a
    ``delay`` into the time it ends anew on each send), and it is still the same request.
    """
    return request.method


class Once:
    """The server's table of recent keys -> (in progress | reply) (thread-safe)."""

    def __init__(self, keep: float = KEEP, size: int = SIZE, wait: float = WAIT,
                 journal: Path | None = None) -> None:
        self.keep = keep
        self.size = size
        self.wait = wait
        self.journal = journal
        self._entries: OrderedDict[str, _Entry] = OrderedDict()  # oldest first
        self._lock = threading.Lock()
        self._lines = 0
        if journal is not None:
            self._load(journal)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def run(self, request: Request, answer: Callable[[], Reply]) -> Reply:
        """``answer()`` the request unless its key ran already: then the first run's reply."""
        key = request.key
        assert key is not None
        mine = fingerprint(request)
        with self._lock:
            self._forget(time.monotonic())
            entry = self._entries.get(key)
            first = entry is None
            if entry is None:
                entry = self._entries[key] = _Entry(mine)
        if first:
            try:
                reply = answer()
            except BaseException:
                with self._lock:  # no reply to give: a resend may run it
                    self._entries.pop(key, None)
                entry.done.set()
                raise
            entry.reply, entry.finished = reply, time.monotonic()
            entry.done.set()
            self._write(key, entry)
            return reply
        if entry.fingerprint != mine:
            return Reply.failed(request.id, InvalidRequest(
                f"request key {key!r} was given to a call of another operation; a key names "
                "one request and its resends"))
        if not entry.done.wait(self.wait) or entry.reply is None:
            return Reply.failed(request.id, NoAnswer(
                f"the first run of request {key!r} ({request.method}) has not answered "
                f"within {self.wait:g} s"))
        return entry.reply.model_copy(update={"id": request.id})

    def _forget(self, now: float) -> None:
        """Drop finished keys older than ``keep``, then the oldest finished beyond ``size``."""
        finished = [(key, entry) for key, entry in self._entries.items() if entry.done.is_set()]
        over = len(self._entries) - self.size
        for key, entry in finished:
            if now - entry.finished > self.keep or over > 0:
                del self._entries[key]
                over -= 1

    # --- the journal -------------------------------------------------------------

    def _load(self, path: Path) -> None:
        """Take the finished keys of an earlier server that are younger than ``keep``."""
        try:
            lines = path.read_text(errors="replace").splitlines()
        except FileNotFoundError:
            return
        except OSError as err:
            log.warning("request keys not read from %s: %s", path, err)
            return
        wall, mono = time.time(), time.monotonic()
        for number, line in enumerate(lines, 1):
            try:
                item = json.loads(line)
                # a key written within the last millisecond may read as just ahead (rounding)
                age = max(0.0, wall - float(item["at"]))
                entry = _Entry(str(item["fingerprint"]), reply=Reply.model_validate(item["reply"]))
                key = str(item["key"])
            except (ValueError, TypeError, KeyError, ValidationError):
                log.warning("%s:%d is not a request key's line; skipped", path, number)
                continue
            if age <= self.keep:
                entry.finished = mono - age
                entry.done.set()
                self._entries.pop(key, None)
                self._entries[key] = entry
        self._lines = len(lines)
        self._forget(mono)

    def _write(self, key: str, entry: _Entry) -> None:
        """Append a finished key to the journal (rewritten when mostly stale)."""
        if self.journal is None or entry.reply is None:
            return
        with self._lock:
            try:
                if self._lines >= 2 * max(self.size, 1) and self._lines >= 2 * len(self._entries):
                    self._rewrite(self.journal)
                with self.journal.open("a") as out:
                    out.write(_line(key, entry) + "\n")
                self._lines += 1
            except OSError as err:  # a full disk: the key still holds for this server
                log.warning("request key not kept in %s: %s", self.journal, err)

    def _rewrite(self, path: Path) -> None:
        """Write only the finished keys held now (under the lock)."""
        partial = path.with_name(path.name + ".new")
        done = [(key, entry) for key, entry in self._entries.items() if entry.done.is_set()]
        partial.write_text("".join(_line(key, entry) + "\n" for key, entry in done))
        os.replace(partial, path)
        self._lines = len(done)


def _line(key: str, entry: _Entry) -> str:
    """A finished key as one journal line: its wall-clock end, operation and reply."""
    assert entry.reply is not None
    at = time.time() - (time.monotonic() - entry.finished)
    return json.dumps({"key": key, "fingerprint": entry.fingerprint, "at": round(at, 3),
                       "reply": entry.reply.model_dump(mode="json")}, separators=(",", ":"))
