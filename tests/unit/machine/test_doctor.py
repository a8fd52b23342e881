"""`scorch doctor` on machines it is told of: each missing thing with its system's fix."""

from __future__ import annotations

from scorch.machine.doctor import Machine, report, run_checks
from scorch.primitives.system.setup_fixes import Limits, fix

FEDORA = 'NAME="Fedora Linux"\nID=fedora\nPRETTY_NAME="Fedora Linux 40"\n'
ARCH = 'NAME="Arch Linux"\nID=arch\n'

def test_a_bare_fedora_is_told_every_dnf_command_it_needs() -> None:
    machine = Machine("Linux", FEDORA, Limits(rtprio=0, uid=1000, groups=frozenset()),
                      which=lambda name: None)
    checks = {c.name: c for c in run_checks(None, machine)}
    assert checks["system"].detail == "Fedora Linux 40 (commands for fedora)"
    assert checks["scsynth"].fix == checks["sclang"].fix == fix("supercollider", "fedora")
    assert not checks["jack"].ok
    assert checks["jack"].fix == (fix("jack", "fedora") + " (or PipeWire's JACK: "
                                  + fix("pipewire-jack", "fedora") + ")")
    assert "jackd and jack_wait not found" in checks["jack"].detail
    assert not checks["realtime"].ok and checks["realtime"].fix == fix("realtime", "fedora")
    assert not checks["group"].ok and "'audio' group" in checks["group"].detail
    text = report(list(checks.values()))
    assert "[FAIL] scsynth" in text and "fix: sudo dnf install -y supercollider" in text

def test_pipewires_jack_is_named_when_it_is_there_and_arch_wants_the_realtime_group() -> None:
    found = {"pw-jack", "scsynth", "sclang"}
    machine = Machine("Linux", ARCH, Limits(rtprio=95, uid=1000, groups=frozenset({"audio"})),
                      which=lambda name: f"/usr/bin/{name}" if name in found else None)
    checks = {c.name: c for c in run_checks(None, machine)}
    assert "PipeWire's JACK is here" in checks["jack"].detail
    assert checks["jack"].fix == fix("jack", "arch")
    assert checks["realtime"].ok
    assert not checks["group"].ok and checks["group"].fix == fix("group", "arch")

def test_root_refused_realtime_is_told_the_container_needs_the_right() -> None:
    machine = Machine("Linux", FEDORA, Limits(rtprio=0, uid=0, groups=frozenset(),
                                              granted=False), which=lambda name: None)
    checks = {c.name: c for c in run_checks(None, machine)}
    assert not checks["realtime"].ok
    assert "refused although the limits allow it" in checks["realtime"].detail
    assert checks["realtime"].fix == fix("realtime-container", "fedora")
    assert "--cap-add=SYS_NICE" in checks["realtime"].fix

def test_macos_has_no_linux_checks() -> None:
    machine = Machine("Darwin", None, None, which=lambda name: None)
    checks = {c.name: c for c in run_checks(None, machine)}
    assert "realtime" not in checks and "group" not in checks
    assert checks["jack"].fix == "brew install jack"
