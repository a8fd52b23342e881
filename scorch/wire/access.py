"""Who may use scorch over HTTP: the token, the Host a request names, the Origin a browser sends.

One policy for every HTTP face (the MCP streamable HTTP transport, the technician's
page): every request, on every address, loopback included, bears the token scorch
writes on first start into the state folder, readable by its user only (0600), as
Jupyter asks for its own. Another account of the same machine reaches 127.0.0.1 as
easily as scorch's user does, and MCP's ``execute`` runs code as scorch's user; so
loopback is open only when the installation says so (``[mcp] open_loopback``,
``[web] open_loopback``), and only on a loopback listener.

Before the token, two checks against browsers: the ``Host`` header must name this
listener (an address, a loopback name or this machine's own name: never a name a page
on another site could have rebound to this machine's address, DNS rebinding), and a
browser's ``Origin`` must be the listener itself (or loopback when the listener is on
loopback), so that no page on another site drives scorch through a browser.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import secrets
import socket
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

from scorch.config import is_loopback

log = logging.getLogger(__name__)

#: The token's file in the state directory.
TOKEN_FILE = "http-token"
#: The read-only token's file: the technician's page opened with it shows, never acts.
READONLY_TOKEN_FILE = "http-token-readonly"

#: Listener addresses that mean every address of the machine.
WILDCARDS = frozenset({"0.0.0.0", "::", ""})

__all__ = ["READONLY_TOKEN_FILE", "TOKEN_FILE", "Access", "bearer", "host_name", "is_loopback",
           "load_token", "machine_names", "same_token"]


def load_token(state_dir: Path, name: str = TOKEN_FILE) -> str:
    """The installation's HTTP token, made on first use (0600, in ``state_dir``)."""
    path = state_dir / name
    try:
        token = path.read_text().strip()
    except FileNotFoundError:
        token = ""
    if token:
        return token
    state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)  # as the control socket's
    token = secrets.token_urlsafe(32)
    # Written under a private name first and linked: two starts at once share one token.
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


def same_token(presented: str | None, token: str | None) -> bool:
    """Whether ``presented`` is ``token`` (constant time); never when either is missing."""
    if presented is None or token is None:
        return False
    return hmac.compare_digest(presented.encode(), token.encode())


def host_name(header: str | None) -> str | None:
    """The name or address a ``Host`` header names (lower case, no port, no brackets).

    None for a missing or malformed header: no listener's.
    """
    if not header or len(header) > 300:
        return None
    try:
        parts = urlsplit(f"http://{header.strip()}")
        _ = parts.port  # a port of letters is no Host of ours
    except ValueError:
        return None
    if parts.hostname is None or parts.username is not None or parts.path or parts.query:
        return None
    return parts.hostname.lower()


@cache
def machine_names() -> frozenset[str]:
    """This machine's own names (its host name, short and with ``.local``), lower case.

    Read from the kernel, never resolved: a name the resolver answers is a name
    someone else's DNS may answer too.
    """
    name = socket.gethostname().lower().rstrip(".")
    short = name.split(".", 1)[0]
    return frozenset(n for n in (name, short, f"{short}.local") if n)


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Access:
    """The access policy of one HTTP listener on ``host``:``port``."""

    host: str
    port: int
    token: str | None
    """The token every request must bear; None only on a loopback listener opened by config."""
    names: frozenset[str] = field(default_factory=frozenset)
    """This machine's names a ``Host`` header may carry besides addresses and loopback."""

    @classmethod
    def for_listener(cls, host: str, port: int, state_dir: Path,
                     open_loopback: bool = False) -> Access:
        """The policy for a listener: the token, unless ``open_loopback`` on a loopback host."""
        opened = open_loopback and is_loopback(host)
        if open_loopback and not opened:
            log.warning("open_loopback is for a loopback listener only: %s:%d asks for the "
                        "token", host, port)
        return cls(host, port, None if opened else load_token(state_dir), machine_names())

    def token_ok(self, presented: str | None) -> bool:
        """Whether ``presented`` is the token (constant time), or none is needed."""
        return self.token is None or same_token(presented, self.token)

    def host_ok(self, header: str | None) -> bool:
        """Whether a request's ``Host`` header names this listener (DNS rebinding).

        A loopback listener answers loopback addresses and names and this machine's
        own name (Debian maps it to 127.0.1.1); any other listener also answers any
        address (an address was typed, not resolved) and the port is not compared: an
        ssh tunnel or a proxy may bring a request from another port.
        """
        name = host_name(header)
        if name is None:
            return False
        if is_loopback(name) or name in self.names:
            return True
        return _is_address(name) and not is_loopback(self.host)

    def origin_ok(self, origin: str | None) -> bool:
        """Whether a request's ``Origin`` may reach this listener.

        No Origin (a program, or a browser's same-origin GET) passes: the Host and
        the token guard those. A browser's Origin must be this listener's own host
        (or this machine's name) and port, or loopback when the listener is on
        loopback.
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
        if port != self.port:
            return False
        if self.host.strip("[]") in WILDCARDS or parts.hostname.lower() in self.names:
            # Every address of the machine is the listener's own; the token still guards it.
            return True
        return parts.hostname.lower() == self.host.strip("[]").lower()

    def refusal(self, *, host: str | None, authorization: str | None,
                origin: str | None) -> tuple[int, str] | None:
        """Why a request is refused (HTTP status, reason), or None when it may pass."""
        browser = self.browser_refusal(host=host, origin=origin)
        if browser is not None:
            return browser
        if not self.token_ok(bearer(authorization)):
            return 401, "scorch asks every request for its token: Authorization: Bearer <token>"
        return None

    def browser_refusal(self, *, host: str | None, origin: str | None) -> tuple[int, str] | None:
        """Why a request's ``Host`` or ``Origin`` is refused (status, reason), or None."""
        if not self.host_ok(host):
            shown = (host or "")[:80]
            return 421, f"Host {shown!r} is not this scorch's address (DNS rebinding?)"
        if not self.origin_ok(origin):
            return 403, f"origin {origin!r} may not use this scorch"
        return None
