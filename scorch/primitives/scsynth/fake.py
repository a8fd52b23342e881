"""A scsynth that is a function: a :class:`~scorch.primitives.scsynth.wire.Wire` for tests.

Each message a client sends (bundles opened) is kept in :attr:`FakeScsynth.sent` and
handed to ``answer``, whose replies come back as scsynth's would; :meth:`FakeScsynth.tell`
sends one unasked (a node's end, a meter's report). :func:`scsynth_answers` answers what
every client asks (``/status``, ``/sync``, ``/notify``), as httpx's ``MockTransport``
answers with a handler.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterable

from scorch.primitives.osc import OscArg, OscMessage, decode_packet, encode_message

Answer = Callable[[OscMessage], Iterable[OscMessage]]


def scsynth_answers(msg: OscMessage) -> list[OscMessage]:
    """The replies a quiet scsynth gives: ``/status.reply``, ``/synced``, ``/done /notify``."""
    status: tuple[OscArg, ...] = (1, 0, 0, 1, 0, 0.5, 0.5, 48000.0, 48000.0)
    replies = {"/status": ("/status.reply", status), "/sync": ("/synced", msg.args[:1]),
               "/notify": ("/done", ("/notify", 0))}
    found = replies.get(msg.address)
    return [OscMessage(found[0], tuple(found[1]))] if found else []


class FakeScsynth:
    """Answers each message with ``answer(message)``; keeps what was sent."""

    def __init__(self, answer: Answer = scsynth_answers) -> None:
        self.answer = answer
        self.sent: list[OscMessage] = []
        self._replies: queue.Queue[bytes] = queue.Queue()

    def send(self, packet: bytes) -> None:
        """Keep each message and queue its answers."""
        for msg in decode_packet(packet):
            self.sent.append(msg)
            for reply in self.answer(msg):
                self.tell(reply)

    def tell(self, msg: OscMessage) -> None:
        """Send the client a message it did not ask for."""
        self._replies.put(encode_message(msg.address, *msg.args))

    def receive(self, timeout: float | None) -> bytes | None:
        """The next answer (None after ``timeout``)."""
        try:
            return self._replies.get(timeout=timeout)
        except queue.Empty:
            return None

    def wake(self) -> None:
        """An empty datagram, as the real wire's nudge."""
        self._replies.put(b"")

    def close(self) -> None:
        """Nothing to let go of."""
