"""The technician's page under test: a real ``scorch run`` serving it, a browser, an MCP pipe.

:class:`Served` is the installation the page tests share (``tests/integration/web``
makes it once for the package).

``scorch run`` listens for the page on the outer end of a veth pair made for the test
(``10.x.y.1``: not loopback, so the token is asked, and no external address); a
request from inside the namespace is a request from another machine. Chromium is
Debian's (``/usr/bin/chromium``), driven by Playwright's Python API, which cannot
download browsers here.
"""

from __future__ import annotations

import itertools
import json
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from scorch.api.remote import RemoteService
from scorch.primitives.scsynth.client import OscClient
from scorch.state.playing import METER_NODE_ID
from scorch.wire.access import READONLY_TOKEN_FILE, TOKEN_FILE
from tests.conftest import jack_name, node_exists
from tests.support.hosts.harness import Namespace, ScorchRun, free_tcp_port
from tests.support.mcp.stdio import INITIALIZE, INITIALIZED, Session

CHROMIUM = Path("/usr/bin/chromium")
#: A name the test browser resolves to 127.0.0.1 (its own resolver rule): a page of a site
#: whose DNS answer was rebound to this machine, as an attacker's would be.
REBOUND = "rebound.example"
#: How the test browser is launched (no sandbox: root on CI).
BROWSER_ARGS = ["--no-sandbox", f"--host-resolver-rules=MAP {REBOUND} 127.0.0.1"]
#: Where the pictures the docs show are written by the test run.
IMAGES = Path(__file__).resolve().parents[3] / "docs" / "images"
#: The JACK MIDI port a test plays keys on (routed to gallery by ``[[midi.keys]]``).
KEYS_PORT = "webkeys"


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


class Served:
    """The running installation and how to reach its page: two rooms (lobby plays ``hum``),
    meters at 20 Hz, MIDI keys from a JACK port into gallery."""

    def __init__(self, folder: Path, ns: Namespace) -> None:
        self.folder = folder
        self.ns = ns
        self.port = free_tcp_port(ns.here)
        self.state = folder / "state"
        self.jack = jack_name("web")
        self.config = folder / "config.toml"
        self.config.write_text(textwrap.dedent(f"""
            state_dir = "{self.state}"
            [audio]
            driver = "dummy"
            jack_server = "{self.jack}"
            [docs]
            build = "on-demand"
            [midi]
            backend = "jack"
            rescan_interval = 0.1
            [[midi.keys]]
            port = "{KEYS_PORT}"
            instance = "gallery"
            synthdef = "sine"
            [watchdog]
            backoff_min = 0.05
            backoff_max = 0.2
            [web]
            listen = "{ns.here}:{self.port}"
            meter_hz = 20
            [instances.lobby]
            synthdefs = ["sine"]
            [instances.lobby.nodes.hum]
            synthdef = "sine"
            params = {{ freq = 220, amp = 0.05 }}
            [instances.gallery]
            synthdefs = ["sine"]
            [[cues]]
            number = 1
            name = "hum up"
            do = [{{ op = "set", instance = "lobby", node = "hum", params = {{ freq = 330 }} }}]
            """))
        self.run = ScorchRun(self.config, None, folder / "run.log")
        self.run.wait_serving(self.state)
        self.url = f"http://{ns.here}:{self.port}/"
        deadline = time.monotonic() + 10
        while True:  # the page listens right after the control socket
            try:
                socket.create_connection((ns.here, self.port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, f"the page did not listen:\n{self.run.tail()}"
                time.sleep(0.05)
        self.token = (self.state / TOKEN_FILE).read_text().strip()
        self.readonly = (self.state / READONLY_TOKEN_FILE).read_text().strip()
        self.api = RemoteService(self.state / "control.sock")
        self.mcp = McpPipe(self.config, folder / "cache")  # attached: scorch run serves

    def metered(self, room: str) -> bool:
        """Whether the room's scsynth runs scorch's meter synth now."""
        osc = OscClient(self.status()[room]["port"])
        try:
            return node_exists(osc, METER_NODE_ID)
        finally:
            osc.close()

    def wait_metered(self, room: str, metered: bool, timeout: float = 6.0) -> None:
        deadline = time.monotonic() + timeout
        while self.metered(room) != metered:
            assert time.monotonic() < deadline, f"{room}: meter {'not ' * metered}running"
            time.sleep(0.1)

    def status(self) -> dict[str, dict[str, Any]]:
        rows = self.api.call("status", {}).model_dump()["instances"]
        return {row["name"]: row for row in rows}

    def from_outside(self, *requests: tuple[str, str, str | None, str | None]) -> list[int]:
        """The HTTP status each request (method, path, token, Origin) gets from inside the
        namespace, as from another machine; one process sends them all."""
        code = textwrap.dedent(f"""
            import json, sys, urllib.request, urllib.error
            for method, path, token, origin in json.loads(sys.argv[1]):
                headers = {{"Authorization": f"Bearer {{token}}"}} if token else {{}}
                if origin:
                    headers["Origin"] = origin
                r = urllib.request.Request("{self.url.rstrip('/')}" + path, method=method,
                                           headers=headers)
                try:
                    print(urllib.request.urlopen(r, timeout=5).status)
                except urllib.error.HTTPError as e:
                    print(e.code)
            """)
        done = subprocess.run(["ip", "netns", "exec", self.ns.name, sys.executable, "-c", code,
                               json.dumps(requests)], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        return [int(line) for line in done.stdout.split()]


class Dialogs:
    """Answers the page's confirm dialogs: yes, unless told to say no to the next ones."""

    def __init__(self) -> None:
        self.declines = 0
        """How many of the next dialogs to dismiss."""
        self.asked: list[str] = []
        """Every question the page asked."""
        self.typed: str | None = None
        """What to type into the page's prompts (None: accept what it offers)."""

    def answer(self, dialog: Any) -> None:
        """Playwright's dialog handler."""
        self.asked.append(dialog.message)
        if self.declines > 0:
            self.declines -= 1
            dialog.dismiss()
        elif dialog.type == "prompt":
            dialog.accept(dialog.default_value if self.typed is None else self.typed)
        else:
            dialog.accept()
