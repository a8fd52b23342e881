"""Check that this machine can run scorch, and say exactly how to fix what is missing."""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from scorch.config.installation import Config
from scorch.primitives.system.audio_driver import choose, sound_cards
from scorch.primitives.system.ports import udp_port_free

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
    checks.append(clock_check(config is not None and bool(config.hosts)))
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
    choice = choose(audio.driver, config.jack_server(), audio.device)
    cards = ", ".join(f"{c.device} {c.id}" for c in sound_cards()) or "none"
    detail = f"{choice.describe()}; sound cards: {cards}"
    if choice.driver == "dummy":
        detail += "; the rooms play, but no sound comes out of this machine"
    return Check("audio", True, detail)


#: Clocks of hosts whose rooms play together should agree within this (a 64-frame block at
#: 48 kHz is 1.3 ms): chrony on a LAN keeps them within a few tens of microseconds.
CLOCK_LIMIT = 0.001
CHRONY_FIX = ("sudo apt-get install -y chrony; then see docs/hosts.md (\"Clocks\") to make one "
              "host the others' server")
_SYSTEM_TIME = re.compile(r"^System time\s*:\s*([0-9.eE+-]+) seconds (fast|slow) of NTP time",
                          re.MULTILINE)
_LEAP = re.compile(r"^Leap status\s*:\s*(.+?)\s*$", re.MULTILINE)
_REFERENCE = re.compile(r"^Reference ID\s*:\s*(.+?)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Tracking:
    """What ``chronyc tracking`` says of this machine's clock."""

    offset: float
    """Seconds this clock is ahead of NTP time (negative: behind)."""
    leap: str
    """``Normal``, or ``Not synchronised`` while chrony has no source."""
    reference: str


def parse_tracking(text: str) -> Tracking | None:
    """``chronyc tracking``'s report, or None when it is not one."""
    found, leap = _SYSTEM_TIME.search(text), _LEAP.search(text)
    if found is None or leap is None:
        return None
    offset = float(found.group(1)) * (1 if found.group(2) == "fast" else -1)
    reference = _REFERENCE.search(text)
    return Tracking(offset, leap.group(1), reference.group(1) if reference else "?")


def clock_check(several_hosts: bool, chronyc: str | None = None) -> Check:
    """This clock's offset from NTP time as chrony sees it, or how to get chrony.

    Only an installation across several hosts needs it: there a missing or
    unsynchronised chrony fails the check; on one host it is only said.
    """
    chronyc = chronyc or shutil.which("chronyc")
    if chronyc is None:
        return Check("clock", not several_hosts, "chronyc not found: this clock's offset is "
                     "not known" + (" (rooms on several hosts start together only if their "
                                    "clocks agree)" if several_hosts else ""),
                     CHRONY_FIX if several_hosts else "")
    try:
        done = subprocess.run([chronyc, "-n", "tracking"], capture_output=True, text=True,
                              timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return Check("clock", not several_hosts, f"chronyc tracking failed: {err}", CHRONY_FIX)
    tracking = parse_tracking(done.stdout)
    if tracking is None:
        said = (done.stderr or done.stdout).strip().splitlines()
        return Check("clock", not several_hosts,
                     f"chronyc tracking: {said[0] if said else 'no answer'}",
                     "start chrony: sudo systemctl enable --now chrony")
    synced = tracking.leap != "Not synchronised"
    ok = synced and abs(tracking.offset) <= CLOCK_LIMIT
    detail = (f"offset {tracking.offset * 1000:+.3f} ms from NTP time (source "
              f"{tracking.reference}, leap status {tracking.leap})")
    fix = "" if ok else ("chrony has no source yet: `chronyc sources` shows why" if not synced
                         else f"more than {CLOCK_LIMIT * 1000:g} ms: wait for chrony to "
                         "converge, or give it a nearer server (docs/hosts.md)")
    return Check("clock", ok or not several_hosts, detail, fix)


def report(checks: list[Check]) -> str:
    """Render the checks for the terminal."""
    lines = []
    for check in checks:
        mark = "ok  " if check.ok else "FAIL"
        lines.append(f"[{mark}] {check.name}: {check.detail}")
        if check.fix:
            lines.append(f"       fix: {check.fix}")
    return "\n".join(lines)
