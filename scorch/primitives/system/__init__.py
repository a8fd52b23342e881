"""The OS: processes and their console, jackd, ports, the audio driver, systemd, timing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.primitives.system.audio_driver import AudioChoice, choose, sound_cards
    from scorch.primitives.system.console import Console, ConsoleLine
    from scorch.primitives.system.jack_ports import JackPortLister, loaded_libjack
    from scorch.primitives.system.jackd import (
        ORDINARY_PERIOD,
        XRUN,
        JackdOptions,
        ServerClaim,
        auto_period,
        client_environment,
        jack_env,
        wait_for_server,
    )
    from scorch.primitives.system.process import (
        ExitCallback,
        ManagedProcess,
        child_env,
        cpu_seconds,
        pid_alive,
        spawn,
        stopped,
    )
    from scorch.primitives.system.setup_fixes import (
        AUDIO_GROUP,
        FIXES,
        MIN_RTPRIO,
        Limits,
        describe,
        family,
        fix,
        group_ok,
        realtime_ok,
    )
    from scorch.primitives.system.systemd import Notifier
    from scorch.primitives.system.thread_timing import realtime_granted, tighten_current_thread
    from scorch.primitives.system.udp_ports import free_udp_port, udp_port_free, udp_port_holder

__all__ = [
    "AUDIO_GROUP",
    "FIXES",
    "MIN_RTPRIO",
    "ORDINARY_PERIOD",
    "XRUN",
    "AudioChoice",
    "Console",
    "ConsoleLine",
    "ExitCallback",
    "JackPortLister",
    "JackdOptions",
    "Limits",
    "ManagedProcess",
    "Notifier",
    "ServerClaim",
    "auto_period",
    "child_env",
    "choose",
    "client_environment",
    "cpu_seconds",
    "describe",
    "family",
    "fix",
    "free_udp_port",
    "group_ok",
    "jack_env",
    "loaded_libjack",
    "pid_alive",
    "realtime_granted",
    "realtime_ok",
    "sound_cards",
    "spawn",
    "stopped",
    "tighten_current_thread",
    "udp_port_free",
    "udp_port_holder",
    "wait_for_server",
]
__getattr__ = lazy_face(__name__, __file__)
