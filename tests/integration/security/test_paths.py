"""Every tool argument that names a file, through a real MCP client: it reaches only the
folders the installation allows, and nothing outside is read or written (issue 37).

A room with a sample folder; outside it, a folder of files that a traversal would reach:
a real sound file, a real .mid, a .mid to overwrite. Links inside the allowed folders
point there. Each argument is given ``..``, an absolute path outside, such a link, a
trailing newline and a NUL: each is refused naming the argument. Then the disk says
what happened outside: no file changed, none added, none read (each file's access time
was set before its modification time, so a read would move it; a probe read by the
test itself shows that this file system does).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mido
import numpy as np
import pytest
import soundfile as sf
from mcp import Client

from mcp_server.server import build_server
from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.primitives.synthdefs.library import SynthDefLibrary
from tests.conftest import jack_name
from tests.support.mcp.calls import call, fails

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

#: Every tool argument that names a file: (tool, the other arguments, the folder a
#: relative path is taken in, the kind of file).
ARGUMENTS: list[tuple[str, dict[str, Any], str, str]] = [
    ("buffer", {"action": "load", "instance": "room"}, "samples", "wav"),
    ("listen", {}, "recordings", "wav"),
    ("notes", {"action": "transcribe"}, "recordings", "wav"),
    ("notes", {"action": "play", "instance": "room"}, "midi", "mid"),
    ("notes", {"action": "export", "last_seconds": 60.0}, "midi", "mid"),
    ("partner", {"action": "continue", "save": True}, "midi", "mid"),
    ("partner", {"action": "infill", "last_seconds": 60.0}, "midi", "mid"),
]
#: A playing Pdef whose notes the patterns' capture keeps (notes export reads them).
TUNE = "Pdef(\\tune, Pbind(\\degree, Pseq([0, 2, 4], inf), \\dur, 0.1, \\amp, 0.001)).play; 1"


@dataclass(frozen=True)
class Places:
    """The folders of the test: what is allowed, and what lies outside."""

    root: Path
    state: Path
    samples: Path
    outside: Path

    def base(self, kind: str) -> Path:
        """The folder a relative path of this kind is taken in."""
        return {"samples": self.samples, "recordings": self.state / "recordings",
                "midi": self.state / "midi"}[kind]


def write_wav(path: Path) -> None:
    t = np.arange(4800) / 48000
    sf.write(path, 0.3 * np.sin(2 * np.pi * 440 * t), 48000)


def write_mid(path: Path) -> None:
    track = mido.MidiTrack([mido.Message("note_on", note=60, velocity=90, time=0),
                            mido.Message("note_off", note=60, velocity=0, time=480)])
    midi = mido.MidiFile(ticks_per_beat=480)
    midi.tracks.append(track)
    midi.save(str(path))


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> Places:
    root = tmp_path_factory.mktemp("paths")
    here = Places(root, root / "state", root / "samples", root / "outside")
    for folder in (here.samples, here.outside, here.base("recordings"), here.base("midi")):
        folder.mkdir(parents=True)
    write_wav(here.outside / "secret.wav")
    write_mid(here.outside / "secret.mid")
    write_mid(here.outside / "victim.mid")
    write_wav(here.samples / "inside.wav")
    write_wav(here.base("recordings") / "inside.wav")
    for kind, ext in (("samples", "wav"), ("recordings", "wav"), ("midi", "mid")):
        target = "victim.mid" if kind == "midi" else f"secret.{ext}"
        (here.base(kind) / f"escape.{ext}").symlink_to(here.outside / target)
        (here.base(kind) / "escape-dir").symlink_to(here.outside, target_is_directory=True)
    return here


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def orchestra(places: Places) -> Iterator[Orchestra]:
    text = (f'state_dir = "{places.state}"\n[audio]\ndriver = "dummy"\n'
            f'jack_server = "{jack_name("paths")}"\n[docs]\nbuild = "on-demand"\n'
            f'[midi]\nenabled = false\n[samples]\npaths = ["{places.samples}"]\n'
            '[instances.room]\nsynthdefs = ["pluck"]\n')
    orch = Orchestra(parse_config(text, places.root / "config.toml"), SynthDefLibrary())
    try:
        assert orch.start() == {"room": None}
        assert orch.rooms.execute_one("room", TUNE, timeout=10).ok
        yield orch
    finally:
        orch.stop()


@pytest.fixture
async def client(orchestra: Orchestra) -> AsyncIterator[Client]:
    async with Client(build_server(LocalService(orchestra))) as session:
        yield session


def hostile(places: Places, kind: str, ext: str) -> dict[str, str]:
    """Each way out, as a path argument taken in the ``kind`` folder."""
    base = places.base(kind)
    target = places.outside / ("new-dotdot.mid" if ext == "mid" else "secret.wav")
    return {
        "..": os.path.relpath(target, base),
        "absolute outside": str(places.outside / ("new-absolute.mid" if ext == "mid"
                                                  else "secret.wav")),
        "symlink out": f"escape.{ext}",
        "symlinked folder": f"escape-dir/secret.{ext}",
        "trailing newline": f"inside.{ext}\n",
        "NUL": f"inside\x00.{ext}",
    }


def snapshot(folder: Path) -> dict[str, tuple[float, float, int]]:
    """Each file under ``folder``: its access time, modification time and size."""
    found = {}
    for path in sorted(folder.rglob("*")):
        stat = path.lstat()
        found[str(path)] = (stat.st_atime, stat.st_mtime, stat.st_size)
    return found


def unread(folder: Path) -> None:
    """Set each file's access time before its modification time: a read then moves it."""
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            stat = path.stat()
            os.utime(path, (stat.st_mtime - 3600, stat.st_mtime))


async def test_every_path_argument_is_refused_outside_and_nothing_outside_is_touched(
        client: Client, places: Places, orchestra: Orchestra) -> None:
    time.sleep(1.0)  # the Pdef played some notes to export
    contents = {p: hashlib.sha256(p.read_bytes()).hexdigest()
                for p in places.outside.iterdir()}
    unread(places.outside)
    before, around = snapshot(places.outside), sorted(places.root.iterdir())
    wrong = []
    for tool, fixed, kind, ext in ARGUMENTS:
        for way, path in hostile(places, kind, ext).items():
            result = await client.call_tool(tool, {**fixed, "path": path})
            said = result.structured_content or {}
            text = "\n".join(getattr(b, "text", "") for b in result.content)
            code = "INVALID_ARGUMENT" if way == "NUL" else "PATH_REFUSED"
            if (not result.is_error or said.get("argument") != "path"
                    or said.get("code") != code
                    or (code == "PATH_REFUSED" and "allowed:" not in text
                        and "control character" not in text)):
                wrong.append(f"{tool} {fixed.get('action', '')} {way}: {said} {text[:200]}")
    assert not wrong, "\n".join(wrong)
    assert snapshot(places.outside) == before  # nothing read, written or added
    assert sorted(places.root.iterdir()) == around  # nothing beside it either
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in places.outside.iterdir()} == contents
    assert orchestra.buffers.loaded() == []
    probe = places.outside / "probe"  # a read does move an access time on this disk
    probe.write_text("probe")
    unread(places.outside)
    stamp = probe.stat().st_atime
    probe.read_text()
    assert probe.stat().st_atime > stamp
    probe.unlink()


async def test_inside_the_allowed_folders_the_same_arguments_work(
        client: Client, places: Places, orchestra: Orchestra) -> None:
    loaded = await call(client, "buffer", action="load", instance="room", path="inside.wav")
    assert loaded["buffers"][0]["path"] == str(places.samples / "inside.wav")
    heard = await call(client, "listen", path="inside.wav")
    assert heard["audio"] == str(places.base("recordings") / "inside.wav")
    write_mid(places.base("midi") / "tune.mid")
    played = await call(client, "notes", action="play", instance="room", path="tune.mid",
                        name="pathtune")
    assert played["path"] == "tune.mid" and played["count"] == 1
    assert orchestra.rooms.execute_one("room", "Pdef(\\pathtune).stop; 1").ok


async def test_writing_over_a_file_takes_overwrite(client: Client, places: Places) -> None:
    time.sleep(0.5)
    first = await call(client, "notes", action="export", last_seconds=30.0, path="take.mid")
    written = places.base("midi") / "take.mid"
    assert first["path"] == str(written) and written.exists()
    written.write_bytes(b"not yet overwritten")
    refusal = await client.call_tool("notes", {"action": "export", "last_seconds": 30.0,
                                               "path": "take.mid"})
    said = refusal.structured_content or {}
    assert refusal.is_error and said["code"] == "INVALID_ARGUMENT" and said["argument"] == "path"
    assert "overwrite = true" in said["message"]
    assert written.read_bytes() == b"not yet overwritten"
    again = await call(client, "notes", action="export", last_seconds=30.0, path="take.mid",
                       overwrite=True)
    assert again["path"] == str(written) and mido.MidiFile(str(written)).length > 0
    # a link to a file outside is no way to write over it, overwrite or not
    assert "outside the folders" in await fails(client, "notes", action="export",
                                                last_seconds=30.0, path="escape.mid",
                                                overwrite=True)
    assert (places.outside / "victim.mid").read_bytes() != b""
    # the default names are new files every time
    names = {(await call(client, "notes", action="export", last_seconds=30.0))["path"]
             for _ in range(3)}
    assert len(names) == 3
