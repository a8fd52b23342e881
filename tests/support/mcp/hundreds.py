"""Hundreds of entries in every list an MCP tool answers with, made cheaply for the size test:
files in the state folders, direct calls in a loop bounded in count."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra

#: Entries each list gets before it is called.
HUNDREDS = 300
#: A long name, so that each entry costs what a real one may.
LONG = "a-rather-long-name-as-people-give-them-to-find-them-again-later"


@contextmanager
def filled(orchestra: Orchestra, tmp_path: Path) -> Iterator[None]:
    """Hundreds of recordings, snippets, sessions, scenes, buffers, undo entries, MIDI routes
    and ports and patterns, made cheaply (files in the state folders, direct calls in a
    bounded loop), and taken away after."""
    import jack
    import numpy as np
    import soundfile

    from scorch.primitives.system.jackd import client_environment

    recordings = orchestra.studio.recorder.folder
    recordings.mkdir(parents=True, exist_ok=True)
    snippets = orchestra.knowledge.snippets.user_dir
    snippets.mkdir(parents=True, exist_ok=True)
    sessions = orchestra.sessions.store.folder
    sessions.mkdir(parents=True, exist_ok=True)
    sample = tmp_path / "click.wav"
    soundfile.write(sample, np.zeros(64, dtype="float32"), 48000)
    made: list[Path] = []
    for i in range(HUNDREDS):
        name = f"sizes-{i:03d}-{LONG}"
        made.append(recordings / f"{name}.wav")
        made[-1].write_bytes(sample.read_bytes())
        made.append(snippets / f"sizes_{i:03d}.scd")
        made[-1].write_text(f"// description: {LONG} {i}\n// tags: sizes\n\n{i}\n")
        made.append(sessions / f"{name}.toml")
        made[-1].write_text("# nothing\n")
    api = LocalService(orchestra)
    api.call("play", {"instance": "alpha", "synthdef": "sine", "node": "sizes",
                      "params": {"amp": 0.0}})
    for i in range(HUNDREDS // 3):  # each journaled, as a person's changes are
        api.call("set", {"instance": "alpha", "node": "sizes", "params": {"freq": 100 + i}})
    scenes = [f"sizes-{i:03d}" for i in range(HUNDREDS // 2)]
    for scene in scenes:
        orchestra.scenes.save(scene, "alpha")
    buffers = [f"sizes{i:03d}" for i in range(HUNDREDS // 3)]
    for buffer in buffers:  # a file in a folder the installation allows: a recording
        orchestra.buffers.load("alpha", str(made[0]), buffer)
    routes = [orchestra.midi.map({"port": f"sizes-{i:03d}-{LONG}", "cc": 1, "instance": "alpha",
                                  "node": "sizes", "param": "amp"})["id"]
              for i in range(HUNDREDS // 3)]
    assert orchestra.rooms.execute_one("alpha", (
        f"{HUNDREDS}.do {{ |i| Pdef((\"sizes\" ++ i).asSymbol, Pbind(\\dur, 1, "
        "\\degree, Pseq((0..40), inf), \\amp, 0)) }; 1")).ok
    with client_environment(orchestra.config.audio.jack_server):
        ports = jack.Client("sizes-ports", no_start_server=True)
        for i in range(HUNDREDS // 3):  # jackd's port table is not much larger
            ports.midi_inports.register(f"in-{i:03d}-{LONG * 3}")
        ports.activate()
    try:
        deadline = time.monotonic() + 10
        while len(orchestra.views["alpha"].patterns) < HUNDREDS:  # reported twice a second
            assert time.monotonic() < deadline, len(orchestra.views["alpha"].patterns)
            time.sleep(0.05)
        yield
    finally:
        ports.deactivate()
        ports.close()
        orchestra.rooms.execute_one("alpha", f"{HUNDREDS}.do {{ |i| "
                                    "Pdef((\"sizes\" ++ i).asSymbol).remove }; 1")
        for route in routes:
            orchestra.midi.unmap(route)
        for buffer in buffers:
            orchestra.buffers.free("alpha", buffer)
        for scene in scenes:
            orchestra.scenes.delete(scene)
        api.call("release", {"instance": "alpha", "node": "sizes"})
        for path in made:
            path.unlink(missing_ok=True)
