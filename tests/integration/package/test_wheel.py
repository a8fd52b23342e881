"""The wheel installed as people install it (``uv tool install``), far from the checkout.

A fresh environment in a temporary folder, its HOME and XDG folders the test's
own: ``scorch init`` writes the starter config, ``scorch mcp`` (no ``--config``:
it finds that file) boots its room through a real ``mcp.Client``, and ``listen``
hears the drone the starter plays.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import jack_name
from tests.support.mcp.calls import call
from tests.support.packaging import ROOT, UV, base_python, fixed_folder, headless, outside
from tests.support.processes import pids_using
from tests.support.shm.cleanup import kill_freeing_segments

pytestmark = [pytest.mark.integration]

JACK = jack_name("wheel")


@dataclass(frozen=True)
class Tool:
    """scorch installed by ``uv tool install`` into ``folder``."""

    folder: Path
    scorch: Path
    python: Path
    env: dict[str, str]
    home: Path


@pytest.fixture(scope="module")
def tool(wheel: Path) -> Iterator[Tool]:
    folder = fixed_folder("uvtool")
    home = folder / "home"
    env = outside(home)
    subprocess.run([str(UV), "tool", "install", "--python", base_python(), str(wheel)],
                   env={**env, "UV_TOOL_DIR": str(folder / "tools"),
                        "UV_TOOL_BIN_DIR": str(folder / "bin")},
                   cwd=folder, check=True, capture_output=True, timeout=300)
    yield Tool(folder, folder / "bin" / "scorch", folder / "tools" / "scorch" / "bin" /
               "python", env, home)
    kill_freeing_segments(pids_using(JACK))  # what is left, and the segments it held
    shutil.rmtree(folder, ignore_errors=True)


def test_wheel_and_sdist_hold_every_file_a_room_needs(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    (sdist,) = wheel.parent.glob("scorch-*.tar.gz")
    with tarfile.open(sdist) as tar:
        in_sdist = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    needed = {"mcp_server/handshake.json", "scorch/bundled/config.toml"}
    needed |= {f"scorch/bundled/synthdefs/{p.name}" for p in (ROOT / "synthdefs").glob("*.scd")}
    needed |= {f"scorch/bundled/docs/{p.name}" for p in (ROOT / "docs").glob("*.md")}
    for folder in ("scorch/primitives/sclang/classes", "scorch/knowledge/snippets"):
        needed |= {str(p.relative_to(ROOT)) for p in (ROOT / folder).rglob("*.sc*")}
    assert len(needed) > 40
    assert needed - names == set()
    assert needed - in_sdist == set()


def test_the_installed_scorch_is_its_own_and_reads_its_own_files(tool: Tool) -> None:
    probe = ("import json, scorch\n"
             "from scorch import bundled\n"
             "from scorch.config.installation import load_config\n"
             "from scorch.config.locate import find_config\n"
             "from scorch.primitives.sclang.interpreter import CLASSES\n"
             "config = load_config(find_config(None))\n"
             "print(json.dumps({'scorch': scorch.__file__, 'synthdefs': str(bundled.synthdefs()),"
             " 'classes': str(CLASSES), 'config': str(config.source),"
             " 'rooms': list(config.instances)}))\n")
    found = json.loads(subprocess.run([str(tool.python), "-c", probe], env=tool.env,
                                      cwd=tool.home, check=True, capture_output=True,
                                      text=True, timeout=60).stdout)
    site = str(tool.folder / "tools" / "scorch")
    assert {key: value.startswith(site) for key, value in found.items() if key != "rooms"} \
        == {"scorch": True, "synthdefs": True, "classes": True, "config": True}
    # No config anywhere: the built-in one, one room.
    assert found["rooms"] == ["main"]
    assert str(ROOT) not in json.dumps(found)


@pytest.mark.anyio
async def test_init_then_mcp_boots_the_starter_room_and_listen_hears_it(tool: Tool) -> None:
    init = subprocess.run([str(tool.scorch), "init"], env=tool.env, cwd=tool.home,
                          capture_output=True, text=True, timeout=60)
    assert init.returncode == 0, init.stderr
    config = tool.home / ".config" / "scorch" / "config.toml"
    assert str(config) in init.stdout
    written = config.read_text(encoding="utf-8")
    assert written.startswith("# scorch's starter config")
    again = subprocess.run([str(tool.scorch), "init"], env=tool.env, cwd=tool.home,
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 1 and "never writes over" in again.stderr
    assert config.read_text(encoding="utf-8") == written

    headless(config, JACK, tool.home / "state")
    log = tool.home / "mcp.log"
    params = StdioServerParameters(
        command="sh", args=["-c", 'exec "$0" mcp 2>>"$1"', str(tool.scorch), str(log)],
        env=tool.env, cwd=str(tool.home))
    async with Client(params) as client:
        listed = await call(client, "list_instances")
        assert [room["name"] for room in listed["instances"]] == ["main"]
        heard = await call(client, "listen", instance="main", seconds=1.0)
    assert not heard["silent"], heard
    # The starter's drone: the ambient SynthDef at 110 Hz.
    assert heard["fundamental_hz"] == pytest.approx(110, rel=0.05), heard
    assert "orchestra stopped" in log.read_text()
