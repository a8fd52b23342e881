"""The page's HTTP face: who may look or act, the live stream, and the actions.

Every request passes :class:`Gate`: the listener's :class:`~scorch.wire.access.Access`
(loopback open, any other address asks for the token; a browser's Origin must name
the listener) and a second, read-only token. A page is opened once with
``?token=...``; the answer sets the token as an HttpOnly, SameSite=Strict cookie and
sends the browser to the bare URL, so the token leaves the address bar and history
and no script can read it. Actions go through the local service as every front end's
do (same checks, same events) and are refused here, server-side, to a read-only
page: the buttons it hides are a courtesy, not the guard.
"""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

import anyio
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from scorch.errors import ScorchError
from scorch.wire.access import Access, bearer

if TYPE_CHECKING:
    from scorch.web.feed import Feed

#: The cookie that carries the token after ``?token=``.
COOKIE = "scorch_token"
#: On loopback (no token asked), the cookie that keeps a page read-only.
MODE_COOKIE = "scorch_mode"
FULL, READ = "full", "read"
#: The page runs its own files only, talks to its own server only, and is never framed
#: (a confirm button inside another site's frame could be clicked through).
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
                               "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
#: The files the page is made of (package data, no build step).
STATIC = {"page.css": "text/css", "page.js": "text/javascript"}


@dataclass(frozen=True)
class Gate:
    """Who may use the page: the listener's access policy and the read-only token."""

    access: Access
    readonly_token: str | None
    """Asked where the access asks a token; None on loopback (``?readonly`` instead)."""

    def role(self, request: Request) -> tuple[str | None, tuple[int, str] | None]:
        """The request's role (full or read) or why it is refused (status, reason)."""
        origin = request.headers.get("origin")
        if not self.access.origin_ok(origin):
            return None, (403, f"origin {origin!r} may not use this scorch")
        presented = (bearer(request.headers.get("authorization"))
                     or request.query_params.get("token") or request.cookies.get(COOKIE))
        if self.readonly_token is not None and presented is not None and hmac.compare_digest(
                presented.encode(), self.readonly_token.encode()):
            return READ, None
        if self.access.token is None:
            wants_read = ("readonly" in request.query_params
                          or request.cookies.get(MODE_COOKIE) == READ)
            return (READ if wants_read else FULL), None
        if self.access.token_ok(presented):
            return FULL, None
        return None, (401, "this address needs scorch's token: open the page once with "
                      "?token=<the token in the state directory's http-token file>")


#: The HTTP status of each error code; any other: 409 (cannot be done now).
_STATUS = {"INVALID_ARGUMENT": 400, "NOT_FOUND": 404, "TIMEOUT": 504, "INTERNAL": 500}


def _status(err: ScorchError) -> int:
    return _STATUS.get(err.code, 409)


def make_app(feed: Feed, gate: Gate, meter_hz: float) -> Starlette:
    """The page's app: ``/``, its files, the view, the stream, the tree and the actions."""

    def refused(request: Request) -> tuple[str | None, Response | None]:
        role, refusal = gate.role(request)
        if refusal is not None:
            return None, PlainTextResponse(refusal[1], status_code=refusal[0])
        return role, None

    async def page(request: Request) -> Response:
        role, no = refused(request)
        if no is not None:
            return no
        if "token" in request.query_params or "readonly" in request.query_params:
            # The token leaves the address bar: it lives on as an HttpOnly cookie.
            answer = RedirectResponse("/", status_code=303)
            token = request.query_params.get("token")
            if token:
                answer.set_cookie(COOKIE, token, httponly=True, samesite="strict",
                                  secure=request.url.scheme == "https")
            answer.set_cookie(MODE_COOKIE, role or READ, httponly=True, samesite="strict")
            return answer
        html = resources.files("scorch.web").joinpath("static/index.html").read_text()
        return Response(html.replace("{{ROLE}}", role or READ), media_type="text/html",
                        headers=HEADERS)

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return PlainTextResponse("not found", status_code=404)
        text = resources.files("scorch.web").joinpath(f"static/{name}").read_text()
        return Response(text, media_type=STATIC[name])

    async def view(request: Request) -> Response:
        _, no = refused(request)
        if no is not None:
            return no
        data = await anyio.to_thread.run_sync(feed.build)
        return Response(data, media_type="application/json")

    async def stream(request: Request) -> Response:
        _, no = refused(request)
        if no is not None:
            return no

        async def events() -> AsyncIterator[dict[str, str]]:
            await anyio.to_thread.run_sync(feed.open)
            try:
                sent = -1
                while not await request.is_disconnected():
                    for version, data in feed.views_since(sent):
                        sent = version
                        yield {"event": "view", "data": data}
                    yield {"event": "meters", "data": feed.meters()}
                    await anyio.sleep(1.0 / meter_hz)
            finally:
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(feed.close)

        return EventSourceResponse(events(), ping=15)

    async def tree(request: Request) -> Response:
        _, no = refused(request)
        if no is not None:
            return no
        room = request.path_params["room"]
        return await _call(feed, "playing", {"instance": room, "detail": True, "full": True})

    async def act(request: Request) -> Response:
        role, no = refused(request)
        if no is not None:
            return no
        if role != FULL:
            return JSONResponse({"error": "this page is read-only: it shows, it does not act"},
                                status_code=403)
        what = request.path_params["what"]
        params = request.query_params
        calls: dict[str, tuple[str, dict[str, Any]]] = {
            "restart": ("instance", {"action": "restart", "name": params.get("room", "")}),
            "panic": ("midi", {"action": "panic"}),
            "release": ("release", {"instance": params.get("room", ""),
                                    "node": params.get("node", "")}),
        }
        if what not in calls:
            return JSONResponse({"error": f"no action {what[:40]!r}: restart, panic or "
                                 "release"}, status_code=404)
        return await _call(feed, *calls[what])

    async def favicon(request: Request) -> Response:
        return Response(status_code=204)

    return Starlette(routes=[
        Route("/", page),
        Route("/favicon.ico", favicon),
        Route("/static/{name}", static),
        Route("/api/view", view),
        Route("/api/stream", stream),
        Route("/api/tree/{room}", tree),
        Route("/api/{what}", act, methods=["POST"]),
    ])


async def _call(feed: Feed, name: str, args: dict[str, Any]) -> Response:
    """Run an operation through the local service, in a worker thread."""
    try:
        result = await anyio.to_thread.run_sync(feed.service.call, name, args)
    except ScorchError as err:
        return JSONResponse({"error": str(err), "code": err.code}, status_code=_status(err))
    return Response(result.model_dump_json(), media_type="application/json")
