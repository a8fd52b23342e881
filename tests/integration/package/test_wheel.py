"""The wheel installed as people install it (``uv tool install``), far from the checkout.

A fresh environment in a temporary folder, its HOME and XDG folders the test's
own: ``scorch init`` writes the starter config, ``scorch mcp`` (no ``--config``:
it finds that file) boots its room through a real ``mcp.Client``, and ``listen``
hears the drone the starter plays. With no config anywhere, ``scorch mcp`` boots
the built-in one. Nothing of the checkout is on PATH: uv alone, and the folder it
puts scorch in.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from scorch.primitives.system.audio_driver import SERVER_ENV
from tests.conftest import jack_name
from tests.support.harness import jack_server
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
    # The folder uv puts its commands in on PATH, as uv asks people to.
    env["PATH"] = os.pathsep.join([str(folder / "bin"), env["PATH"]])
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
             "from scorch.primitives.sclang.launch import CLASSES\n"
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


def test_path_reaches_uv_and_the_tool_environments_scorch_never_the_checkouts(
        tool: Tool) -> None:
    path = tool.env["PATH"]
    assert shutil.which("scorch", path=path) == str(tool.scorch)
    shebang = tool.scorch.read_text(encoding="utf-8").splitlines()[0]
    assert Path(shebang.removeprefix("#!")).resolve() == tool.python.resolve()
    uv = shutil.which("uv", path=path)
    assert uv is not None and Path(uv).resolve() == UV.resolve()
    checkout = (ROOT, Path(sys.prefix))  # the tests' virtualenv may be another checkout's
    for name in ("python", "python3", "pip", "pytest", "ruff", "scorch"):
        found = shutil.which(name, path=path)
        assert found is None or not any(
            Path(found).resolve().is_relative_to(place) for place in checkout), found


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


@pytest.mark.anyio
async def test_with_no_config_anywhere_mcp_boots_the_built_in_room_and_listen_hears_it(
        tool: Tool, tmp_path: Path) -> None:
    home = tmp_path / "home"  # no ./config.toml, no ~/.config/scorch, no `scorch init`
    env = {**outside(home), "PATH": tool.env["PATH"]}
    log = tmp_path / "mcp.log"
    # The built-in config's driver is auto: it joins the JACK server $JACK_DEFAULT_SERVER
    # names when one runs, as it joins a person's (or PipeWire's). Here that is the test's
    # own headless jackd, so the room plays on no sound card, whatever this machine has.
    with jack_server(jack_name("builtin")) as server:
        params = StdioServerParameters(
            command="sh", args=["-c", 'exec scorch mcp 2>>"$0"', str(log)],
            env={**env, SERVER_ENV: server}, cwd=str(home))
        async with Client(params) as client:
            listed = await call(client, "list_instances")
            assert [room["name"] for room in listed["instances"]] == ["main"]
            heard = await call(client, "listen", instance="main", seconds=1.0)
            status = await call(client, "status")
        text = log.read_text()
        assert "orchestra stopped" in text, text[-3000:]
        assert f"hosting {tool.folder}/tools/scorch/" in text and "/bundled/config.toml" in text
        assert not (home / ".config" / "scorch" / "config.toml").exists()
        assert (status["audio"]["driver"], status["audio"]["server"]) == ("jack", server)
        assert not heard["silent"], heard
        # The built-in room's drone: the ambient SynthDef at 110 Hz.
        assert heard["fundamental_hz"] == pytest.approx(110, rel=0.05), heard
        # What it heard went where the platform keeps state: under this HOME's XDG folder.
        (state,) = (home / ".local" / "state" / "scorch").iterdir()
        assert state.name.startswith("config-") and Path(heard["audio"]).parent.parent == state
