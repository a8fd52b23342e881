"""The HTTP access policy: a token on every address, Host and Origin checked, loopback opened only
by config."""

from __future__ import annotations

import ipaddress
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorch.wire.access import Access, bearer, host_name, is_loopback, load_token, machine_names

NAMES = frozenset({"studio", "studio.local"})


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.3.4.5", True), ("::1", True), ("[::1]", True),
    ("localhost", True), ("LOCALHOST", True), ("0.0.0.0", False), ("::", False),
    ("10.0.0.1", False), ("192.168.1.4", False), ("example.org", False), ("", False),
])
def test_loopback_is_told_from_every_other_address(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_the_token_is_made_once_private_and_kept(tmp_path: Path) -> None:
    first = load_token(tmp_path / "state")
    assert len(first) >= 40
    assert load_token(tmp_path / "state") == first
    mode = (tmp_path / "state" / "http-token").stat().st_mode
    assert stat.S_IMODE(mode) == 0o600


def test_every_listener_asks_the_token_loopback_included(tmp_path: Path) -> None:
    token = load_token(tmp_path)
    for host in ("127.0.0.1", "::1", "localhost", "0.0.0.0", "10.1.2.3"):
        guarded = Access.for_listener(host, 8765, tmp_path)
        assert guarded.token == token, host
        for authorization in (None, "", "Bearer wrong", f"Basic {token}", f"Bearer {token}x"):
            refused = guarded.refusal(host="127.0.0.1:8765", authorization=authorization,
                                      origin=None)
            assert refused is not None and refused[0] == 401 and "token" in refused[1]
        assert guarded.refusal(host="127.0.0.1:8765", authorization=f"bearer {token}",
                               origin=None) is None


def test_open_loopback_opens_a_loopback_listener_only(tmp_path: Path) -> None:
    assert Access.for_listener("127.0.0.1", 8765, tmp_path, open_loopback=True).token is None
    assert Access.for_listener("::1", 8765, tmp_path, open_loopback=True).token is None
    for host in ("0.0.0.0", "10.1.2.3", "::"):
        assert Access.for_listener(host, 8765, tmp_path, open_loopback=True).token == (
            load_token(tmp_path)), host
    opened = Access("127.0.0.1", 8765, None)
    assert opened.refusal(host="localhost:8765", authorization=None, origin=None) is None
    # Opened, it still refuses what a browser on another site sends.
    assert opened.refusal(host="evil.example:8765", authorization=None, origin=None)[0] == 421
    assert opened.refusal(host="127.0.0.1:8765", authorization=None,
                          origin="http://evil.example")[0] == 403


@pytest.mark.parametrize(("listener", "header", "ok"), [
    ("127.0.0.1", "127.0.0.1:8765", True),
    ("127.0.0.1", "127.0.0.1", True),
    ("127.0.0.1", "localhost:9000", True),  # an ssh tunnel's port
    ("127.0.0.1", "[::1]:8765", True),
    ("127.0.0.1", "studio:8765", True),  # this machine's name (127.0.1.1 on Debian)
    ("127.0.0.1", "STUDIO.local", True),
    ("127.0.0.1", "evil.example:8765", False),  # DNS rebinding
    ("127.0.0.1", "localhost.evil.example", False),
    ("127.0.0.1", "studio.evil.example", False),
    ("127.0.0.1", "10.0.0.5:8765", False),
    ("127.0.0.1", "evil.example@127.0.0.1", False),
    ("127.0.0.1", "127.0.0.1/x", False),
    ("127.0.0.1", "127.0.0.1:port", False),
    ("127.0.0.1", "[::1", False),
    ("127.0.0.1", "", False),
    ("127.0.0.1", None, False),
    ("10.0.0.5", "10.0.0.5:8765", True),
    ("10.0.0.5", "192.168.4.4:80", True),  # an address was typed (a NAT, a proxy)
    ("10.0.0.5", "[fe80::1]:8765", True),
    ("10.0.0.5", "localhost:9000", True),
    ("10.0.0.5", "studio.local:8765", True),
    ("10.0.0.5", "evil.example:8765", False),
    ("0.0.0.0", "evil.example", False),
    ("0.0.0.0", "10.9.9.9:8765", True),
])
def test_the_host_header_must_name_this_listener(listener: str, header: str | None,
                                                 ok: bool) -> None:
    access = Access(listener, 8765, "t0ken", NAMES)
    assert access.host_ok(header) is ok
    refused = access.refusal(host=header, authorization="Bearer t0ken", origin=None)
    assert (refused is None) is ok
    if refused:
        assert refused[0] == 421


@pytest.mark.parametrize(("listener", "origin", "ok"), [
    ("127.0.0.1", None, True),
    ("127.0.0.1", "http://localhost:3000", True),
    ("127.0.0.1", "http://127.0.0.1:8765", True),
    ("127.0.0.1", "https://evil.example", False),
    ("127.0.0.1", "null", False),
    ("127.0.0.1", "file://", False),
    ("10.0.0.5", "http://10.0.0.5:8765", True),
    ("10.0.0.5", "http://studio.local:8765", True),
    ("10.0.0.5", "http://studio.local:9999", False),
    ("10.0.0.5", "http://10.0.0.5:9999", False),
    ("10.0.0.5", "http://localhost:8765", False),
    ("0.0.0.0", "http://192.168.0.9:8765", True),
    ("0.0.0.0", "http://192.168.0.9:80", False),
    ("127.0.0.1", "http://[::1]:notaport", False),
    ("127.0.0.1", "http://[::1", False),
])
def test_origin_must_name_the_listener(listener: str, origin: str | None, ok: bool) -> None:
    access = Access(listener, 8765, None, NAMES)
    assert access.origin_ok(origin) is ok
    refused = access.refusal(host=f"{listener}:8765", authorization=None, origin=origin)
    assert (refused is None) is ok
    if refused:
        assert refused[0] == 403


def test_this_machines_names_come_from_the_kernel_not_the_resolver() -> None:
    import socket

    names = machine_names()
    assert socket.gethostname().lower() in names
    assert all(name == name.lower() and name for name in names)


def is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize(("header", "token"), [
    (None, None), ("", None), ("Bearer abc", "abc"), ("BEARER  abc ", "abc"),
    ("Basic abc", None), ("Bearer", None), ("Bearer ", None),
])
def test_bearer_header(header: str | None, token: str | None) -> None:
    assert bearer(header) == token


@given(st.one_of(st.text(max_size=200), st.just("Bearer s3cret-token")),
       st.one_of(st.none(), st.text(max_size=200)),
       st.one_of(st.none(), st.text(max_size=120), st.sampled_from(
           ["127.0.0.1:8765", "localhost", "studio", "10.9.8.7:1", "evil.example"])))
def test_hostile_headers_never_pass_without_the_token(auth: str, origin: str | None,
                                                      host: str | None) -> None:
    for listener in ("10.9.8.7", "127.0.0.1"):
        access = Access(listener, 8765, "s3cret-token", NAMES)
        refused = access.refusal(host=host, authorization=auth, origin=origin)
        if refused is None:
            assert bearer(auth) == "s3cret-token"
            name = host_name(host)
            assert name is not None
            assert is_loopback(name) or name in NAMES or (listener == "10.9.8.7"
                                                          and is_address(name))
