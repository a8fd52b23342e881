"""What a machine lacks to run scorch, and the exact command that fixes it on its system.

Pure: the system is told from ``/etc/os-release``'s text (``ID``, ``ID_LIKE``) or
macOS, and each fix is a line of :data:`FIXES`. The realtime and group checks take
what they read as arguments, so a table of machines tests them without one.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass

#: The systems scorch knows the commands of; ``other`` gets a sentence instead.
FAMILIES = ("debian", "fedora", "arch", "macos", "other")

#: ``ID`` or ``ID_LIKE`` words that say which family a Linux belongs to, in order.
_LIKE = (("debian", ("debian", "ubuntu", "raspbian", "linuxmint", "pop")),
         ("fedora", ("fedora", "rhel", "centos", "rocky", "almalinux", "nobara")),
         ("arch", ("arch", "manjaro", "endeavouros", "cachyos")))

_DEB_RT = ("echo 'jackd2 jackd/tweak_rt_limits boolean true' | sudo debconf-set-selections"
           " && sudo dpkg-reconfigure -f noninteractive jackd2")
_LIMITS = ("printf '@audio - rtprio 95\\n@audio - memlock unlimited\\n' | "
           "sudo tee /etc/security/limits.d/95-scorch-audio.conf")

#: The fix for each missing thing, per family (``other`` has a sentence, not a command).
FIXES: Mapping[str, Mapping[str, str]] = {
    "supercollider": {
        "debian": "sudo apt-get install -y supercollider-server supercollider-language",
        "fedora": "sudo dnf install -y supercollider",
        "arch": "sudo pacman -S --needed supercollider",
        "macos": "brew install --cask supercollider && export PATH=\"/Applications/"
                 "SuperCollider.app/Contents/MacOS:/Applications/SuperCollider.app/Contents/"
                 "Resources:$PATH\"",
        "other": "install SuperCollider 3.13 (scsynth and sclang) with your package manager",
    },
    "jack": {
        "debian": "sudo apt-get install -y jackd2",
        "fedora": "sudo dnf install -y jack-audio-connection-kit "
                  "jack-audio-connection-kit-example-clients",
        "arch": "sudo pacman -S --needed jack2 jack-example-tools",
        "macos": "brew install jack",
        "other": "install JACK 2 (jackd and jack_wait) with your package manager",
    },
    "pipewire-jack": {
        "debian": "sudo apt-get install -y pipewire-jack",
        "fedora": "sudo dnf install -y pipewire-jack-audio-connection-kit",
        "arch": "sudo pacman -S --needed pipewire-jack",
        "macos": "",
        "other": "install PipeWire's JACK server with your package manager",
    },
    "realtime": {
        "debian": _DEB_RT + "; then log out and in",
        "fedora": _LIMITS + "; then log out and in",
        "arch": "sudo pacman -S --needed realtime-privileges; then log out and in",
        "macos": "",
        "other": "allow your audio group realtime priority in /etc/security/limits.d/",
    },
    "realtime-container": {
        "other": "give the container the right to realtime scheduling: "
                 "docker run --cap-add=SYS_NICE --ulimit rtprio=95 (or the same in its "
                 "compose file or systemd unit)",
    },
    "group": {
        "debian": "sudo usermod -aG audio \"$USER\"; then log out and in",
        "fedora": "sudo usermod -aG audio \"$USER\"; then log out and in",
        "arch": "sudo usermod -aG realtime \"$USER\"; then log out and in",
        "macos": "",
        "other": "add yourself to the group your system gives realtime audio to",
    },
}

#: The group whose members get realtime limits, per family.
AUDIO_GROUP = {"debian": "audio", "fedora": "audio", "arch": "realtime"}

#: jackd asks for priority 10 by default; scsynth's threads run just under it.
MIN_RTPRIO = 10


def parse_os_release(text: str) -> dict[str, str]:
    """``KEY=value`` lines of an os-release file, shell quoting undone; others skipped."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if not sep or not key.isidentifier():
            continue
        try:
            words = shlex.split(value)
        except ValueError:
            continue
        out[key] = " ".join(words)
    return out


def family(os_release: str | None, system: str = "Linux") -> str:
    """The family a machine's commands come from: ``debian``, ``fedora``, ``arch``,
    ``macos`` or ``other`` (``os_release``: the file's text, None when there is none)."""
    if system == "Darwin":
        return "macos"
    fields = parse_os_release(os_release or "")
    words = [fields.get("ID", "").lower(), *fields.get("ID_LIKE", "").lower().split()]
    for word in words:  # ID first: an Ubuntu is Ubuntu before it is like Debian
        for name, ids in _LIKE:
            if word in ids:
                return name
    return "other"


def fix(what: str, system_family: str) -> str:
    """The command (or, for ``other``, the sentence) that gives this machine ``what``."""
    return FIXES[what].get(system_family) or FIXES[what]["other"]


def describe(system_family: str, os_release: str | None) -> str:
    """The system's name as a person knows it (``PRETTY_NAME``), and its family."""
    name = parse_os_release(os_release or "").get("PRETTY_NAME")
    return f"{name or system_family} (commands for {system_family})"


@dataclass(frozen=True)
class Limits:
    """What the realtime checks read: this user's limits and groups."""

    rtprio: int
    """The soft ``RLIMIT_RTPRIO`` (0: no realtime threads)."""
    uid: int
    groups: frozenset[str]
    """The names of the groups this process is in."""
    granted: bool | None = None
    """Whether a thread of this process could take realtime priority (None: not tried)."""


def realtime_ok(limits: Limits) -> bool:
    """True when jackd and scsynth can take realtime priority.

    What a thread was granted, where that was tried, outweighs the limits: root in
    a container without CAP_SYS_NICE is refused whatever its limits say.
    """
    if limits.granted is not None:
        return limits.granted
    return limits.uid == 0 or limits.rtprio >= MIN_RTPRIO


def group_ok(limits: Limits, system_family: str) -> bool:
    """True when the user is in the group realtime audio is given to (or is root)."""
    group = AUDIO_GROUP.get(system_family, "audio")
    return limits.uid == 0 or group in limits.groups
