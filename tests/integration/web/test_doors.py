"""The HTTP doors on loopback: only the token opens them, whoever the account (issue 37).

One ``scorch run`` of one room serves the page and MCP over HTTP, both on 127.0.0.1,
the defaults otherwise: every request needs the token. Another account of this machine,
made for the test, is refused without it and served with it; a page of a site rebound
to 127.0.0.1, in a real browser, is refused whatever it sends; the read-only token never
acts, whatever cookie comes with it.
"""

from __future__ import annotations

import json
import stat
import subprocess
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from scorch.api.remote import RemoteService
from scorch.web.gate import FULL, _mac, cookie_name
from scorch.wire.access import READONLY_TOKEN_FILE, TOKEN_FILE
from tests.conftest import jack_name
from tests.support.hosts.harness import ScorchRun, free_tcp_port
from tests.support.mcp.http import wait_listening
from tests.support.mcp.stdio import SCORCH
from tests.support.web.accounts import another_account
from tests.support.web.harness import REBOUND

pytestmark = pytest.mark.integration

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"}}}
MCP_HEADERS = {"content-type": "application/json",
               "accept": "application/json, text/event-stream"}
ACTIONS = ["restart?room=door", "panic", "release?room=door&node=hum"]


class Doors:
    """``scorch run`` of one room, its page and MCP over HTTP on loopback, the defaults."""

    def __init__(self, folder: Path) -> None:
        self.web_port, self.mcp_port = free_tcp_port(), free_tcp_port()
        self.state = folder / "state"
        self.config = folder / "config.toml"
        self.config.write_text(textwrap.dedent(f"""
            state_dir = "{self.state}"
            [audio]
            driver = "dummy"
            jack_server = "{jack_name('doors')}"
            [docs]
            build = "on-demand"
            [midi]
            enabled = false
            [web]
            listen = "127.0.0.1:{self.web_port}"
            [mcp]
            http = "127.0.0.1:{self.mcp_port}"
            [instances.door]
            synthdefs = ["sine"]
            [instances.door.nodes.hum]
            synthdef = "sine"
            params = {{ freq = 220, amp = 0.001 }}
            """))
        self.run = ScorchRun(self.config, None, folder / "run.log")
        self.run.wait_serving(self.state)
        wait_listening("127.0.0.1", self.web_port, self.run.proc, self.run.log)
        wait_listening("127.0.0.1", self.mcp_port, self.run.proc, self.run.log)
        self.page = f"http://127.0.0.1:{self.web_port}/"
        self.mcp = f"http://127.0.0.1:{self.mcp_port}/mcp"
        self.token = (self.state / TOKEN_FILE).read_text().strip()
        self.readonly = (self.state / READONLY_TOKEN_FILE).read_text().strip()
        self.api = RemoteService(self.state / "control.sock")

    def logged(self, text: str, timeout: float = 10.0) -> str:
        """The log, once it says ``text`` (the HTTP front logs from its own thread)."""
        deadline = time.monotonic() + timeout
        while text not in (log := self.run.log.read_text()):
            assert time.monotonic() < deadline, f"not logged: {text}\n{self.run.tail()}"
            time.sleep(0.05)
        return log

    def room(self) -> dict[str, Any]:
        """The room's status row, through the control socket."""
        row: dict[str, Any] = self.api.call("status", {"instance": "door"}).model_dump()[
            "instances"][0]
        return row


@pytest.fixture(scope="module")
def doors(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Doors]:
    made = Doors(tmp_path_factory.mktemp("doors"))
    try:
        yield made
    finally:
        made.api.close()
        assert made.run.stop() == 0, made.run.tail()


def test_both_tokens_are_private_files_and_the_log_names_them_without_them(
        doors: Doors) -> None:
    for name in (TOKEN_FILE, READONLY_TOKEN_FILE):
        assert stat.S_IMODE((doors.state / name).stat().st_mode) == 0o600
    log = doors.logged(f"every request needs the token in {doors.state / TOKEN_FILE}")
    # Not a terminal: scorch run says where the tokens are, never what (a journal keeps logs).
    assert (f"the technician's page: {doors.page}; open it once as {doors.page}?token=TOKEN, "
            f"TOKEN from {doors.state / TOKEN_FILE} (read-only: "
            f"{doors.state / READONLY_TOKEN_FILE})") in log
    assert doors.token not in log and doors.readonly not in log


#: Run by another account with the system's Python: MCP's initialize and a tool call, the
#: page's view, without and with the token; and whether it can read the token's file.
AS_ANOTHER = textwrap.dedent("""
    import json, sys, urllib.error, urllib.request
    mcp, page, token, token_file, initialize = sys.argv[1:6]
    HEADERS = {"content-type": "application/json",
               "accept": "application/json, text/event-stream"}

    def ask(url, body=None, headers=None):
        request = urllib.request.Request(url, data=body, headers=headers or {},
                                         method="GET" if body is None else "POST")
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, answer.read().decode(), dict(answer.headers)
        except urllib.error.HTTPError as refused:
            return refused.code, refused.read().decode(), dict(refused.headers)

    def rpc(body, headers):
        status, text, heard = ask(mcp, json.dumps(body).encode(), {**HEADERS, **headers})
        data = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]
        return status, (data or [text])[-1], heard

    seen = {}
    try:
        open(token_file).read()
        seen["token file"] = "read"
    except OSError as err:
        seen["token file"] = type(err).__name__
    bearer = {"authorization": "Bearer " + token}
    seen["mcp without"] = rpc(json.loads(initialize), {})[0]
    seen["mcp wrong"] = rpc(json.loads(initialize), {"authorization": "Bearer x" + token})[0]
    status, answer, heard = rpc(json.loads(initialize), bearer)
    seen["mcp with"] = status, answer["result"]["serverInfo"]["name"]
    session = {"mcp-session-id": heard.get("mcp-session-id") or heard.get("Mcp-Session-Id")}
    rpc({"jsonrpc": "2.0", "method": "notifications/initialized"}, {**bearer, **session})
    status, answer, _ = rpc({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "list_instances", "arguments": {}}}, {**bearer, **session})
    seen["tool with"] = status, [row["name"] for row in
                                 answer["result"]["structuredContent"]["instances"]]
    seen["page without"] = ask(page + "api/view")[0]
    seen["page action without"] = ask(page + "api/panic", b"")[0]
    status, text, _ = ask(page + "api/view", headers=bearer)
    seen["page with"] = status, [room["name"] for room in json.loads(text)["rooms"]]
    print(json.dumps(seen))
    """)


def test_another_account_on_this_machine_is_refused_without_the_token_and_served_with_it(
        doors: Doors, tmp_path: Path) -> None:
    with another_account("door") as other:
        done = other.run(["/usr/bin/python3", "-c", AS_ANOTHER, doors.mcp, doors.page,
                          doors.token, str(doors.state / TOKEN_FILE), json.dumps(INITIALIZE)])
        assert done.returncode == 0, done.stderr
        seen = json.loads(done.stdout)
        name = other.name
    print(f"\nas {name}: {seen}")
    assert seen["token file"] == "PermissionError"
    assert seen["mcp without"] == seen["mcp wrong"] == 401
    assert seen["page without"] == seen["page action without"] == 401
    assert seen["mcp with"] == [200, "scorch"]
    assert seen["tool with"] == [200, ["door"]]
    assert seen["page with"] == [200, ["door"]]
    gone = subprocess.run(["getent", "passwd", name], capture_output=True, check=False)
    assert gone.returncode == 2, "the account was left behind"


def test_a_page_rebound_to_loopback_is_refused_in_a_real_browser_token_or_not(
        doors: Doors, browser: Any) -> None:
    """DNS rebinding: the attacker's name now resolves to 127.0.0.1, its page asks same-origin."""
    context = browser.new_context()
    try:
        page = context.new_page()
        opened = page.goto(f"http://{REBOUND}:{doors.web_port}/?token={doors.token}")
        assert opened is not None and opened.status == 421, opened and opened.status
        assert context.cookies() == [], "a session was given to a rebound page"
        asked = page.evaluate("""async ([token]) => {
            const seen = {};
            for (const [path, method] of [["/api/view", "GET"], ["/api/tree/door", "GET"],
                                          ["/api/stream", "GET"], ["/static/page.js", "GET"],
                                          ["/api/panic", "POST"], ["/", "GET"]]) {
              seen[path] = [(await fetch(path, {method})).status,
                            (await fetch(path, {method, headers: {Authorization:
                                                                  `Bearer ${token}`}})).status];
            }
            return seen;
        }""", [doors.token])
        assert asked == {path: [421, 421] for path in (
            "/api/view", "/api/tree/door", "/api/stream", "/static/page.js", "/api/panic", "/")}
        opened = page.goto(f"http://{REBOUND}:{doors.mcp_port}/mcp")
        assert opened is not None and opened.status == 421
        mcp = page.evaluate("""async ([token, body]) => [
            (await fetch("/mcp", {headers: {Authorization: `Bearer ${token}`,
                                            Accept: "text/event-stream"}})).status,
            (await fetch("/mcp", {method: "POST", body, headers: {
                Authorization: `Bearer ${token}`, "Content-Type": "application/json",
                Accept: "application/json, text/event-stream"}})).status]""",
            [doors.token, json.dumps(INITIALIZE)])
        assert mcp == [421, 421]
        # The same browser at the page's own address, with the token: served.
        page.goto(doors.page + f"?token={doors.token}")
        page.wait_for_selector("#room-door[data-state=READY]", timeout=10000)
    finally:
        context.close()
    doors.logged(f"Host '{REBOUND}:{doors.mcp_port}' is not this scorch's address")


def test_a_foreign_host_is_refused_on_every_route_of_the_page_and_on_mcp(doors: Doors) -> None:
    bearer = {"authorization": f"Bearer {doors.token}"}
    host = {"host": f"{REBOUND}:{doors.web_port}"}
    for path in ("/", "/api/view", "/api/tree/door", "/api/stream", "/static/page.css",
                 "/favicon.ico", "/nowhere"):
        assert httpx2.get(doors.page.rstrip("/") + path, headers={**bearer, **host},
                          timeout=10).status_code == 421, path
    assert httpx2.post(doors.page + "api/panic", headers={**bearer, **host},
                       timeout=10).status_code == 421
    refused = httpx2.post(doors.mcp, json=INITIALIZE, timeout=10, headers={
        **MCP_HEADERS, **bearer, "host": f"{REBOUND}:{doors.mcp_port}"})
    assert refused.status_code == 421 and "DNS rebinding" in refused.text
    served = httpx2.post(doors.mcp, json=INITIALIZE, timeout=10, headers={
        **MCP_HEADERS, **bearer, "host": f"localhost:{doors.mcp_port}"})
    assert served.status_code == 200, served.text


def test_the_readonly_token_never_acts_whatever_cookie_comes_with_it(
        doors: Doors, browser: Any) -> None:
    before = doors.room()
    cookie = cookie_name(doors.web_port)
    exchanged = httpx2.get(doors.page + f"?token={doors.readonly}", timeout=10)
    assert exchanged.status_code == 303
    session = exchanged.cookies[cookie]
    _, expires, nonce, mac = session.split(".")
    forged = {
        "read-only signed as full": f"{FULL}.{expires}.{nonce}."
                                    f"{_mac(doors.readonly, f'{FULL}.{expires}.{nonce}')}",
        "role changed": f"{FULL}.{expires}.{nonce}.{mac}",
        "the full token as the cookie": doors.token,
        "a bare role": FULL,
    }
    statuses: dict[str, list[int]] = {}
    with httpx2.Client(timeout=10) as http:
        for why, value in forged.items():
            for action in ACTIONS:
                for bearer in ({"authorization": f"Bearer {doors.readonly}"}, {}):
                    answer = http.post(doors.page + f"api/{action}", headers={**bearer, "cookie": (
                        f"{cookie}={value}; scorch_mode={FULL}; scorch_token={doors.token}")})
                    statuses.setdefault(why, []).append(answer.status_code)
        for action in ACTIONS:  # the honest read-only session, and an old mode cookie beside it
            answer = http.post(doors.page + f"api/{action}", headers={
                "cookie": f"{cookie}={session}; scorch_mode={FULL}"})
            statuses.setdefault("read-only session", []).append(answer.status_code)
    print(f"\n{statuses}")
    for why, got in statuses.items():
        assert set(got) <= {401, 403}, (why, got)
        assert 403 in got, why  # the read-only role was known, and refused
    # In the browser too: a read-only page, then a forged full session put in its jar.
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(doors.page + f"?token={doors.readonly}")
        page.wait_for_selector("#room-door[data-state=READY]", timeout=10000)
        assert page.inner_text("#role") == "read-only"
        posts = "async () => Promise.all(['restart?room=door', 'panic', " \
                "'release?room=door&node=hum'].map(async a => " \
                "(await fetch(`/api/${a}`, {method: 'POST'})).status))"
        context.add_cookies([{"name": "scorch_mode", "value": FULL, "url": doors.page}])
        assert page.evaluate(posts) == [403, 403, 403]
        context.add_cookies([{"name": cookie, "value": forged["read-only signed as full"],
                              "url": doors.page}])
        assert page.evaluate(posts) == [401, 401, 401]
    finally:
        context.close()
    after = doors.room()
    assert after["pids"] == before["pids"] and after["restarts_in_window"] == (
        before["restarts_in_window"])
    assert "hum" in after["nodes"]


def test_scorch_mcp_http_prints_the_token_on_stderr_and_nothing_on_stdout(
        doors: Doors, tmp_path: Path) -> None:
    """Attached to the running ``scorch run``: nothing boots."""
    port = free_tcp_port()
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        proc = subprocess.Popen([*SCORCH, str(doors.config), "--http", f"127.0.0.1:{port}"],
                                stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr)
        try:
            wait_listening("127.0.0.1", port, proc, err)
            deadline = time.monotonic() + 30
            while "Authorization: Bearer" not in err.read_text():
                assert time.monotonic() < deadline, err.read_text()
                time.sleep(0.05)
            assert httpx2.post(f"http://127.0.0.1:{port}/mcp", json=INITIALIZE, timeout=10,
                               headers=MCP_HEADERS).status_code == 401
        finally:
            proc.terminate()
            assert proc.wait(timeout=30) == 0
    said = err.read_text()
    assert (f"MCP over streamable HTTP at http://127.0.0.1:{port}/mcp; every request needs "
            f"the header Authorization: Bearer {doors.token}") in said
    assert out.read_text() == ""
