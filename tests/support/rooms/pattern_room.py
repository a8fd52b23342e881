"""One real room for the pattern tests, and what they read from its scsynth.

What lands where is read from scsynth itself: a client of our own registered with
``/notify 1`` hears every ``/n_go``; each pattern plays into a group of its own, so
the parent group of a started synth says which pattern made it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from scorch.api.local import LocalService
from scorch.api.ops.music.patterns import PatternOutput
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.primitives.synthdefs.library import SynthDefLibrary
from tests.conftest import jack_name, orchestra_pids, pid_alive
from tests.support.scsynth_listener import Heard, Listener

BPM = 120.0
BEAT = 60.0 / BPM
BAR = 4 * BEAT
CONFIG = f"""
state_dir = "{{state}}"
[audio]
driver = "dummy"
jack_server = "{{jack}}"
[midi]
enabled = false
[tempo]
bpm = {BPM}
[instances.lobby]
"""


class PatternRoom:
    """The room `lobby`, the API over it and a listener on its scsynth."""

    def __init__(self, orch: Orchestra) -> None:
        self.orch = orch
        self.api = LocalService(orch)
        port = orch.rooms.status("lobby").port
        assert port is not None
        self.listener = Listener(port)

    def starts(self, group: int, since: float) -> list[Heard]:
        """``/n_go`` of synths in ``group`` heard after ``since``."""
        return [h for h in self.listener.synth_starts(since) if h.message.args[1] == group]

    def pattern(self, **args: Any) -> PatternOutput:
        out = self.api.call("pattern", {"instance": "lobby", **args})
        assert isinstance(out, PatternOutput)
        return out


@contextlib.contextmanager
def running(tmp: Path, name: str, library: SynthDefLibrary,
            make: Callable[[Orchestra], PatternRoom]) -> Iterator[Any]:
    """A started one-room orchestra as ``make`` wraps it; no process outlives it."""
    text = CONFIG.format(state=tmp / "state", jack=jack_name(name))
    orch = Orchestra(parse_config(text, tmp / "config.toml"), library)
    assert orch.start() == {"lobby": None}
    pids = orchestra_pids(orch)
    room = make(orch)
    try:
        yield room
    finally:
        room.listener.close()
        orch.stop()
    assert not [pid for pid in pids if pid_alive(pid)], "a process outlived stop()"


def wait(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Until ``condition`` holds; fails with ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)
