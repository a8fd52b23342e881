"""Check that this machine can run scorch, and say exactly how to fix what is missing."""

from __future__ import annotations

import platform
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from scorch.config import Config
from scorch.primitives.audio_driver import choose, sound_cards
from scorch.primitives.netports import udp_port_free

APT = ("sudo apt-get install -y --no-install-recommends "
       "supercollider-server supercollider-language jackd2")
BREW = "brew install --cask supercollider && brew install jack"


@dataclass(frozen=True)
class Check:
    """One line of the doctor's report."""

    name: str
    ok: bool
    detail: str
    fix: str = ""


def install_hint() -> str:
    """The install command for this platform."""
    if platform.system() == "Darwin":
        return BREW
    if Path("/etc/debian_version").exists() or shutil.which("apt-get"):
        return APT
    return "install SuperCollider 3.13 (scsynth, sclang) and JACK 2 with your package manager"


def _version(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"(could not run: {err})"
    text = (done.stdout or done.stderr).strip().splitlines()
    return text[0] if text else "(no version printed)"


def run_checks(config: Config | None = None) -> list[Check]:
    """Every check, in the order a person would fix them."""
    checks: list[Check] = []
    hint = install_hint()
    for binary, version_flag in (("scsynth", "-v"), ("sclang", "-v"), ("jackd", "--version")):
        path = shutil.which(binary)
        if path is None:
            checks.append(Check(binary, False, "not found on PATH", hint))
        else:
            checks.append(Check(binary, True, f"{path}: {_version([path, version_flag])}"))
    checks.append(_midi_check())
    if config is not None:
        checks.append(_audio_check(config))
        for name, inst in config.instances.items():
            if inst.port is None:
                continue
            free = udp_port_free(inst.port)
            checks.append(Check(f"port {inst.port}", free,
                                f"instance {name!r}: " + ("free" if free else "in use"),
                                "" if free else f"choose another port in [instances.{name}]"))
    return checks


def _midi_check() -> Check:
    try:
        import rtmidi
    except ImportError as err:
        return Check("midi", False, f"python-rtmidi missing: {err}", "make run (reinstalls .venv)")
    apis = [rtmidi.get_api_name(api) for api in rtmidi.get_compiled_api()]
    seq = Path("/dev/snd/seq").exists()
    detail = f"rtmidi APIs: {', '.join(apis)}"
    if platform.system() == "Linux":
        detail += "; ALSA sequencer " + ("present" if seq else "absent (JACK MIDI still works)")
    return Check("midi", bool(apis), detail)


def _audio_check(config: Config) -> Check:
    """Which driver the installation would run with now, as ``scorch run`` would choose it."""
    audio = config.audio
    if shutil.which("jack_wait") is None:
        return Check("audio", False, "jack_wait not found (it comes with JACK)", install_hint())
    choice = choose(audio.driver, audio.jack_server, audio.device)
    cards = ", ".join(f"{c.device} {c.id}" for c in sound_cards()) or "none"
    detail = f"{choice.describe()}; sound cards: {cards}"
    if choice.driver == "dummy":
        detail += "; the rooms play, but no sound comes out of this machine"
    return Check("audio", True, detail)


def report(checks: list[Check]) -> str:
    """Render the checks for the terminal."""
    lines = []
    for check in checks:
        mark = "ok  " if check.ok else "FAIL"
        lines.append(f"[{mark}] {check.name}: {check.detail}")
        if check.fix:
            lines.append(f"       fix: {check.fix}")
    return "\n".join(lines)
