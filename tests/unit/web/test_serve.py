"""What ``scorch run`` prints about the page: where it is and how to open it with its token."""

from __future__ import annotations

from pathlib import Path

from scorch.web.serve import WebServer
from scorch.wire.access import READONLY_TOKEN_FILE, TOKEN_FILE


def server(state: Path, open_loopback: bool = False) -> WebServer:
    # The page is only built here, never served: it needs no orchestra yet.
    return WebServer(None, None, "127.0.0.1", 8470, state, 15.0,  # type: ignore[arg-type]
                     open_loopback)


def test_a_terminal_gets_both_addresses_with_their_tokens(tmp_path: Path) -> None:
    said = server(tmp_path).how_to_open(show_tokens=True)
    token = (tmp_path / TOKEN_FILE).read_text().strip()
    readonly = (tmp_path / READONLY_TOKEN_FILE).read_text().strip()
    assert said == (f"the technician's page: http://127.0.0.1:8470/?token={token} "
                    f"(read-only: http://127.0.0.1:8470/?token={readonly})")


def test_a_journal_gets_where_the_tokens_are_never_what(tmp_path: Path) -> None:
    said = server(tmp_path).how_to_open(show_tokens=False)
    assert str(tmp_path / TOKEN_FILE) in said and str(tmp_path / READONLY_TOKEN_FILE) in said
    assert "?token=TOKEN" in said
    for name in (TOKEN_FILE, READONLY_TOKEN_FILE):
        assert (tmp_path / name).read_text().strip() not in said


def test_an_open_loopback_page_says_it_is_open_to_every_account(tmp_path: Path) -> None:
    said = server(tmp_path, open_loopback=True).how_to_open(show_tokens=True)
    assert said.endswith("(open to every account of this machine: [web] open_loopback = true)")
    assert "token=" not in said
