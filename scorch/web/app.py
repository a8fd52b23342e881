"""The page's HTTP face: who may look or act, the live stream, and the actions.

Every request, on every route, passes :class:`~scorch.web.gate.Gate`: its Host and
Origin, then its token or the session a token was exchanged for (``/?token=...``
answers with an HttpOnly, SameSite=Strict session cookie and sends the browser to the
bare URL). Actions go through the local service as every front end's do (same checks,
same events) and are refused here, server-side, to a read-only role: the buttons the
page hides are a courtesy, not the guard.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from importlib import resources
from typing import TYPE_CHECKING, Any

import anyio
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from scorch.errors import ScorchError
from scorch.web.gate import FULL, READ, SESSION_SECONDS, Gate
from scorch.web.hours import hours_view
from scorch.wire import Access

if TYPE_CHECKING:
    from scorch.web.feed import Feed

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
STATIC = {"page.css": "text/css", "page.js": "text/javascript", "hours.js": "text/javascript"}

#: The HTTP status of each error code; any other: 409 (cannot be done now).
_STATUS = {"INVALID_ARGUMENT": 400, "NOT_FOUND": 404, "TIMEOUT": 504, "INTERNAL": 500}


def _status(err: ScorchError) -> int:
    return _STATUS.get(err.code, 409)


def _refusal(status: int, reason: str) -> Response:
    headers = {"WWW-Authenticate": 'Bearer realm="scorch"'} if status == 401 else None
    return PlainTextResponse(reason, status_code=status, headers=headers)


class BrowserCheck:
    """ASGI middleware: every request's Host and Origin, before any route (an unknown one too)."""

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            refusal = self.access.browser_refusal(host=headers.get("host"),
                                                  origin=headers.get("origin"))
            if refusal is not None:
                await _refusal(*refusal)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def make_app(feed: Feed, gate: Gate, meter_hz: float) -> Starlette:
    """The page's app: ``/``, its files, the view, the stream, the tree and the actions."""

    def refused(request: Request) -> tuple[str | None, Response | None]:
        role, refusal = gate.role(request)
        return role, None if refusal is None else _refusal(*refusal)

    async def page(request: Request) -> Response:
        if "token" in request.query_params:
            return exchange(request)
        role, no = refused(request)
        if no is not None:
            return no
        html = resources.files("scorch.web").joinpath("static/index.html").read_text()
        return Response(html.replace("{{ROLE}}", role or READ), media_type="text/html",
                        headers=HEADERS)

    def exchange(request: Request) -> Response:
        """``/?token=``: a session of the token's role, and the bare address."""
        role = gate.token_role(request.query_params.get("token"))
        if role is None:
            return _refusal(401, "that is not one of scorch's tokens (the state folder's "
                            "http-token, or http-token-readonly)")
        answer = RedirectResponse("/", status_code=303, headers={"Referrer-Policy": "no-referrer"})
        answer.set_cookie(gate.cookie, gate.session(role), max_age=SESSION_SECONDS,
                          httponly=True, samesite="strict", secure=request.url.scheme == "https")
        return answer

    async def static(request: Request) -> Response:
        _, no = refused(request)
        if no is not None:
            return no
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
            changes = feed.changes()
            try:
                sent, metered = -1, 0.0
                while not feed.closing.is_set() and not await request.is_disconnected():
                    for version, data in feed.views_since(sent):
                        sent = version
                        yield {"event": "view", "data": data}
                    if anyio.current_time() - metered >= 0.9 / meter_hz:
                        metered = anyio.current_time()
                        yield {"event": "meters", "data": feed.meters()}
                    # until the next change, or the meters are due: each change at once
                    for published in await anyio.to_thread.run_sync(changes.take,
                                                                     1.0 / meter_hz):
                        yield {"event": "change", "data": feed.change(published)}
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
            "go": ("cue", {"action": "go"}),
            "release": ("release", {"instance": params.get("room", ""),
                                    "node": params.get("node", "")}),
            "gain": ("gain", {"instance": params.get("room", ""),
                              "db": _number(params.get("db", "")),
                              "fade": _number(params.get("fade", "0"))}),
        }
        if what not in calls:
            return JSONResponse({"error": f"no action {what[:40]!r}: restart, panic, go, "
                                 "release or gain"}, status_code=404)
        return await _call(feed, *calls[what])

    async def hours(request: Request) -> Response:
        _, no = refused(request)
        if no is not None:
            return no
        found = await anyio.to_thread.run_sync(hours_view, feed.service)
        return JSONResponse(found)

    async def favicon(request: Request) -> Response:
        _, no = refused(request)
        return no or Response(status_code=204)

    return Starlette(middleware=[Middleware(BrowserCheck, access=gate.access)], routes=[
        Route("/", page),
        Route("/favicon.ico", favicon),
        Route("/static/{name}", static),
        Route("/api/view", view),
        Route("/api/stream", stream),
        Route("/api/tree/{room}", tree),
        Route("/api/hours", hours),
        Route("/api/{what}", act, methods=["POST"]),
    ])


def _number(text: str) -> float | str:
    """A query parameter as the number it says, or as it is (the operation names it wrong)."""
    try:
        return float(text)
    except ValueError:
        return text


async def _call(feed: Feed, name: str, args: dict[str, Any]) -> Response:
    """Run an operation through the local service, in a worker thread."""
    try:
        result = await anyio.to_thread.run_sync(feed.service.call, name, args)
    except ScorchError as err:
        return JSONResponse({"error": str(err), "code": err.code}, status_code=_status(err))
    return Response(result.model_dump_json(), media_type="application/json")
