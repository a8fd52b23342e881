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

UBUNTU = ('PRETTY_NAME="Ubuntu 24.04.1 LTS"\nNAME="Ubuntu"\nVERSION_ID="24.04"\nID=ubuntu\n'
          'ID_LIKE=debian\n')

def test_a_bare_ubuntu_is_told_every_apt_get_command_it_needs() -> None:
    machine = Machine("Linux", UBUNTU, Limits(rtprio=0, uid=1000, groups=frozenset()),
                      which=lambda name: None)
    checks = {c.name: c for c in run_checks(None, machine)}
    assert checks["system"].detail == "Ubuntu 24.04.1 LTS (commands for debian)"
    apt = "sudo apt-get install -y"
    assert checks["scsynth"].fix == checks["sclang"].fix \
        == f"{apt} supercollider-server supercollider-language"
    assert checks["jack"].fix == f"{apt} jackd2 (or PipeWire's JACK: {apt} pipewire-jack)"
    assert not checks["realtime"].ok
    assert checks["realtime"].fix == (
        "echo 'jackd2 jackd/tweak_rt_limits boolean true' | sudo debconf-set-selections"
        " && sudo dpkg-reconfigure -f noninteractive jackd2; then log out and in")
    assert not checks["group"].ok and "'audio' group" in checks["group"].detail
    assert checks["group"].fix == 'sudo usermod -aG audio "$USER"; then log out and in'
    text = report(list(checks.values()))
    assert f"fix: {apt} supercollider-server supercollider-language" in text
    assert "dnf" not in text and "pacman" not in text and "brew" not in text

def test_a_plain_debian_gets_the_same_commands_as_ubuntu() -> None:
    debian = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n'
    bare = Limits(rtprio=0, uid=1000, groups=frozenset())
    fixes = [{c.name: c.fix for c in run_checks(None, Machine("Linux", text, bare,
                                                               which=lambda name: None))}
             for text in (debian, UBUNTU)]
    assert fixes[0] == fixes[1] and fixes[0]["jack"].startswith("sudo apt-get install -y jackd2")


def test_a_room_without_its_safety_stage_is_pointed_out_with_its_config_line() -> None:
    from scorch.config.installation import parse_config
    from scorch.machine.doctor import safety_check

    guarded = safety_check(parse_config("[instances.a]\n[instances.b.safety]\nceiling_dbfs = -3\n"))
    assert guarded.ok and "-3 / -1 dBFS" in guarded.detail
    one = safety_check(parse_config("[instances.a]\n[instances.b.safety]\nenabled = false\n"))
    assert not one.ok and "no safety stage in b" in one.detail
    assert "[instances.b.safety] enabled = false" in one.fix
    every = safety_check(parse_config("[safety]\nenabled = false\n[instances.a]\n"))
    assert not every.ok and every.fix.startswith("remove [safety] enabled = false")
