"""``scorch claude-config``: the Claude Desktop entry that starts this scorch's MCP server.

``--install`` writes it into Claude Desktop's own config file (a backup of the
file first), keeping every other entry, and refuses to replace a ``scorch`` entry
it did not write: one it wrote carries :data:`MARK` in its ``env``.

Claude Desktop starts scorch itself over stdio: that entry needs no token. A client
of MCP over HTTP (``--http``: Claude Code's ``.mcp.json``, any client that reads the
same ``mcpServers`` shape) needs the URL and the installation's token in an
``Authorization`` header; that entry carries :data:`MARK_HEADER` instead, and a file
it is written into is kept readable by its owner only.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
#: Set to a file to install into it instead of Claude Desktop's own (tests, odd setups).
PATH_ENV = "SCORCH_CLAUDE_CONFIG"
#: The ``env`` key that marks an entry as written by ``scorch claude-config --install``.
MARK = "SCORCH_ENTRY"
MARK_VALUE = "written by scorch claude-config --install"
#: The header that marks an HTTP entry as scorch's (an HTTP entry has no ``env``).
MARK_HEADER = "X-Scorch-Entry"
#: Claude Desktop's config file is small; a larger one is not the file we expect.
MAX_BYTES = 4 * 1024 * 1024


class InstallRefused(Exception):
    """The config file was left as it was: its content, or an entry in it, says not to touch it."""


def command_path() -> Path:
    """The ``scorch`` console script: a checkout's ``.venv`` one, else this Python's."""
    if (REPO_ROOT / "pyproject.toml").is_file() and (REPO_ROOT / "Makefile").is_file():
        return REPO_ROOT / ".venv" / "bin" / "scorch"
    folder = Path(sys.executable).parent
    return folder / ("scorch.exe" if os.name == "nt" else "scorch")


def entry(config_path: Path) -> dict[str, Any]:
    """The ``mcpServers`` entry for Claude Desktop, with absolute paths."""
    return {"command": str(command_path()),
            "args": ["mcp", "--config", str(Path(config_path).resolve())],
            "env": {MARK: MARK_VALUE}}


def http_entry(url: str, token: str | None) -> dict[str, Any]:
    """The ``mcpServers`` entry of an HTTP client: the URL, and the token's header (None:
    a loopback listener opened by ``[mcp] open_loopback``)."""
    headers = {MARK_HEADER: MARK_VALUE}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return {"type": "http", "url": url, "headers": headers}


def snippet(config_path: Path, new: dict[str, Any] | None = None) -> str:
    """The ``mcpServers`` JSON (Claude Desktop's stdio entry unless ``new``), absolute paths."""
    return json.dumps({"mcpServers": {"scorch": new or entry(config_path)}}, indent=2)


def desktop_config_path(system: str | None = None, env: Mapping[str, str] | None = None,
                        home: Path | None = None) -> Path:
    """Claude Desktop's config file on this system (``SCORCH_CLAUDE_CONFIG`` overrides it)."""
    env = os.environ if env is None else env
    if env.get(PATH_ENV):
        return Path(env[PATH_ENV])
    system = system or platform.system()
    home = home or Path.home()
    if system == "Darwin":
        folder = home / "Library" / "Application Support" / "Claude"
    elif system == "Windows":
        folder = Path(env.get("APPDATA") or home / "AppData" / "Roaming") / "Claude"
    else:
        folder = Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "Claude"
    return folder / "claude_desktop_config.json"


#: What JSON counts as white space between tokens (RFC 8259): a file of only these is empty.
JSON_SPACE = " \t\n\r"


def _read(path: Path) -> dict[str, Any]:
    """The config file's object ({} when there is no file, or it is empty)."""
    try:
        if path.stat().st_size > MAX_BYTES:
            raise InstallRefused(f"{path} is over {MAX_BYTES // 1024 // 1024} MB: "
                                 "not a Claude Desktop config; left as it was")
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError as err:
        raise InstallRefused(f"{path} is not UTF-8 text ({err.reason} at byte {err.start}); "
                             "left as it was") from err
    except OSError as err:
        raise InstallRefused(f"cannot read {path}: {err.strerror}") from err
    if not text.strip(JSON_SPACE):  # str.strip() would also take \x1c-\x1f and \x85
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise InstallRefused(f"{path} is not valid JSON (line {err.lineno}, column "
                             f"{err.colno}: {err.msg}); fix it or move it away: left as "
                             "it was") from err
    except RecursionError as err:
        raise InstallRefused(f"{path} is nested too deep to be a Claude Desktop config; "
                             "left as it was") from err
    if not isinstance(data, dict):
        raise InstallRefused(f"{path} holds a JSON {type(data).__name__}, not an object; "
                             "left as it was")
    return data


def merged(current: dict[str, Any], name: str, new: dict[str, Any],
           where: Path) -> dict[str, Any]:
    """``current`` with ``mcpServers[name]`` set to ``new``; every other key kept as it was."""
    servers = current.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise InstallRefused(f"{where}: mcpServers is a JSON {type(servers).__name__}, not an "
                             "object; left as it was")
    old = servers.get(name)
    if old is not None and old != new and not _ours(old):
        raise InstallRefused(f"{where}: an mcpServers entry {name!r} is there that scorch did "
                             f"not write; left as it was (install under another name with "
                             "--name, or remove that entry)")
    return {**current, "mcpServers": {**servers, name: new}}


def _ours(found: Any) -> bool:
    if not isinstance(found, dict):
        return False
    env, headers = found.get("env"), found.get("headers")
    return ((isinstance(env, dict) and env.get(MARK) == MARK_VALUE)
            or (isinstance(headers, dict) and headers.get(MARK_HEADER) == MARK_VALUE))


def install(config_path: Path, target: Path, name: str = "scorch",
            new: dict[str, Any] | None = None) -> tuple[Path, Path | None]:
    """Write the entry (stdio unless ``new``) into ``target``; return it and its backup (None:
    there was no file). A file given an entry with a token is left readable by its owner only.
    """
    target = target.resolve() if target.is_symlink() else target
    current = _read(target)
    new = new or entry(config_path)
    content = json.dumps(merged(current, name, new, target), indent=2) + "\n"
    backup = None
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        stamp = time.strftime("%Y%m%d-%H%M%S")
        # Two installs in one second keep both backups.
        names = (f"{target.name}.{stamp}{f'-{n}' if n else ''}.bak" for n in range(1000))
        backup = next((target.with_name(b) for b in names if not target.with_name(b).exists()),
                      None)
        if backup is None:
            raise InstallRefused(f"{target}: too many backups from this second; left as it was")
        shutil.copy2(target, backup)
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    secret = "Authorization" in new.get("headers", {})
    mode = 0o600 if secret else 0o666  # 0o666: as the umask says, as before
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(content)
    if secret:
        os.chmod(partial, 0o600)  # a partial left by an earlier run kept its mode
    os.replace(partial, target)
    return target, backup
