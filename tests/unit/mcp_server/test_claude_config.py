"""`scorch claude-config`: the Claude Desktop snippet for this checkout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mcp_server.claude_config import snippet

ROOT = Path(__file__).resolve().parents[3]


def test_snippet_starts_this_checkouts_scorch_with_an_absolute_config_path(
        tmp_path: Path) -> None:
    config = tmp_path / "rooms.toml"
    entry = json.loads(snippet(Path(config)))["mcpServers"]["scorch"]
    assert entry["command"] == str(ROOT / ".venv" / "bin" / "scorch")
    assert entry["args"] == ["mcp", "--config", str(config.resolve())]


def test_the_cli_prints_only_the_json(tmp_path: Path) -> None:
    out = subprocess.run([str(Path(sys.executable).parent / "scorch"), "claude-config",
                          "--config", "config.toml"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    entry = json.loads(out)["mcpServers"]["scorch"]
    assert Path(entry["command"]).is_absolute() and Path(entry["args"][2]).is_absolute()
    assert entry["args"][2] == str(ROOT / "config.toml")
