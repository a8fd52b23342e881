"""``scorch claude-config``: the Claude Desktop snippet that starts this checkout's server."""

from __future__ import annotations

import json
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def command_path() -> Path:
    """This checkout's ``scorch`` console script (in its ``.venv``)."""
    return REPO_ROOT / ".venv" / "bin" / "scorch"


def snippet(config_path: Path) -> str:
    """The ``mcpServers`` JSON for Claude Desktop, with absolute paths."""
    entry = {"command": str(command_path()),
             "args": ["mcp", "--config", str(Path(config_path).resolve())]}
    return json.dumps({"mcpServers": {"scorch": entry}}, indent=2)
