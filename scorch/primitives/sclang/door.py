"""The one door to a room's sclang: code from outside the room's actor goes through it.

As :class:`~scorch.primitives.scsynth.door.ScsynthDoor` is to scsynth: the room's actor
:meth:`~SclangDoor.open`\\ s it on each new :class:`~scorch.primitives.sclang.session.
SclangSession` and :meth:`~SclangDoor.shut`\\ s it when that sclang goes; the conductor's
tempo, the watchdog's pings and ``playing`` hold the door, which forwards to the sclang of
the moment or raises the room's own error.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future

from scorch.errors import ScorchError
from scorch.primitives.sclang.protocol import Record
from scorch.primitives.sclang.result import ExecuteResult
from scorch.primitives.sclang.session import DEFAULT_TIMEOUT, SclangSession


class SclangDoor:
    """A room's sclang as everyone but its actor reaches it."""

    def __init__(self, room: str, closed: Callable[[], ScorchError]) -> None:
        self.room = room
        self._closed = closed
        self._session: SclangSession | None = None
        self._lock = threading.Lock()
        self._generation = 0

    def open(self, session: SclangSession) -> None:
        """Forward to ``session`` from now on (a new sclang attached)."""
        with self._lock:
            self._session = session
            self._generation += 1

    def shut(self) -> None:
        """The sclang went: calls raise the room's error until the next :meth:`open`."""
        with self._lock:
            self._session = None

    @property
    def generation(self) -> int:
        """Counts the sclangs opened."""
        return self._generation

    @property
    def is_open(self) -> bool:
        """True while an attached sclang runs behind it."""
        return self._session is not None

    def _now(self) -> SclangSession:
        session = self._session
        if session is None:
            raise self._closed()
        return session

    def submit(self, code: str, timeout: float = DEFAULT_TIMEOUT, *, raw: bool = False,
               ) -> tuple[int, Future[ExecuteResult]]:
        """Send ``code`` (``raw``: scorch's own); its request number and result's future."""
        return self._now().submit(code, timeout, raw=raw)

    def call(self, build: Callable[[str], bytes], answers: tuple[str, ...],
             timeout: float) -> Record | None:
        """Send what ``build(id)`` makes and wait for a record named in ``answers`` (None
        when ``timeout`` passes first)."""
        return self._now().call(build, answers, timeout)

    def ping(self) -> None:
        """Ask sclang for a pong."""
        self._now().ping()

    def busy(self) -> bool:
        """True while a request runs within its time."""
        session = self._session
        return session is not None and session.busy()

    @property
    def last_pong(self) -> float:
        """``time.monotonic()`` of sclang's last record to scorch (0: none)."""
        session = self._session
        return session.last_pong if session is not None else 0.0

    @property
    def installed(self) -> bool:
        """True once scorch's evaluator runs in it (False again while it recompiles)."""
        session = self._session
        return session is not None and session.installed

    @property
    def identity(self) -> str:
        """Which sclang and class library: a new value is a new interpreter or a recompile
        (its clock and variables start again); "" while none runs."""
        session = self._session
        return "" if session is None else f"{session.token}/{session.compiles}"

    @property
    def client_id(self) -> int:
        """sclang's ``s.clientID`` (0 while none runs)."""
        session = self._session
        return session.client_id if session is not None else 0
