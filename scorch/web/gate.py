"""Who may use the page, asked of every request: its Host, its Origin, its token or session.

Two tokens, both in the state folder, both 0600: ``http-token`` (a technician: sees
and acts) and ``http-token-readonly`` (sees only). A script sends one in
``Authorization: Bearer``. A browser opens the page once as ``/?token=TOKEN``; the
answer exchanges it for a session cookie and sends the browser to the bare address,
so the token leaves the address bar and the history, and never sits in the browser's
cookie store, where it would also open MCP over HTTP.

The session is ``ROLE.EXPIRES.NONCE.MAC``: the MAC is an HMAC keyed with the token of
that ROLE, so the server alone (and whoever holds that token) can make one, and the
role the server reads is the one whose token signed it: a holder of the read-only
token can sign only read-only sessions, and a cookie the server did not sign (a
forged ``full``, an old mode cookie) is no session at all. Changing a token (delete
its file, restart) ends every session it signed.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

from starlette.requests import Request

from scorch.wire import Access, bearer, same_token

FULL, READ = "full", "read"
#: Seconds a session lasts: a bookmark of the bare address works as long.
SESSION_SECONDS = 30 * 24 * 3600
#: Signed into every session: a MAC made here opens the page and nothing else.
PURPOSE = b"scorch page session\n"


def cookie_name(port: int) -> str:
    """The session cookie of the page on ``port``: a browser keeps cookies per host, not port."""
    return f"scorch_session_{port}"


@dataclass(frozen=True)
class Gate:
    """Who may use the page: the listener's access policy and the read-only token."""

    access: Access
    readonly_token: str

    @property
    def cookie(self) -> str:
        """This page's session cookie's name."""
        return cookie_name(self.access.port)

    def _key(self, role: str) -> str | None:
        return self.access.token if role == FULL else self.readonly_token if role == READ else None

    def token_role(self, presented: str | None) -> str | None:
        """The role a token gives (full or read), or None: not one of the page's tokens."""
        if same_token(presented, self.access.token):
            return FULL
        if same_token(presented, self.readonly_token):
            return READ
        return None

    def session(self, role: str, now: float | None = None) -> str:
        """A new session cookie's value for ``role``, signed with that role's token."""
        key = self._key(role)
        if key is None:
            raise ValueError(f"no token signs {role!r} sessions here")
        expires = int((time.time() if now is None else now) + SESSION_SECONDS)
        body = f"{role}.{expires}.{secrets.token_urlsafe(12)}"
        return f"{body}.{_mac(key, body)}"

    def session_role(self, value: str | None, now: float | None = None) -> str | None:
        """The role of a session cookie the server signed and that has not expired, or None."""
        if not value or len(value) > 200:
            return None
        body, _, mac = value.rpartition(".")
        role, _, rest = body.partition(".")
        expires, _, _nonce = rest.partition(".")
        key = self._key(role)
        if key is None or not expires.isdigit():
            return None
        if not hmac.compare_digest(mac.encode(), _mac(key, body).encode()):
            return None
        return role if int(expires) > (time.time() if now is None else now) else None

    def role(self, request: Request) -> tuple[str | None, tuple[int, str] | None]:
        """The request's role (full or read) or why it is refused (status, reason).

        An ``Authorization`` header is the token or a refusal; else the session
        cookie; else, on a loopback page opened by ``[web] open_loopback``, full.
        """
        refused = self.access.browser_refusal(host=request.headers.get("host"),
                                              origin=request.headers.get("origin"))
        if refused is not None:
            return None, refused
        header = request.headers.get("authorization")
        if header is not None:
            role = self.token_role(bearer(header))
        else:
            role = self.session_role(request.cookies.get(self.cookie))
            if role is None and self.access.token is None:
                role = FULL
        if role is None:
            return None, (401, "scorch asks for its token: open the page once as "
                          "/?token=<the token in the state folder's http-token file, or "
                          "http-token-readonly for a page that only shows>")
        return role, None


def _mac(key: str, body: str) -> str:
    return hmac.new(key.encode(), PURPOSE + body.encode(), hashlib.sha256).hexdigest()
