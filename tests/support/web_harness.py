"""The technician's page under test: a real ``scorch run`` serving it, a browser, an MCP pipe.

``scorch run`` listens for the page on the outer end of a veth pair made for the test
(``10.x.y.1``: not loopback, so the token is asked, and no external address); a
request from inside the namespace is a request from another machine. Chromium is
Debian's (``/usr/bin/chromium``), driven by Playwright's Python API, which cannot
download browsers here.
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from typing import Any

from tests.support.mcp.stdio import INITIALIZE, INITIALIZED, Session

CHROMIUM = Path("/usr/bin/chromium")
#: Where the pictures the docs show are written by the test run.
IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"


class McpPipe:
    """A ``scorch mcp`` (attached to the running ``scorch run``) called tool by tool."""

    def __init__(self, config: Path, cache: Path) -> None:
        self.session = Session(config, cache, snapshot=None)
        self._ids = itertools.count(100)
        self.session.send(INITIALIZE)  # answered while the caller does something else
        self._ready = False

    def _initialized(self) -> None:
        if not self._ready:
            self.session.answers(1)
            self.session.send(INITIALIZED)
            self._ready = True

    def request(self, method: str, params: dict[str, Any], timeout: float = 60.0
                ) -> dict[str, Any]:
        """One JSON-RPC request and its answer (the whole message)."""
        self._initialized()
        request_id = next(self._ids)
        self.session.send({"jsonrpc": "2.0", "id": request_id, "method": method,
                           "params": params})
        deadline = time.monotonic() + timeout
        while True:
            answer = self.session.answers(1, timeout=max(0.1, deadline - time.monotonic()))[0]
            if answer.get("id") == request_id:
                return answer

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A tool's result (``content``, ``structuredContent``, ``isError``)."""
        answer = self.request("tools/call", {"name": tool, "arguments": arguments})
        assert "result" in answer, json.dumps(answer)[:2000]
        result: dict[str, Any] = answer["result"]
        return result

    def close(self) -> str:
        """End it; its stderr."""
        return self.session.close()


#: The minimal MCP Apps host page (the app's bridge: ui/initialize, tools/call...).
APPS_HOST = Path(__file__).with_name("apps_host.html")


def open_panel(page: Any, mcp: McpPipe, html: str, tool_result: dict[str, Any]) -> Any:
    """Show the app ``html`` in the host page; its tools/call go to ``mcp``; its frame."""

    def call(name: str, arguments: str) -> str:
        return json.dumps(mcp.call(name, json.loads(arguments)))

    page.expose_function("scorchCall", call)
    page.set_content(APPS_HOST.read_text())
    page.evaluate("([html, result]) => window.startApp(html, result)", [html, tool_result])
    return page.frame_locator("#app")
