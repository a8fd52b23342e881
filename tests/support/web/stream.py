"""The page's server-sent-events stream read over HTTP, as the page reads it: each ``change``
event kept (the change bus's, as JSON), in a thread, until stopped."""

from __future__ import annotations

import http.client
import json
import threading
from types import TracebackType
from typing import Any


class PageStream:
    """``GET /api/stream`` of the page at ``host``:``port`` (a loopback page open without a
    token, or ``token`` given); :attr:`changes` fills as the page is sent them."""

    def __init__(self, host: str, port: int, token: str | None = None) -> None:
        self.changes: list[dict[str, Any]] = []
        self.opened = threading.Event()
        self._stop = threading.Event()
        self._connection = http.client.HTTPConnection(host, port, timeout=30.0)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._connection.request("GET", "/api/stream", headers=headers)
        self._answer = self._connection.getresponse()
        assert self._answer.status == 200, self._answer.read()
        self._thread = threading.Thread(target=self._read, name="page-stream", daemon=True)
        self._thread.start()
        assert self.opened.wait(10.0), "the page's stream sent nothing"

    def _read(self) -> None:
        event = ""
        while not self._stop.is_set() and (line := self._answer.readline().decode()):
            if line.startswith("event:"):
                event = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                if event == "change":
                    self.changes.append(json.loads(line.split(":", 1)[1]))
                self.opened.set()

    def close(self) -> None:
        """Stop reading (the next line the page sends ends the thread) and hang up."""
        self._stop.set()
        self._thread.join(5.0)
        self._connection.close()

    def __enter__(self) -> PageStream:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


def params_changes(changes: list[dict[str, Any]], room: str, node: str,
                   param: str) -> list[tuple[int, str, float]]:
    """(seq, by, value) of each ParamsChanged of ``param`` of ``room``'s ``node``, in order."""
    return [(c["seq"], c["by"], c["params"][param]) for c in changes
            if c["change"] == "ParamsChanged" and (c["room"], c["node"]) == (room, node)
            and param in c["params"]]
