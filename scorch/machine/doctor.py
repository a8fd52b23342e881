"""Check that this machine can run scorch, and say exactly how to fix what is missing.

The fixes are the commands of this machine's system (Debian/Ubuntu, Fedora, Arch or
macOS, told from /etc/os-release): SuperCollider, JACK or PipeWire's JACK, realtime
limits and the audio group (``scorch.primitives.system.setup_fixes``). ``scorch
doctor`` prints the report; the ``doctor`` tool gives Claude the same checks.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from scorch.config import Config
from scorch.primitives.system import (
    AUDIO_GROUP,
    FIXES,
    MIN_RTPRIO,
    Limits,
    choose,
    describe,
    family,
    fix,
    group_ok,
    realtime_granted,
    realtime_ok,
    sound_cards,
    udp_port_free,
)

OS_RELEASE = Path("/etc/os-release")


@dataclass(frozen=True)
class Check:
    """One line of the doctor's report."""

    name: str
    ok: bool
    detail: str
    fix: str = ""


@dataclass(frozen=True)
class Machine:
    """What the checks read of this machine (a test gives its own)."""

    system: str
    """``platform.system()``: ``Linux``, ``Darwin``..."""
    os_release: str | None
    """/etc/os-release's text, None without one."""
    limits: Limits | None
    """The realtime limits and groups (None off Linux)."""
    which: Callable[[str], str | None] = shutil.which

    @property
    def family(self) -> str:
        """The family whose commands fix this machine."""
        return family(self.os_release, self.system)


def this_machine() -> Machine:
    """This machine, as the checks read it."""
    system = platform.system()
    try:
        text: str | None = OS_RELEASE.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = None
    return Machine(system, text, _limits() if system == "Linux" else None)


def _limits() -> Limits:
    import grp
    import resource

    names = set()
    for gid in os.getgroups():
        try:
            names.add(grp.getgrgid(gid).gr_name)
        except KeyError:
            continue
    soft, _hard = resource.getrlimit(resource.RLIMIT_RTPRIO)
    rtprio = MIN_RTPRIO * 10 if soft == resource.RLIM_INFINITY else soft
    return Limits(rtprio=rtprio, uid=os.getuid(), groups=frozenset(names),
                  granted=realtime_granted(MIN_RTPRIO))


def _version(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"(could not run: {err})"
    text = (done.stdout or done.stderr).strip().splitlines()
    return text[0] if text else "(no version printed)"


def run_checks(config: Config | None = None, machine: Machine | None = None,
               running: bool = False) -> list[Check]:
    """Every check, in the order a person would fix them.

    ``running``: the installation runs (the ``doctor`` tool): its ports are its own
    and its audio driver was chosen already (``status`` says which).
    """
    machine = machine or this_machine()
    kind = machine.family
    checks = [Check("system", True, describe(kind, machine.os_release))]
    for binary, version_flag in (("scsynth", "-v"), ("sclang", "-v")):
        path = machine.which(binary)
        checks.append(Check(binary, False, "not found on PATH", fix("supercollider", kind))
                      if path is None else
                      Check(binary, True, f"{path}: {_version([path, version_flag])}"))
    checks.append(_jack_check(machine))
    if machine.limits is not None:
        checks += _realtime_checks(machine.limits, kind)
    checks.append(_midi_check())
    checks.append(clock_check(config is not None and bool(config.hosts)))
    if config is not None:
        checks.append(safety_check(config))
    if config is not None and not running:
        checks.append(_audio_check(config, machine))
        for name, inst in config.instances.items():
            if inst.port is None:
                continue
            free = udp_port_free(inst.port)
            checks.append(Check(f"port {inst.port}", free,
                                f"room {name!r}: " + ("free" if free else "in use"),
                                "" if free else f"choose another port in [instances.{name}]"))
    return checks


def safety_check(config: Config) -> Check:
    """Whether every room has its safety stage, or which config line switched it off."""
    off = [name for name, inst in config.instances.items()
           if not inst.safety.over(config.safety).enabled]
    if not off:
        ceilings = sorted({inst.safety.over(config.safety).ceiling_dbfs
                           for inst in config.instances.values()})
        return Check("safety", True, "every room has its safety stage (NaN and DC out, "
                     f"outputs under {' / '.join(f'{c:g}' for c in ceilings)} dBFS)")
    where = ("[safety] enabled = false" if not config.safety.enabled else
             ", ".join(f"[instances.{name}.safety] enabled = false" for name in off))
    return Check("safety", False, f"no safety stage in {', '.join(off)} ({where}): code "
                 "reaches the loudspeakers unguarded (NaN, DC, any level)",
                 f"remove {where} from {config.source or 'the config'}")


def _jack_check(machine: Machine) -> Check:
    """jackd and jack_wait (scorch starts its own server, and waits for one)."""
    kind = machine.family
    missing = [tool for tool in ("jackd", "jack_wait") if machine.which(tool) is None]
    if not missing:
        path = machine.which("jackd") or "jackd"
        return Check("jack", True, f"{path}: {_version([path, '--version'])}")
    pipewire = machine.which("pw-jack") is not None
    detail = f"{' and '.join(missing)} not found on PATH"
    remedy = fix("jack", kind)
    if pipewire:
        detail += "; PipeWire's JACK is here (pw-jack): a room can join it"
    elif FIXES["pipewire-jack"].get(kind):
        remedy += f" (or PipeWire's JACK: {FIXES['pipewire-jack'][kind]})"
    return Check("jack", False, detail, remedy)


def _realtime_checks(limits: Limits, kind: str) -> list[Check]:
    """Realtime priority for jackd and scsynth, and the group that grants it."""
    group = AUDIO_GROUP.get(kind, "audio")
    rt_ok = realtime_ok(limits)
    refused = limits.granted is False and (limits.uid == 0 or limits.rtprio >= MIN_RTPRIO)
    if refused:  # the limits allow it, the kernel does not: a container, a cgroup
        detail = ("realtime scheduling refused although the limits allow it (a container "
                  "without CAP_SYS_NICE?): under load JACK clients miss cycles and lose "
                  "audio and MIDI")
    else:
        detail = ("root" if limits.uid == 0 else f"realtime priority limit {limits.rtprio}") + (
            "" if rt_ok else f" (jackd needs {MIN_RTPRIO}: without it, audio drops out under "
                             "load)")
    remedy = "" if rt_ok else fix("realtime-container" if refused else "realtime", kind)
    rt = Check("realtime", rt_ok, detail, remedy)
    in_group = group_ok(limits, kind)
    member = Check("group", in_group,
                   "root" if limits.uid == 0 else
                   f"{'in' if in_group else 'not in'} the {group!r} group",
                   "" if in_group else fix("group", kind))
    return [rt, member]


def _midi_check() -> Check:
    from midi.io import offered

    try:
        apis = offered("rtmidi")
    except ImportError as err:
        return Check("midi", False, f"python-rtmidi missing: {err}", "make run (reinstalls .venv)")
    seq = Path("/dev/snd/seq").exists()
    detail = f"rtmidi APIs: {', '.join(apis)}"
    if platform.system() == "Linux":
        detail += "; ALSA sequencer " + ("present" if seq else "absent (JACK MIDI still works)")
    return Check("midi", bool(apis), detail)


def _audio_check(config: Config, machine: Machine) -> Check:
    """Which driver the installation would run with now, as ``scorch run`` would choose it."""
    audio = config.audio
    if machine.which("jack_wait") is None:
        return Check("audio", False, "jack_wait not found (it comes with JACK)",
                     fix("jack", machine.family))
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
