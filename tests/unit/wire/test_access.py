"""The HTTP access policy: loopback is open, other addresses need the token, Origins are checked."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorch.wire.access import Access, bearer, is_loopback, load_token


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


def test_loopback_asks_no_token_and_any_other_address_does(tmp_path: Path) -> None:
    assert Access.for_listener("127.0.0.1", 8765, tmp_path).token is None
    guarded = Access.for_listener("0.0.0.0", 8765, tmp_path)
    assert guarded.token == load_token(tmp_path)
    for authorization in (None, "", "Bearer wrong", f"Basic {guarded.token}"):
        refused = guarded.refusal(authorization=authorization, origin=None)
        assert refused is not None and refused[0] == 401 and "token" in refused[1]
    assert guarded.refusal(authorization=f"Bearer {guarded.token}", origin=None) is None
    wildcard_origin = "http://10.1.2.3:8765"
    assert guarded.refusal(authorization=f"bearer {guarded.token}", origin=wildcard_origin) is None


@pytest.mark.parametrize(("listener", "origin", "ok"), [
    ("127.0.0.1", None, True),
    ("127.0.0.1", "http://localhost:3000", True),
    ("127.0.0.1", "http://127.0.0.1:8765", True),
    ("127.0.0.1", "https://evil.example", False),
    ("127.0.0.1", "null", False),
    ("127.0.0.1", "file://", False),
    ("10.0.0.5", "http://10.0.0.5:8765", True),
    ("10.0.0.5", "http://10.0.0.5:9999", False),
    ("10.0.0.5", "http://localhost:8765", False),
    ("0.0.0.0", "http://192.168.0.9:8765", True),
    ("0.0.0.0", "http://192.168.0.9:80", False),
    ("127.0.0.1", "http://[::1]:notaport", False),
    ("127.0.0.1", "http://[::1", False),
])
def test_origin_must_name_the_listener(listener: str, origin: str | None, ok: bool) -> None:
    access = Access(listener, 8765, None)
    assert access.origin_ok(origin) is ok
    refused = access.refusal(authorization=None, origin=origin)
    assert (refused is None) is ok
    if refused:
        assert refused[0] == 403


@pytest.mark.parametrize(("header", "token"), [
    (None, None), ("", None), ("Bearer abc", "abc"), ("BEARER  abc ", "abc"),
    ("Basic abc", None), ("Bearer", None), ("Bearer ", None),
])
def test_bearer_header(header: str | None, token: str | None) -> None:
    assert bearer(header) == token


@given(st.text(max_size=200), st.one_of(st.none(), st.text(max_size=200)))
def test_hostile_headers_never_pass_without_the_token(auth: str, origin: str | None) -> None:
    access = Access("10.9.8.7", 8765, "s3cret-token")
    refused = access.refusal(authorization=auth, origin=origin)
    if refused is None:
        assert bearer(auth) == "s3cret-token"
