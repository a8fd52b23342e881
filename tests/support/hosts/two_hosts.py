"""The two-host installation the local host tests run: alpha and beta, one config file.

alpha holds the room ``lobby`` and the knob's MIDI port (CC 74 turns gallery's drone);
beta holds ``gallery`` with its node ``drone``; both rooms are in the group ``rooms``.
Each test module names its own knob port and JACK server.
"""

from __future__ import annotations

import textwrap
from pathlib import Path


def two_host_config(state: Path, jack: str, knob: str, extra: str = "") -> str:
    """The config of alpha and beta sharing ``state`` and the JACK server ``jack``,
    with ``extra`` (TOML) after it."""
    return textwrap.dedent(f"""
        state_dir = "{state}"
        [audio]
        driver = "dummy"
        jack_server = "{jack}"
        [docs]
        build = "on-demand"
        [watchdog]
        interval = 0.1
        [midi]
        backend = "jack"
        rescan_interval = 0.1
        [[midi.controls]]
        host = "alpha"
        port = "{knob}"
        cc = 74
        instance = "gallery"
        node = "drone"
        param = "freq"
        range = [100, 1000]
        curve = "lin"
        takeover = "immediate"
        [hosts.alpha]
        via = "local"
        [hosts.beta]
        via = "local"
        [instances.lobby]
        host = "alpha"
        group = "rooms"
        synthdefs = ["sine"]
        [instances.gallery]
        host = "beta"
        group = "rooms"
        synthdefs = ["sine"]
        [instances.gallery.nodes.drone]
        synthdef = "sine"
        params = {{ freq = 220, amp = 0.01 }}
        """) + extra
