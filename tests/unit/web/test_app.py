"""The page's gate and actions, over Starlette's test client and a stand-in feed."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from starlette.testclient import TestClient

from scorch.errors import InstanceNotFound
from scorch.web.app import COOKIE, MODE_COOKIE, Gate, make_app
from scorch.wire.access import Access

TOKEN, READONLY = "t" * 43, "r" * 43
#: What a header may hold (HTTP clients refuse control characters before sending).
PRINTABLE = st.characters(min_codepoint=33, max_codepoint=126)


class Answer(BaseModel):
    ok: bool = True


class Service:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def call(self, name: str, args: dict[str, Any]) -> Answer:
        self.calls.append((name, args))
        if args.get("name") == "nowhere":
            raise InstanceNotFound("no instance 'nowhere'")
        return Answer()


class Feed:
    """What the app reads of the live view, without an orchestra."""

    def __init__(self) -> None:
        self.service = Service()

    def build(self) -> str:
        return '{"rooms": []}'


def client(host: str, token: str | None) -> tuple[TestClient, Service]:
    feed = Feed()
    gate = Gate(Access(host, 8470, token), READONLY if token else None)
    app = make_app(feed, gate, 15.0)
    return TestClient(app, base_url=f"http://{host}:8470", follow_redirects=False), feed.service


def test_loopback_is_open_and_readonly_is_kept_by_a_cookie_the_server_obeys() -> None:
    web, service = client("127.0.0.1", None)
    page = web.get("/")
    assert 'data-role="full"' in page.text
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert web.post("/api/restart?room=a").status_code == 200
    assert service.calls == [("instance", {"action": "restart", "name": "a"})]
    answer = web.get("/?readonly")
    assert answer.status_code == 303 and answer.cookies.get(MODE_COOKIE) == "read"
    assert 'data-role="read"' in web.get("/").text
    assert web.post("/api/panic").status_code == 403
    assert len(service.calls) == 1


def test_another_address_asks_the_token_once_then_keeps_it_as_an_httponly_cookie() -> None:
    web, service = client("10.1.2.3", TOKEN)
    assert web.get("/").status_code == 401
    assert web.get("/api/view").status_code == 401
    assert web.post("/api/panic").status_code == 401
    answer = web.get(f"/?token={TOKEN}")
    assert answer.status_code == 303 and answer.headers["location"] == "/"
    cookie = answer.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    assert web.get("/api/view").json() == {"rooms": []}
    assert web.post("/api/release?room=a&node=n").status_code == 200
    assert service.calls == [("release", {"instance": "a", "node": "n"})]


def test_the_readonly_token_sees_but_never_acts() -> None:
    web, service = client("10.1.2.3", TOKEN)
    headers = {"Authorization": f"Bearer {READONLY}"}
    assert web.get("/api/view", headers=headers).status_code == 200
    for action in ("restart?room=a", "panic", "release?room=a&node=n"):
        assert web.post(f"/api/{action}", headers=headers).status_code == 403
    assert service.calls == []


def test_a_foreign_origin_is_refused_even_with_the_token() -> None:
    web, _ = client("10.1.2.3", TOKEN)
    headers = {"Authorization": f"Bearer {TOKEN}", "Origin": "http://evil.example"}
    assert web.post("/api/panic", headers=headers).status_code == 403


def test_errors_of_the_operation_come_back_with_their_code() -> None:
    web, _ = client("127.0.0.1", None)
    answer = web.post("/api/restart?room=nowhere")
    assert answer.status_code == 404 and answer.json()["code"] == "NOT_FOUND"
    assert web.post("/api/reboot").status_code == 404


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(token=st.text(PRINTABLE, max_size=60),
       origin=st.one_of(st.none(), st.text(PRINTABLE, max_size=40)),
       path=st.sampled_from(["/", "/api/view", "/static/page.js", "/static/../x",
                             "/api/tree/a"]),
       method=st.sampled_from(["GET", "POST"]))
def test_any_request_is_answered_or_refused_never_crashes(
        token: str, origin: str | None, path: str, method: str) -> None:
    web, service = client("10.1.2.3", TOKEN)
    headers = {"Cookie": f"{COOKIE}={token}"}
    if origin is not None:
        headers["Origin"] = origin
    answer = web.request(method, path, headers=headers)
    assert answer.status_code in (200, 303, 401, 403, 404, 405)
    if token != TOKEN:
        assert answer.status_code != 200 or path.startswith("/static/")
    assert service.calls == []
