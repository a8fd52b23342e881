"""``[mcp] http`` and ``scorch mcp --http``: an address to listen on, or a clear refusal."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorch.config.tables import HTTP_HOST, HTTP_PORT, McpConfig, parse_listen


@pytest.mark.parametrize(("text", "where"), [
    ("127.0.0.1:8000", ("127.0.0.1", 8000)),
    ("0.0.0.0:8000", ("0.0.0.0", 8000)),
    ("[::1]:9000", ("::1", 9000)),
    ("[::]:9000", ("::", 9000)),
    ("::1", ("::1", HTTP_PORT)),
    ("studio.local:80", ("studio.local", 80)),
    ("10.1.2.3", ("10.1.2.3", HTTP_PORT)),
    (":8001", (HTTP_HOST, 8001)),
    ("8001", (HTTP_HOST, 8001)),
    (" localhost:8002 ", ("localhost", 8002)),
])
def test_addresses_read_with_loopback_and_the_default_port_for_what_is_missing(
        text: str, where: tuple[str, int]) -> None:
    assert parse_listen(text) == where


@pytest.mark.parametrize(("text", "why"), [
    ("", "expected ADDR:PORT"),
    ("host:0", "from 1 to 65535"),
    ("host:65536", "from 1 to 65535"),
    ("host:http", "from 1 to 65535, found 'http'"),
    ("[::1]9000", "expected [IPV6]:PORT"),
    ("[lobby]:9000", "not an IPv6 address"),
    ("1::2::3", "not an IPv6 address"),
    ("my host:80", "not an address or a host name"),
    ("-bad-:80", "not an address or a host name"),
    ("x" * 400, "expected ADDR:PORT"),
])
def test_a_bad_address_says_what_is_wrong(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why.replace("[", r"\[").replace("]", r"\]")):
        parse_listen(text)


def test_no_http_unless_the_table_says() -> None:
    assert McpConfig().listen() is None
    assert McpConfig(http="0.0.0.0:9").listen() == ("0.0.0.0", 9)


@given(st.text(max_size=80))
def test_any_text_is_an_address_or_a_value_error(text: str) -> None:
    try:
        host, port = parse_listen(text)
    except ValueError as err:
        assert str(err)
    else:
        assert host and 1 <= port <= 65535


@pytest.mark.parametrize("table", ["mcp", "web"])
def test_open_loopback_is_off_by_default_and_refused_off_loopback(table: str) -> None:
    from scorch.config.installation import parse_config
    from scorch.errors import ConfigError

    key = "http" if table == "mcp" else "listen"
    plain = parse_config(f'[instances.a]\n[{table}]\n{key} = "127.0.0.1:8470"\n')
    assert getattr(plain, table).open_loopback is False
    opened = parse_config(f'[instances.a]\n[{table}]\n{key} = "localhost:8470"\n'
                          "open_loopback = true\n")
    assert getattr(opened, table).open_loopback is True
    with pytest.raises(ConfigError) as refused:
        parse_config(f'[instances.a]\n[{table}]\n{key} = "0.0.0.0:8470"\nopen_loopback = true\n',
                     "cfg.toml")
    said = str(refused.value)
    assert "cfg.toml" in said and "open_loopback = true opens a loopback" in said
    assert "'0.0.0.0:8470' is not loopback" in said
