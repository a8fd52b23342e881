"""The MCP Bundle's manifest and files: tools from the operations, a config setting,
the wheel named by the bundle's own pyproject."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from mcp_server.bundle import ENTRY_POINT, MAIN, lay_out, main, manifest, pyproject
from mcp_server.early import SNAPSHOT
from scorch.config.tools import PROFILES


def test_the_manifest_lists_the_tools_the_server_lists() -> None:
    recorded = json.loads(SNAPSHOT.read_text())["answers"]
    listed = next(v for k, v in recorded.items() if k.startswith("tools/list"))
    names = [tool["name"] for tool in manifest("1.0", "w.whl")["tools"]]
    assert sorted(names) == sorted(tool["name"] for tool in listed["tools"])
    assert all(tool["description"] for tool in manifest("1.0", "w.whl")["tools"])


def test_the_server_runs_with_uv_in_the_unpacked_folder_with_the_chosen_config() -> None:
    server = manifest("1.2.3", "scorch-1.2.3-py3-none-any.whl")["server"]
    assert server["type"] == "uv" and server["entry_point"] == ENTRY_POINT
    assert server["mcp_config"]["command"] == "uv"
    assert server["mcp_config"]["args"] == [
        "run", "--directory", "${__dirname}", "--quiet", ENTRY_POINT, "${user_config.config}",
        "${user_config.tools}"]
    setting = manifest("1", "w.whl")["user_config"]["config"]
    assert setting["type"] == "file" and setting["required"] is False
    tools = manifest("1", "w.whl")["user_config"]["tools"]
    assert tools["type"] == "string" and tools["required"] is False
    assert all(name in tools["description"] for name in ("all", *PROFILES))


def test_the_bundles_project_takes_scorch_from_the_wheel_beside_it() -> None:
    project = tomllib.loads(pyproject("scorch-0.1.0-py3-none-any.whl"))
    assert project["project"]["dependencies"] == ["scorch"]
    assert project["tool"]["uv"] == {
        "package": False,
        "sources": {"scorch": {"path": "wheels/scorch-0.1.0-py3-none-any.whl"}}}


@pytest.mark.parametrize(("given", "argv"), [
    ([], ["mcp"]), ([""], ["mcp"]), (["${user_config.config}"], ["mcp"]),
    (["/home/me/rooms.toml"], ["mcp", "--config", "/home/me/rooms.toml"]),
    (["${user_config.config}", "${user_config.tools}"], ["mcp"]),
    (["", "play"], ["mcp", "--tools", "play"]),
    (["/r.toml", "execute,docs"], ["mcp", "--config", "/r.toml", "--tools", "execute,docs"]),
])
def test_the_entry_point_passes_only_the_chosen_settings(given: list[str], argv: list[str]) -> None:
    space: dict[str, Any] = {"__name__": "bundle_main"}
    exec(compile(MAIN, ENTRY_POINT, "exec"), space)
    assert space["argv"](given) == argv


def test_lay_out_writes_the_folder_mcpb_packs(tmp_path: Path) -> None:
    wheel = tmp_path / "scorch-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"PK")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "stale").write_text("")
    written = lay_out(tmp_path / "out", wheel)
    assert sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*")
                  if p.is_file()) == ["manifest.json", "pyproject.toml", ENTRY_POINT,
                                      f"wheels/{wheel.name}"]
    assert json.loads(written.read_text())["version"] == "0.1.0"
    assert main(["only-one"]) == 2
