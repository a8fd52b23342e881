"""The page's gate and actions, over Starlette's test client and a stand-in feed."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from starlette.testclient import TestClient

from scorch.api.ops import lookup
from scorch.errors import InvalidRequest, RoomNotFound
from scorch.web.app import make_app
from scorch.web.gate import FULL, READ, SESSION_SECONDS, Gate, _mac, cookie_name
from scorch.wire.access import Access

TOKEN, READONLY = "t" * 43, "r" * 43
COOKIE = cookie_name(8470)
#: What a header may hold (HTTP clients refuse control characters before sending).
PRINTABLE = st.characters(min_codepoint=33, max_codepoint=126)
#: Every route, with a method it answers.
ROUTES = [("GET", "/"), ("GET", "/api/view"), ("GET", "/api/tree/a"), ("GET", "/static/page.js"),
          ("GET", "/favicon.ico"), ("POST", "/api/panic"), ("POST", "/api/restart?room=a"),
          ("POST", "/api/release?room=a&node=n"), ("POST", "/api/gain?room=a&db=-6"),
          ("GET", "/nowhere")]
ACTIONS = ["restart?room=a", "panic", "release?room=a&node=n", "gain?room=a&db=-6&fade=2"]


class Answer(BaseModel):
    ok: bool = True


class Service:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def call(self, name: str, args: dict[str, Any]) -> Answer:
        self.calls.append((name, args))
        if args.get("name") == "nowhere":
            raise RoomNotFound("no instance 'nowhere'")
        return Answer()


class Feed:
    """What the app reads of the live view, without an orchestra."""

    def __init__(self) -> None:
        self.service = Service()

    def build(self) -> str:
        return '{"rooms": []}'


def client(host: str = "127.0.0.1", opened: bool = False) -> tuple[TestClient, Service, Gate]:
    feed = Feed()
    gate = Gate(Access(host, 8470, None if opened else TOKEN, frozenset({"studio"})), READONLY)
    app = make_app(feed, gate, 15.0)  # type: ignore[arg-type]
    web = TestClient(app, base_url=f"http://{host}:8470", follow_redirects=False)
    return web, feed.service, gate


def test_loopback_asks_for_the_token_on_every_route() -> None:
    web, service, _ = client("127.0.0.1")
    for method, path in ROUTES[:-1]:
        refused = web.request(method, path)
        assert refused.status_code == 401, (method, path)
        assert refused.headers["www-authenticate"].startswith("Bearer")
    assert web.get(f"/?token=not-{TOKEN}").status_code == 401
    assert service.calls == []


def test_the_token_once_in_the_address_is_exchanged_for_a_session_cookie() -> None:
    web, service, gate = client("127.0.0.1")
    answer = web.get(f"/?token={TOKEN}")
    assert answer.status_code == 303 and answer.headers["location"] == "/"
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=") and TOKEN not in cookie
    lowered = cookie.lower()
    assert "httponly" in lowered and "samesite=strict" in lowered and "max-age=" in lowered
    session = answer.cookies[COOKIE]
    assert gate.session_role(session) == FULL
    page = web.get("/")
    assert 'data-role="full"' in page.text
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert web.get("/api/view").json() == {"rooms": []}
    assert web.post("/api/release?room=a&node=n").status_code == 200
    assert service.calls == [("release", {"instance": "a", "node": "n"})]


def test_scripts_send_the_token_in_a_header_and_a_wrong_one_is_refused_whatever_the_cookie(
        ) -> None:
    web, service, gate = client("10.1.2.3")
    assert web.get("/api/view", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    web.cookies.set(COOKIE, gate.session(FULL))
    assert web.get("/api/view", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert web.post("/api/panic", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert service.calls == []


def test_the_readonly_token_sees_but_never_acts_even_with_a_forged_cookie() -> None:
    web, service, gate = client("127.0.0.1")
    readonly = web.get(f"/?token={READONLY}").cookies[COOKIE]
    assert gate.session_role(readonly) == READ
    assert 'data-role="read"' in web.get("/").text
    assert web.get("/api/view").status_code == 200
    _, expires, nonce, _ = readonly.split(".")
    forged = {
        "a full session signed with the read-only token":
            f"{FULL}.{expires}.{nonce}.{_mac(READONLY, f'{FULL}.{expires}.{nonce}')}",
        "its role changed": f"{FULL}.{expires}.{nonce}.{readonly.rsplit('.', 1)[1]}",
        "the full token itself": TOKEN,
        "the read-only token itself": READONLY,
        "a bare mode": FULL,
    }
    for why, value in forged.items():
        assert gate.session_role(value) is None, why
        for action in ACTIONS:
            for headers in ({"Authorization": f"Bearer {READONLY}"}, {}):
                fresh = TestClient(web.app, base_url="http://127.0.0.1:8470")
                fresh.cookies.set(COOKIE, value)
                fresh.cookies.set("scorch_mode", FULL)  # the old page's role cookie
                fresh.cookies.set("scorch_token", TOKEN)  # and its token cookie: not read
                answer = fresh.post(f"/api/{action}", headers=headers)
                assert answer.status_code in (401, 403), (why, action, headers)
                if headers:
                    assert answer.status_code == 403
    for action in ACTIONS:  # the honest read-only session, and the token in the header
        assert web.post(f"/api/{action}").status_code == 403
        assert web.post(f"/api/{action}", headers={
            "Authorization": f"Bearer {READONLY}"}).status_code == 403
    assert service.calls == []


def test_a_session_ends_when_it_expires_or_its_token_changes() -> None:
    _, _, gate = client("127.0.0.1")
    old = gate.session(FULL, now=time.time() - SESSION_SECONDS - 1)
    assert gate.session_role(old) is None
    fresh = gate.session(FULL)
    assert gate.session_role(fresh) == FULL
    changed = Gate(Access("127.0.0.1", 8470, "n" * 43), READONLY)
    assert changed.session_role(fresh) is None
    assert gate.session(READ) != gate.session(READ)  # each its own nonce


def test_every_route_refuses_a_foreign_host_and_origin_even_with_the_token() -> None:
    web, service, gate = client("127.0.0.1")
    web.cookies.set(COOKIE, gate.session(FULL))
    for method, path in ROUTES:
        for headers, status in (({"Host": "evil.example:8470"}, 421),
                                ({"Origin": "http://evil.example"}, 403)):
            headers = {**headers, "Authorization": f"Bearer {TOKEN}"}
            answer = web.request(method, path, headers=headers)
            assert answer.status_code == status, (method, path, headers)
        refused = web.get(f"/?token={TOKEN}", headers={"Host": "evil.example"})
        assert refused.status_code == 421 and "set-cookie" not in refused.headers
    assert web.get("/api/view", headers={"Host": "studio:8470"}).status_code == 200
    assert service.calls == []


def test_open_loopback_asks_no_token_and_the_readonly_token_still_shows_only() -> None:
    web, service, _ = client("127.0.0.1", opened=True)
    assert 'data-role="full"' in web.get("/").text
    assert web.post("/api/restart?room=a").status_code == 200
    assert service.calls == [("instance", {"action": "restart", "name": "a"})]
    assert web.get(f"/?token={READONLY}").status_code == 303
    assert 'data-role="read"' in web.get("/").text
    assert web.post("/api/panic").status_code == 403
    assert web.get("/", headers={"Host": "evil.example"}).status_code == 421
    assert len(service.calls) == 1


def test_errors_of_the_operation_come_back_with_their_code() -> None:
    web, _, _ = client("127.0.0.1")
    headers = {"Authorization": f"Bearer {TOKEN}"}
    answer = web.post("/api/restart?room=nowhere", headers=headers)
    assert answer.status_code == 404 and answer.json()["code"] == "NOT_FOUND"
    assert web.post("/api/reboot", headers=headers).status_code == 404


def test_the_page_fades_a_master_gain_and_a_wrong_number_is_named_by_the_operation() -> None:
    web, service, _ = client("127.0.0.1")
    headers = {"Authorization": f"Bearer {TOKEN}"}
    assert web.post("/api/gain?room=a&db=-6.5&fade=2", headers=headers).status_code == 200
    assert service.calls == [("gain", {"instance": "a", "db": -6.5, "fade": 2.0})]
    lookup("gain").parse(service.calls[0][1])
    for query, argument in (("db=loud", "db"), ("db=nan", "db"), ("db=1e999", "db"),
                            ("db=-6&fade=-1", "fade"), ("", "db")):
        service.calls.clear()
        web.post(f"/api/gain?room=a&{query}", headers=headers)
        with pytest.raises(InvalidRequest) as wrong:
            lookup("gain").parse(service.calls[0][1])
        assert wrong.value.argument == argument


@pytest.mark.parametrize("host", ["127.0.0.1", "10.1.2.3"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cookie=st.one_of(st.text(PRINTABLE, max_size=90), st.builds(
           lambda r, e, n, m: f"{r}.{e}.{n}.{m}", st.sampled_from([FULL, READ, "x"]),
           st.integers(0, 2**40), st.text(PRINTABLE, max_size=10),
           st.text("0123456789abcdef", max_size=64))),
       origin=st.one_of(st.none(), st.text(PRINTABLE, max_size=40)),
       route=st.sampled_from(ROUTES))
def test_any_request_without_a_token_is_refused_and_never_crashes(
        host: str, cookie: str, origin: str | None, route: tuple[str, str]) -> None:
    web, service, _ = client(host)
    headers = {"Cookie": f"{COOKIE}={cookie}"}
    if origin is not None:
        headers["Origin"] = origin
    answer = web.request(*route, headers=headers)
    assert answer.status_code in (401, 403, 404, 421)
    assert service.calls == []
