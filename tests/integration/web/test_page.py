"""The technician's page in a real browser, served by a real ``scorch run`` (issue 28).

One ``scorch run`` of two rooms and one Chromium for the module. The page listens on
the outer end of a veth pair, so the token is asked; the browser opens it once with
``?token=`` and keeps it as a cookie. Screenshots go to docs/images.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scorch.api.remote import RemoteService
from scorch.primitives.scsynth.client import OscClient
from scorch.state.playing import METER_NODE_ID
from scorch.wire.access import READONLY_TOKEN_FILE, TOKEN_FILE
from tests.conftest import jack_name, node_exists, scsynth_param
from tests.support.hosts_harness import Namespace, ScorchRun, free_tcp_port, namespaces_allowed
from tests.support.web_harness import CHROMIUM, IMAGES, McpPipe, open_panel

pytestmark = pytest.mark.integration

playwright_api = pytest.importorskip("playwright.sync_api")


class Served:
    """The running installation and how to reach its page."""

    def __init__(self, folder: Path, ns: Namespace) -> None:
        self.folder = folder
        self.ns = ns
        self.port = free_tcp_port(ns.here)
        self.state = folder / "state"
        self.config = folder / "config.toml"
        self.config.write_text(textwrap.dedent(f"""
            state_dir = "{self.state}"
            [audio]
            driver = "dummy"
            jack_server = "{jack_name('web')}"
            [docs]
            build = "on-demand"
            [midi]
            enabled = false
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


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    why = namespaces_allowed()
    if why is not None:
        pytest.skip(why)
    ns = Namespace(9)
    try:
        served = Served(tmp_path_factory.mktemp("web"), ns)
        try:
            yield served
        finally:
            served.api.close()
            served.mcp.close()
            assert served.run.stop() == 0, served.run.tail()
    finally:
        ns.delete()


@pytest.fixture(scope="module")
def browser(served: Served) -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip("chromium is missing (make system-deps installs it)")
    with playwright_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def page(served: Served, browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(served.url + f"?token={served.token}")
    yield page
    context.close()


def state_of(page: Any, room: str) -> str:
    return str(page.get_attribute(f"#room-{room}", "data-state"))


def test_no_meter_runs_while_nobody_watches(served: Served) -> None:
    assert not served.metered("lobby") and not served.metered("gallery")


def test_the_page_shows_every_room_ready_and_keeps_the_token_out_of_the_address(
        served: Served, page: Any, browser: Any) -> None:
    for room in ("lobby", "gallery"):
        page.wait_for_selector(f"#room-{room}[data-state=READY]", timeout=5000)
    assert page.url == served.url, "the token stayed in the address bar"
    cookie = next(c for c in page.context.cookies() if c["name"] == "scorch_token")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert page.evaluate("document.cookie").find(served.token) < 0
    page.wait_for_selector("#room-lobby .meter", timeout=3000)
    page.click("#room-lobby .tree-toggle")
    page.wait_for_selector("#room-lobby .tree svg circle.synth", timeout=4000)
    assert "node hum" in page.inner_text("#room-lobby .tree")


def test_a_node_played_through_mcp_moves_that_rooms_meter(served: Served, page: Any) -> None:
    page.wait_for_selector("#room-gallery .meter", timeout=3000)
    quiet = float(page.get_attribute("#room-gallery", "data-peak") or -90)
    assert quiet <= -80
    played = served.mcp.call("play", {"instance": "gallery", "synthdef": "sine",
                                      "name": "tone", "params": {"freq": 330, "amp": 0.3}})
    assert not played.get("isError"), played
    page.wait_for_function(
        "() => Number(document.querySelector('#room-gallery').dataset.peak) > -30",
        timeout=3000)
    assert float(page.get_attribute("#room-lobby", "data-peak") or -90) < -20
    page.wait_for_selector("#room-gallery .nodes button[data-node=tone]", timeout=3000)
    # The meter is scorch's: not in playing, not a named node.
    room = served.api.call("playing", {"instance": "gallery", "detail": True}).model_dump()
    tree, synths = room["rooms"][0]["tree"], room["rooms"][0]["synths"]
    assert METER_NODE_ID not in [t["id"] for t in tree] and synths == {"node tone": 1}
    page.click("#room-gallery .nodes button[data-node=tone]")  # stop it, confirmed
    page.wait_for_selector("#room-gallery .nodes button[data-node=tone]", state="detached",
                           timeout=5000)
    assert "tone" not in served.status()["gallery"]["nodes"]
    # A stop frees every synth, the meter too: it comes back by itself.
    served.api.call("stop", {"instance": "gallery"})
    served.wait_metered("gallery", True)


def test_the_claude_panel_shows_the_rooms_and_its_fader_moves_the_param_on_scsynth(
        served: Served, page: Any) -> None:
    tools = {t["name"]: t for t in served.mcp.request("tools/list", {})["result"]["tools"]}
    uri = tools["status"]["_meta"]["ui"]["resourceUri"]
    assert tools["listen"]["_meta"]["ui"]["resourceUri"] == uri
    assert tools["live"]["_meta"]["ui"]["visibility"] == ["app"]
    assert tools["fader"]["_meta"]["ui"]["visibility"] == ["app"]
    read = served.mcp.request("resources/read", {"uri": uri})["result"]["contents"][0]
    assert read["mimeType"] == "text/html;profile=mcp-app"
    status = served.mcp.call("status", {})
    assert "lobby" in status["content"][0]["text"], "status lost its text for other clients"
    host = page.context.new_page()  # the host page is a page of its own (about:blank)
    host.set_viewport_size({"width": 820, "height": 620})
    try:
        panel = open_panel(host, served.mcp, read["text"], status)
        panel.locator("section[data-room=lobby][data-state=READY]").wait_for(timeout=5000)
        panel.locator("section[data-room=gallery]").wait_for(timeout=2000)
        fader = panel.locator("input[data-room=lobby][data-node=hum][data-param=freq]")
        fader.wait_for(timeout=3000)
        fader.fill("800")  # the input event: the panel calls the fader tool
        lo, hi = float(fader.get_attribute("data-lo")), float(fader.get_attribute("data-hi"))
        exp = fader.get_attribute("data-warp") == "exp"
        shown = lo * (hi / lo) ** 0.8 if exp else lo + (hi - lo) * 0.8
        node = served.status()["lobby"]["nodes"]["hum"]
        port = served.status()["lobby"]["port"]
        deadline = time.monotonic() + 3.0
        while abs((value := scsynth_param(port, node["node_id"], "freq")) - shown) > 0.01 * shown:
            assert time.monotonic() < deadline, f"freq on scsynth is {value}, the fader {shown}"
            time.sleep(0.05)
        kept = served.status()["lobby"]["nodes"]["hum"]["params"]["freq"]
        assert abs(kept - shown) < 0.01 * shown, "the value is not kept for restarts"
        host.wait_for_timeout(1200)  # a refresh or two: the meters, the value read back
        IMAGES.mkdir(parents=True, exist_ok=True)
        host.screenshot(path=str(IMAGES / "claude-panel.png"), full_page=True)
        assert "tools/call" in host.evaluate("window.appCalls")
    finally:
        host.close()


def test_a_killed_scsynth_shows_restarting_then_ready_with_the_event(
        served: Served, page: Any) -> None:
    pid = served.status()["lobby"]["pids"]["scsynth"]
    os.kill(pid, signal.SIGKILL)
    # Shown restarting (a restart may be over within a second: the page keeps what it showed;
    # a loaded machine may take a few seconds to notice, push and draw it).
    page.wait_for_selector("#room-lobby[data-seen~=RESTARTING]", timeout=6000)
    assert state_of(page, "gallery") == "READY"
    page.wait_for_selector("#room-lobby[data-state=READY]", timeout=20000)
    page.wait_for_selector("#events li[data-kind=CRASHED][data-room=lobby]", timeout=2000)
    # The new scsynth is metered again: the hum it restored shows.
    page.wait_for_function(
        "() => Number(document.querySelector('#room-lobby').dataset.peak) > -60", timeout=5000)
    page.check("#log-trouble")
    assert page.locator("#events li").count() >= 1
    kinds = page.eval_on_selector_all("#events li", "l => l.map(e => e.dataset.kind)")
    assert set(kinds) <= {"CRASHED", "HUNG", "FAILED", "DEGRADED", "NODE_ENDED", "BOOT_FAILED"}
    page.uncheck("#log-trouble")


def test_the_restart_button_restarts_only_its_room(served: Served, page: Any) -> None:
    before = served.status()
    page.wait_for_selector("#room-gallery[data-state=READY]", timeout=5000)
    page.click("#room-gallery .restart")  # the confirm dialog is accepted
    old = before["gallery"]["pids"]["scsynth"]
    deadline = time.monotonic() + 30
    while True:  # restarted: READY again, on a new scsynth
        after = served.status()
        if after["gallery"]["state"] == "READY" and after["gallery"]["pids"]["scsynth"] not in (
                None, old):
            break
        assert time.monotonic() < deadline, f"gallery was not restarted: {after['gallery']}"
        time.sleep(0.2)
    page.wait_for_selector("#room-gallery[data-state=READY]", timeout=5000)
    assert after["lobby"]["pids"] == before["lobby"]["pids"]
    assert after["gallery"]["pids"]["scsynth"] != before["gallery"]["pids"]["scsynth"]


def test_without_the_token_another_machine_is_refused(served: Served) -> None:
    assert served.from_outside(
        ("GET", "/", None, None), ("GET", "/api/view", None, None),
        ("POST", "/api/panic", None, None), ("GET", "/", "not-" + served.token, None),
        ("GET", "/api/view", served.token, None),
        ("GET", "/api/view", served.token, "http://evil.example"),
        ("POST", "/api/panic", served.readonly, None),
    ) == [401, 401, 401, 401, 200, 403, 403]


def test_a_read_only_page_shows_but_the_server_refuses_its_actions(
        served: Served, browser: Any) -> None:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(served.url + f"?token={served.readonly}")
        page.wait_for_selector("#room-lobby[data-state=READY]", timeout=5000)
        assert not page.is_visible("#room-lobby .restart")
        assert page.inner_text("#role") == "read-only"
        status = page.evaluate(
            "async () => (await fetch('/api/restart?room=lobby', {method: 'POST'})).status")
        assert status == 403
    finally:
        context.close()


def test_the_page_fits_a_phone_and_its_pictures_go_to_the_docs(
        served: Served, page: Any) -> None:
    """Last, so that the pictures show a log with a crash and a restart, and a sparkline."""
    played = served.mcp.call("play", {"instance": "gallery", "synthdef": "sine",
                                      "name": "drone", "params": {"freq": 110, "amp": 0.1}})
    assert not played.get("isError"), played
    page.wait_for_selector("#room-gallery .nodes button[data-node=drone]", timeout=3000)
    IMAGES.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(IMAGES / "web-page.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})  # a phone's width
    page.wait_for_timeout(300)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the phone must scroll sideways: the page is {width} px wide"
    page.screenshot(path=str(IMAGES / "web-page-phone.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 860})
    served.api.call("release", {"instance": "gallery", "node": "drone"})


def test_the_meters_stop_once_the_last_page_closed(served: Served, page: Any) -> None:
    page.context.close()
    for room in ("lobby", "gallery"):
        served.wait_metered(room, False, timeout=10.0)  # the panel's lease ends too
