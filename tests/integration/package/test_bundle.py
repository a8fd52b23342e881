"""The MCP Bundle: laid out from the operations, checked and packed by the official
``mcpb`` CLI, then unpacked and started with the command its manifest declares,
through a real ``mcp.Client``, as Claude Desktop starts it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import jack_name
from tests.support.mcp.calls import call
from tests.support.packaging import fixed_folder, mcpb, outside
from tests.support.processes import pids_using
from tests.support.shm.cleanup import kill_freeing_segments

pytestmark = [pytest.mark.integration]

JACK = jack_name("bundle")


@pytest.fixture(scope="module")
def bundle(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The .mcpb that `make bundle` makes: laid out, validated, packed."""
    folder = tmp_path_factory.mktemp("bundle")
    subprocess.run([sys.executable, "-m", "mcp_server.bundle", str(folder / "src"),
                    str(wheel)], check=True, capture_output=True, timeout=120)
    checked = subprocess.run([str(mcpb()), "validate", str(folder / "src" / "manifest.json")],
                             capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0 and "passes" in checked.stdout, checked
    packed = folder / "scorch.mcpb"
    subprocess.run([str(mcpb()), "pack", str(folder / "src"), str(packed)], check=True,
                   capture_output=True, timeout=120)
    yield packed
    kill_freeing_segments(pids_using(JACK))  # what is left, and the segments it held


def test_mcpb_validate_refuses_a_manifest_without_its_server(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"manifest_version": "0.4", "name": "x", "version": "1",
                                    "description": "x", "author": {"name": "x"}}))
    checked = subprocess.run([str(mcpb()), "validate", str(manifest)], capture_output=True,
                             text=True, timeout=120)
    assert checked.returncode != 0 and "server" in checked.stdout + checked.stderr


def declared(manifest: dict[str, Any], folder: Path, config: Path) -> tuple[str, list[str]]:
    """The manifest's command and arguments, with the host's substitutions made."""
    server = manifest["server"]["mcp_config"]
    values = {"${__dirname}": str(folder), "${user_config.config}": str(config)}
    return server["command"], [values.get(arg, arg) for arg in server["args"]]


@pytest.mark.anyio
async def test_the_unpacked_bundle_serves_the_tools_its_manifest_lists(
        bundle: Path, tmp_path: Path) -> None:
    folder = fixed_folder("bundle")
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["server"]["type"] == "uv"
    assert manifest["user_config"]["config"]["type"] == "file"
    config = tmp_path / "rooms.toml"
    config.write_text(textwrap.dedent(f"""
        state_dir = "{tmp_path / 'state'}"
        [audio]
        driver = "dummy"
        jack_server = "{JACK}"
        [midi]
        enabled = false
        [docs]
        build = "on-demand"
        [instances.desk]
        """))
    command, args = declared(manifest, folder, config)
    log = tmp_path / "mcp.log"
    params = StdioServerParameters(command="sh", args=["-c", 'exec "$0" "$@" 2>>"$LOG"',
                                                       command, *args],
                                   env={**outside(tmp_path / "home"), "LOG": str(log)},
                                   cwd=str(tmp_path))
    async with Client(params) as client:
        listed = await client.list_tools()
        assert sorted(t.name for t in listed.tools) \
            == sorted(t["name"] for t in manifest["tools"])
        rooms = await call(client, "list_instances")
        assert [room["name"] for room in rooms["instances"]] == ["desk"]
        # A call that needs the room waits for its boot: the wheel's sclang classes work.
        ran = await call(client, "execute", instance="desk", code="(3 * 14).asString")
        assert "42" in json.dumps(ran), ran
    # It ran the wheel it carries, in the environment uv made beside it.
    assert (folder / ".venv" / "lib").is_dir()
    assert "orchestra stopped" in log.read_text(), log.read_text()[-3000:]
    # Claude Desktop gone, nothing of the room is left (uv passes the end on to scorch).
    deadline = time.monotonic() + 30
    while pids_using(JACK) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pids_using(JACK) == []
    shutil.rmtree(folder, ignore_errors=True)
