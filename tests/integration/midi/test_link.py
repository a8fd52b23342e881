"""Ableton Link: scorch's room and another application's LinkClock share tempo and phase.

Link finds its peers by UDP multicast on every network interface. So that the
test never reaches a real network, it runs in a network namespace of its own
with only a loopback interface (``ip netns``, which needs root): there Link's
multicast stays on the machine, and both peers see each other.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import JACK_PREFIX
from tests.support.harness import needs_tools
from tests.support.skips import needs

ROOT = Path(__file__).resolve().parents[3]

pytestmark = [
    pytest.mark.integration, needs_tools,
    needs(os.geteuid() == 0 and shutil.which("ip") is not None,
          "root and iproute2: a network namespace (ip netns) needs them (CI is root)"),
]


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


def test_a_room_and_a_bare_sclangs_linkclock_agree_on_tempo_and_phase_both_ways(
    tmp_path: Path,
) -> None:
    namespace = f"{JACK_PREFIX}-link"
    subprocess.run(["ip", "netns", "del", namespace], capture_output=True, timeout=10)
    ip("netns", "add", namespace)
    try:
        ip("netns", "exec", namespace, "ip", "link", "set", "lo", "up")
        done = subprocess.run(
            ["ip", "netns", "exec", namespace, sys.executable, "-m", "tests.support.link_check",
             str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    finally:
        ip("netns", "del", namespace)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["boot"] == {"lobby": None}
    assert seen["peers"] == {"peers": 1, "rooms_on_link": 1}
    # The other application joined scorch's session and took its tempo.
    assert seen["joined_bpm"] == [pytest.approx(100.0, abs=0.01)] * 2
    # Its tempo reached scorch and the room's TempoClock.default; scorch's reached it.
    assert seen["from_bare"] == [pytest.approx(137.0, abs=0.01)] * 2
    assert seen["from_scorch"] == [pytest.approx(88.0, abs=0.01)] * 2
    # Same bar phase, to within what reading one after the other took (+3 ms).
    phase = seen["phase"]
    slack = (phase["read_s"] + 0.003) * 88.0 / 60.0
    assert abs(phase["bare"] - phase["scorch"]) % 4 < slack or \
        4 - abs(phase["bare"] - phase["scorch"]) % 4 < slack, phase
