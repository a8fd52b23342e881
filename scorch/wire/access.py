"""Who may use scorch over HTTP: the token, loopback, and the Origin a browser sends.

One policy for every HTTP face (the MCP streamable HTTP transport, the technician's
page): a listener on a loopback address is open to the machine's own users, as the
control socket is; a listener on any other address asks every request for the bearer
token that scorch writes, readable by its user only, into the state directory. A
browser's ``Origin`` header must name the listener itself (or loopback when the
listener is on loopback), so that a page on another site cannot drive scorch
through a browser that can reach it (DNS rebinding, cross-site requests).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

#: The token's file in the state directory.
TOKEN_FILE = "http-token"
#: The read-only token's file: the technician's page opened with it shows, never acts.
READONLY_TOKEN_FILE = "http-token-readonly"

#: Host names that are this machine's loopback whatever the resolver says.
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})

#: Listener addresses that mean every address of the machine.
WILDCARDS = frozenset({"0.0.0.0", "::", ""})


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 with or without brackets) is loopback."""
    bare = host.strip().strip("[]").lower()
    if bare in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False


def load_token(state_dir: Path, name: str = TOKEN_FILE) -> str:
    """The installation's HTTP token, made on first use (0600, in ``state_dir``)."""
    path = state_dir / name
    try:
        token = path.read_text().strip()
    except FileNotFoundError:
        token = ""
    if token:
        return token
    state_dir.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    # Written under a private name first and renamed: two starts at once share one token.
    partial = path.with_name(f".{name}.{os.getpid()}")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(token + "\n")
    try:
        os.link(partial, path)
    except FileExistsError:
        token = path.read_text().strip()
    finally:
        partial.unlink(missing_ok=True)
    return token


def bearer(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` header, or None."""
    if not header:
        return None
    scheme, _, value = header.strip().partition(" ")
    return value.strip() or None if scheme.lower() == "bearer" else None


@dataclass(frozen=True)
class Access:
    """The access policy of one HTTP listener on ``host``:``port``."""

    host: str
    port: int
    token: str | None
    """The token every request must bear; None on loopback, where none is asked."""

    @classmethod
    def for_listener(cls, host: str, port: int, state_dir: Path) -> Access:
        """The policy for a listener: a token unless ``host`` is loopback."""
        return cls(host, port, None if is_loopback(host) else load_token(state_dir))

    def token_ok(self, presented: str | None) -> bool:
        """Whether ``presented`` is the token (constant time), or none is needed."""
        if self.token is None:
            return True
        if presented is None:
            return False
        return hmac.compare_digest(presented.encode(), self.token.encode())

    def origin_ok(self, origin: str | None) -> bool:
        """Whether a request's ``Origin`` may reach this listener.

        No Origin (a program, not a browser) passes: the token guards those. A
        browser's Origin must be this listener's own host and port, or loopback
        when the listener is on loopback.
        """
        if origin is None:
            return True
        try:  # a malformed one ("http://[::1", a port of letters) is no listener's
            parts = urlsplit(origin)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                return False
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            return False
        if is_loopback(self.host) and is_loopback(parts.hostname):
            return True
        if self.host.strip("[]") in WILDCARDS:
            # Every address of the machine is the listener's own; the token still guards it.
            return port == self.port
        return parts.hostname.lower() == self.host.strip("[]").lower() and port == self.port

    def refusal(self, *, authorization: str | None, origin: str | None) -> tuple[int, str] | None:
        """Why a request is refused (HTTP status, reason), or None when it may pass."""
        if not self.origin_ok(origin):
            return 403, f"origin {origin!r} may not use this scorch"
        if not self.token_ok(bearer(authorization)):
            return 401, "this address needs scorch's token: Authorization: Bearer <token>"
        return None
