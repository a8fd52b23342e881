"""Ableton Link between scorch's room and a bare sclang's LinkClock (run inside a netns).

``python -m tests.support.link_check STATE_DIR`` starts one room with ``[tempo] link =
true`` and a plain sclang with its own LinkClock, then checks that they share
tempo and phase in both directions. It prints one JSON object of what it saw.
Link finds peers by UDP multicast on every interface, so tests/integration/midi/test_link.py runs
this in a network namespace that has only a loopback interface.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from tests.conftest import jack_name
from tests.support.bare_sclang import BareSclang


def wait(check: Any, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


def bare_clock(bare: BareSclang) -> tuple[float, float, int]:
    """(bpm, beats, peers) of the bare sclang's LinkClock."""
    out = bare.run('"@@" ++ [~link.tempo * 60, ~link.beats, ~link.numPeers].join(" ") ++ "@@"')
    assert out is not None, "the bare sclang did not answer"
    bpm, beats, peers = out.split("@@")[1].split()
    return float(bpm), float(beats), int(peers)


def main(state: Path) -> dict[str, Any]:
    text = (f'state_dir = "{state}"\n[audio]\njack_server = "{jack_name("link")}"\n'
            "[instances.lobby]\n[tempo]\nbpm = 100\nlink = true\n[midi]\nenabled = false\n")
    orch = Orchestra(parse_config(text, state / "config.toml"))
    seen: dict[str, Any] = {}
    try:
        seen["boot"] = orch.start()
        port = orch.views["lobby"].snapshot.port
        wait(lambda: orch.tempo.state()["link"]["rooms_on_link"] == 1)
        bare = BareSclang(port, "lobby")
        try:
            # The bare peer asks for 90 bpm and joins the session scorch's room made.
            bare.run("~link = LinkClock(1.5).quantum_(4)")
            seen["peers"] = wait(lambda: orch.tempo.state()["link"]["peers"] == 1
                                 and bare_clock(bare)[2] == 1) and orch.tempo.state()["link"]
            seen["joined_bpm"] = [bare_clock(bare)[0], orch.tempo.state()["bpm"]]
            # A tempo set by the other application reaches scorch and its room.
            bare.run("~link.tempo = 137 / 60")
            wait(lambda: abs(orch.tempo.state()["bpm"] - 137) < 0.01)
            seen["from_bare"] = [orch.tempo.state()["bpm"], _room_bpm(orch)]
            # A tempo set through scorch reaches the other application.
            orch.tempo.set(None, 88.0)
            wait(lambda: abs(bare_clock(bare)[0] - 88) < 0.01)
            seen["from_scorch"] = [bare_clock(bare)[0], orch.tempo.state()["bpm"]]
            # Phase: the bar phase of both, read one right after the other.
            before = time.monotonic()
            beats = bare_clock(bare)[1]
            ours = orch.tempo.state()
            seen["phase"] = {"bare": beats % 4, "scorch": ours["bar_phase"],
                             "read_s": time.monotonic() - before}
        finally:
            bare.close()
    finally:
        orch.stop()
    return seen


def _room_bpm(orch: Orchestra) -> float:
    (result,) = orch.rooms.execute("lobby", "TempoClock.default.tempo * 60")
    return float(result.value)


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]))))
