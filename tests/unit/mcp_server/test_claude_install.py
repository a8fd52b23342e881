"""`scorch claude-config --install`: Claude Desktop's config file written, backed up,
every other entry kept, and a `scorch` entry someone else wrote left alone."""

from __future__ import annotations

import json
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mcp_server.claude_config import (
    MARK,
    PATH_ENV,
    InstallRefused,
    desktop_config_path,
    entry,
    http_entry,
    install,
)
from scorch.wire.access import TOKEN_FILE
from tests.support.hostile_json import json_values, lines

HOME = Path("/home/me")


@pytest.mark.parametrize(("system", "env", "expected"), [
    ("Darwin", {}, HOME / "Library/Application Support/Claude/claude_desktop_config.json"),
    ("Windows", {"APPDATA": "C:/Users/me/AppData/Roaming"},
     Path("C:/Users/me/AppData/Roaming/Claude/claude_desktop_config.json")),
    ("Windows", {}, HOME / "AppData/Roaming/Claude/claude_desktop_config.json"),
    ("Linux", {}, HOME / ".config/Claude/claude_desktop_config.json"),
    ("Linux", {"XDG_CONFIG_HOME": "/x/conf"}, Path("/x/conf/Claude/claude_desktop_config.json")),
    ("Darwin", {PATH_ENV: "/t/c.json"}, Path("/t/c.json")),
])
def test_claude_desktops_config_file_is_where_each_system_keeps_it(
        system: str, env: dict[str, str], expected: Path) -> None:
    assert desktop_config_path(system, env, HOME) == expected


def test_a_missing_file_is_made_with_the_entry_and_no_backup(tmp_path: Path) -> None:
    target = tmp_path / "Claude" / "claude_desktop_config.json"
    path, backup = install(tmp_path / "rooms.toml", target)
    assert path == target and backup is None
    assert json.loads(target.read_text()) == {
        "mcpServers": {"scorch": entry(tmp_path / "rooms.toml")}}
    assert entry(tmp_path / "rooms.toml")["args"] == [
        "mcp", "--config", str((tmp_path / "rooms.toml").resolve())]


def test_every_other_entry_and_key_is_kept_and_the_old_file_backed_up(tmp_path: Path) -> None:
    target = tmp_path / "claude_desktop_config.json"
    old = {"globalShortcut": "Ctrl+Space", "mcpServers": {
        "git": {"command": "uvx", "args": ["mcp-server-git"]},
        "files": {"command": "npx", "args": ["-y", "x"], "env": {"A": "1"}}}}
    target.write_text(json.dumps(old, indent=4))
    before = target.read_bytes()
    _, backup = install(tmp_path / "rooms.toml", target)
    assert backup is not None and backup.read_bytes() == before
    written = json.loads(target.read_text())
    assert written["globalShortcut"] == "Ctrl+Space"
    assert written["mcpServers"]["git"] == old["mcpServers"]["git"]
    assert written["mcpServers"]["files"] == old["mcpServers"]["files"]
    assert list(written["mcpServers"]) == ["git", "files", "scorch"]


def test_a_scorch_entry_it_did_not_write_is_refused_and_the_file_left_alone(
        tmp_path: Path) -> None:
    target = tmp_path / "claude_desktop_config.json"
    target.write_text('{"mcpServers": {"scorch": {"command": "/opt/other/scorch"}}}')
    before = target.read_bytes()
    with pytest.raises(InstallRefused, match=r"did not write.*--name"):
        install(tmp_path / "rooms.toml", target)
    assert target.read_bytes() == before
    assert list(tmp_path.iterdir()) == [target]
    # Under another name it goes in beside it.
    install(tmp_path / "rooms.toml", target, name="scorch-studio")
    servers = json.loads(target.read_text())["mcpServers"]
    assert servers["scorch"] == {"command": "/opt/other/scorch"}
    assert servers["scorch-studio"]["env"][MARK]


def test_its_own_entry_is_replaced_and_installing_twice_keeps_two_backups(
        tmp_path: Path) -> None:
    target = tmp_path / "claude_desktop_config.json"
    install(tmp_path / "a.toml", target)
    _, first = install(tmp_path / "b.toml", target)
    _, second = install(tmp_path / "b.toml", target)
    assert json.loads(target.read_text())["mcpServers"]["scorch"] == entry(tmp_path / "b.toml")
    assert first is not None and second is not None and first != second
    assert json.loads(first.read_text())["mcpServers"]["scorch"] == entry(tmp_path / "a.toml")


@pytest.mark.parametrize(("content", "said"), [
    (b"{not json", "not valid JSON (line 1, column 2"),
    (b"[1, 2]", "a JSON list, not an object"),
    (b'"text"', "a JSON str"),
    (b'{"mcpServers": []}', "mcpServers is a JSON list"),
    (b'{"mcpServers": "x"}', "mcpServers is a JSON str"),
    (b'{"a": "\xff\xfe"}', "not UTF-8"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deep"),
    (b'{"a": "' + b"x" * (5 * 1024 * 1024) + b'"}', "over 4 MB"),
])
def test_a_file_that_is_not_a_claude_config_is_refused_untouched(
        tmp_path: Path, content: bytes, said: str) -> None:
    target = tmp_path / "claude_desktop_config.json"
    target.write_bytes(content)
    with pytest.raises(InstallRefused, match="left as it was") as err:
        install(tmp_path / "rooms.toml", target)
    assert said in str(err.value)
    assert target.read_bytes() == content
    assert list(tmp_path.iterdir()) == [target]


@pytest.mark.parametrize("content", [b"", b"  \n", b'\xef\xbb\xbf{"mcpServers": {}}'])
def test_an_empty_file_or_one_with_a_byte_order_mark_is_taken(
        tmp_path: Path, content: bytes) -> None:
    target = tmp_path / "claude_desktop_config.json"
    target.write_bytes(content)
    install(tmp_path / "rooms.toml", target)
    assert list(json.loads(target.read_text())["mcpServers"]) == ["scorch"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])
@example(content=b"\x1c")  # white space to str.strip(), not to JSON: once taken as empty
@given(content=st.one_of(lines(b'{"mcpServers": '),
                         json_values().map(lambda v: json.dumps(v).encode()),
                         json_values().map(lambda v: json.dumps({"mcpServers": v}).encode())))
def test_any_content_is_either_kept_whole_or_refused_untouched(
        tmp_path_factory: pytest.TempPathFactory, content: bytes) -> None:
    folder = tmp_path_factory.mktemp("claude")
    target = folder / "claude_desktop_config.json"
    target.write_bytes(content)
    try:
        install(folder / "rooms.toml", target)
    except InstallRefused as err:
        assert "left as it was" in str(err)
        assert target.read_bytes() == content
        return
    written = json.loads(target.read_text())
    try:
        text = content.decode("utf-8-sig")
        old = json.loads(text) if text.strip(" \t\n\r") else {}  # JSON's own white space
    except ValueError:
        raise AssertionError(f"took content that is not JSON: {content[:80]!r}") from None
    assert {k: v for k, v in written.items() if k != "mcpServers"} \
        == {k: v for k, v in old.items() if k != "mcpServers"}
    kept = {k: v for k, v in written["mcpServers"].items() if k != "scorch"}
    assert kept == {k: v for k, v in old.get("mcpServers", {}).items() if k != "scorch"}
    assert written["mcpServers"]["scorch"] == entry(folder / "rooms.toml")


def test_the_cli_installs_and_says_why_it_refuses(tmp_path: Path) -> None:
    target = tmp_path / "claude_desktop_config.json"
    argv = [sys.executable, "-m", "scorch.cli.main", "claude-config", "--install",
            "--config", str(tmp_path / "rooms.toml")]
    done = subprocess.run(argv, env={"PATH": "/usr/bin:/bin", PATH_ENV: str(target),
                                     "PYTHONPATH": ":".join(sys.path)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and f"into {target}" in done.stdout, done.stderr
    target.write_text('{"mcpServers": {"scorch": {"command": "mine"}}}')
    refused = subprocess.run([*argv, "--path", str(target)], capture_output=True, text=True,
                             timeout=60)
    assert refused.returncode == 1 and "did not write" in refused.stderr


def test_an_http_clients_entry_carries_the_url_and_token_and_its_file_stays_private(
        tmp_path: Path) -> None:
    target = tmp_path / ".mcp.json"
    target.write_text('{"mcpServers": {"other": {"type": "http", "url": "http://x/mcp"}}}')
    target.chmod(0o644)
    new = http_entry("http://127.0.0.1:57180/mcp", "s3cret")
    assert new["headers"]["Authorization"] == "Bearer s3cret"
    written, backup = install(tmp_path / "rooms.toml", target, new=new)
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    servers = json.loads(written.read_text())["mcpServers"]
    assert servers["scorch"] == new and servers["other"]["url"] == "http://x/mcp"
    assert backup is not None and "s3cret" not in backup.read_text()
    again = http_entry("http://127.0.0.1:57181/mcp", "n3w")  # its own entry: replaced
    install(tmp_path / "rooms.toml", target, new=again)
    assert json.loads(target.read_text())["mcpServers"]["scorch"] == again
    assert "Authorization" not in http_entry("http://127.0.0.1:1/mcp", None)["headers"]


def claude_config(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scorch.cli.main", "claude-config", *args],
                          capture_output=True, text=True, timeout=60, check=False)


def test_the_cli_gives_an_http_client_the_installations_token(tmp_path: Path) -> None:
    state = tmp_path / "state"
    config = tmp_path / "rooms.toml"
    config.write_text(f'state_dir = "{state}"\n[instances.a]\n[mcp]\nhttp = "127.0.0.1:57190"\n')
    printed = claude_config("--config", str(config), "--http")
    assert printed.returncode == 0, printed.stderr
    token = (state / TOKEN_FILE).read_text().strip()  # made now, as the server would
    assert json.loads(printed.stdout)["mcpServers"]["scorch"] == http_entry(
        "http://127.0.0.1:57190/mcp", token)
    everywhere = json.loads(claude_config("--config", str(config), "--http", "0.0.0.0:9").stdout)
    assert everywhere["mcpServers"]["scorch"]["url"] == f"http://{socket.gethostname()}:9/mcp"
    refused = claude_config("--config", str(config), "--http", "--install")
    assert refused.returncode == 2 and "--path" in refused.stderr
    target = tmp_path / "project" / ".mcp.json"
    done = claude_config("--config", str(config), "--http", "--install", "--path", str(target))
    assert done.returncode == 0 and str(target) in done.stdout and token not in done.stdout
    assert token in target.read_text() and stat.S_IMODE(target.stat().st_mode) == 0o600
    config.write_text(f'state_dir = "{state}"\n[instances.a]\n[mcp]\nhttp = "127.0.0.1:57190"\n'
                      "open_loopback = true\n")
    opened = json.loads(claude_config("--config", str(config), "--http").stdout)
    assert "Authorization" not in opened["mcpServers"]["scorch"]["headers"]
    bad = claude_config("--config", str(config), "--http", "studio:99999")
    assert bad.returncode == 2 and "from 1 to 65535" in bad.stderr
