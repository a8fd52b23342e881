"""Places alerts arrive in tests: a local HTTP endpoint (apprise json://) and SMTP server."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Inbox:
    """What arrived, in order, and a condition to wait on."""

    items: list[dict[str, Any]] = field(default_factory=list)
    refuse: int = 0
    """Requests answered 500 before the first accepted (a failing endpoint)."""
    tries: int = 0
    _ready: threading.Condition = field(default_factory=threading.Condition)

    def add(self, item: dict[str, Any]) -> None:
        with self._ready:
            self.items.append(item)
            self._ready.notify_all()

    def wait(self, count: int, timeout: float) -> list[dict[str, Any]]:
        """The first ``count`` items, or what came within ``timeout``."""
        with self._ready:
            self._ready.wait_for(lambda: len(self.items) >= count, timeout)
            return list(self.items)


@contextmanager
def json_endpoint() -> Iterator[tuple[str, Inbox]]:
    """A loopback HTTP server taking apprise's JSON posts; yields its json:// URL."""
    inbox = Inbox()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            inbox.tries += 1
            if inbox.refuse > 0:
                inbox.refuse -= 1
                self.send_response(500)
            else:
                inbox.add(json.loads(body) | {"authorization": self.headers["Authorization"]})
                self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"json://scorch:s3cret-token@127.0.0.1:{server.server_port}/hook", inbox
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@contextmanager
def smtp_server() -> Iterator[tuple[str, Inbox]]:
    """A loopback SMTP server (aiosmtpd); yields an apprise mailto:// URL to it."""
    from aiosmtpd.controller import Controller

    inbox = Inbox()

    class Handler:
        async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
            from email import message_from_bytes

            mail = message_from_bytes(envelope.content)
            inbox.add({"from": envelope.mail_from, "to": envelope.rcpt_tos,
                       "subject": mail["Subject"], "text": envelope.content.decode()})
            return "250 OK"

    with socket.socket() as probe:  # aiosmtpd checks its port itself: it needs a number
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(Handler(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield (f"mailto://127.0.0.1:{port}?user=tech&from=scorch@example.org"
               "&to=tech@example.org&mode=insecure"), inbox
    finally:
        controller.stop()
