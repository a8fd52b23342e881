"""What ``[audio] driver = "auto"`` means on this machine: a JACK server, a sound card, or none.

In order:

1. **Join a running JACK server**: the one any JACK program of this user would
   join, named by ``JACK_DEFAULT_SERVER`` or else ``default`` (PipeWire's JACK
   answers under that name too). One ``jack_wait -c`` probe tells.
2. **Start jackd on the first ALSA sound card** with a playback device
   (``/proc/asound``), as scorch's private server ``jack_server``.
3. **The headless dummy driver** on the private server: no sound card needed.

The other drivers are taken as they are. The choice is made once, when the
installation starts, and said in the log, in ``status`` and by ``scorch doctor``.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from scorch.primitives.system.jackd import jack_env
from scorch.primitives.system.process import child_env

#: The environment variable that names a user's JACK server, and the name without it.
SERVER_ENV = "JACK_DEFAULT_SERVER"
DEFAULT_SERVER = "default"
ASOUND = Path("/proc/asound")

_CARD_LINE = re.compile(r"^\s*(\d+)\s+\[(\S+)\s*\]:\s*(.*)$")


@dataclass(frozen=True)
class SoundCard:
    """One ALSA card that can play sound."""

    index: int
    id: str
    """ALSA's short id, such as ``PCH``."""
    name: str
    """The description ``/proc/asound/cards`` gives."""

    @property
    def device(self) -> str:
        """The device jackd's ALSA driver opens."""
        return f"hw:{self.index}"


@dataclass(frozen=True)
class AudioChoice:
    """The driver the installation runs with, and why."""

    asked: str
    """What the config says: ``auto``, ``jack``, ``alsa`` or ``dummy``."""
    driver: str
    """What runs: ``jack`` (an existing server), ``alsa`` or ``dummy`` (a private jackd)."""
    server: str
    """The JACK server every room joins."""
    device: str | None
    """The ALSA device, for ``alsa``."""
    reason: str
    """Why, in a few words."""

    @property
    def owns_server(self) -> bool:
        """True when scorch starts this JACK server itself."""
        return self.driver in ("alsa", "dummy")

    def describe(self) -> str:
        """One line for the log, ``status`` and ``scorch doctor``."""
        what = {"jack": f"joins the running JACK server {self.server!r}",
                "alsa": f"starts jackd {self.server!r} on the sound card {self.device}",
                "dummy": f"starts a headless jackd {self.server!r} with the dummy driver"
                }[self.driver]
        return f"driver {self.asked!r}: {what} ({self.reason})"

    def without_card(self, why: str) -> AudioChoice:
        """The dummy driver instead of a sound card that could not be opened."""
        return replace(self, driver="dummy", device=None,
                       reason=f"{self.reason}, but jackd could not open it ({why})")


def user_server(environ: Mapping[str, str] | None = None) -> str:
    """The JACK server a program of this user joins: ``$JACK_DEFAULT_SERVER``, else ``default``."""
    env = os.environ if environ is None else environ
    return env.get(SERVER_ENV) or DEFAULT_SERVER


def server_running(server: str) -> bool:
    """True if a JACK server named ``server`` accepts clients now (one ``jack_wait`` probe)."""
    try:
        done = subprocess.run(["jack_wait", "-s", server, "-c"], env=child_env(jack_env(server)),
                              capture_output=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.stdout.strip() == b"running"


def sound_cards(asound: Path = ASOUND) -> list[SoundCard]:
    """The ALSA cards with a playback device, in ALSA's order (none without ``/proc/asound``)."""
    try:
        text = (asound / "cards").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    cards = []
    for line in text.splitlines():
        match = _CARD_LINE.match(line)
        if match is None:
            continue
        index = int(match.group(1))
        if any((asound / f"card{index}").glob("pcm*p")):
            cards.append(SoundCard(index, match.group(2), match.group(3).strip()))
    return cards


def choose(asked: str, private_server: str, device: str | None = None, *,
           environ: Mapping[str, str] | None = None, asound: Path = ASOUND,
           running: Callable[[str], bool] = server_running) -> AudioChoice:
    """Resolve the config's driver to the one that runs (see the module's docstring)."""
    if asked == "jack":
        return AudioChoice(asked, "jack", private_server, None, "as configured")
    if asked == "alsa":
        return AudioChoice(asked, "alsa", private_server, device, "as configured")
    if asked == "dummy":
        return AudioChoice(asked, "dummy", private_server, None, "as configured")
    env = os.environ if environ is None else environ
    joined = user_server(env)
    if running(joined):
        how = f"${SERVER_ENV}" if env.get(SERVER_ENV) else "the default name"
        return AudioChoice(asked, "jack", joined, None, f"a JACK server runs under {how}")
    not_running = f"no JACK server {joined!r} runs"
    if device:
        return AudioChoice(asked, "alsa", private_server, device,
                           f"{not_running}; the configured device")
    cards = sound_cards(asound)
    if cards:
        card = cards[0]
        return AudioChoice(asked, "alsa", private_server, card.device,
                           f"{not_running}; first sound card: {card.id} ({card.name})")
    return AudioChoice(asked, "dummy", private_server, None, f"{not_running} and no sound card")
