"""Which system a machine is, from its /etc/os-release, and the commands that fix it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorch.primitives.system.setup_fixes import (
    FAMILIES,
    FIXES,
    Limits,
    describe,
    family,
    fix,
    group_ok,
    parse_os_release,
    realtime_ok,
)

DEBIAN = '''PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
ID=debian
HOME_URL="https://www.debian.org/"
'''
UBUNTU = '''PRETTY_NAME="Ubuntu 24.04.1 LTS"
NAME="Ubuntu"
ID=ubuntu
ID_LIKE=debian
UBUNTU_CODENAME=noble
'''
MINT = 'NAME="Linux Mint"\nID=linuxmint\nID_LIKE="ubuntu debian"\n'
POP = "NAME=\"Pop!_OS\"\nID=pop\nID_LIKE=\"ubuntu debian\"\n"
FEDORA = '''NAME="Fedora Linux"
VERSION="40 (Workstation Edition)"
ID=fedora
VERSION_ID=40
PRETTY_NAME="Fedora Linux 40 (Workstation Edition)"
'''
RHEL = 'NAME="Red Hat Enterprise Linux"\nID="rhel"\nID_LIKE="fedora"\n'
ROCKY = 'NAME="Rocky Linux"\nID="rocky"\nID_LIKE="rhel centos fedora"\n'
ARCH = 'NAME="Arch Linux"\nPRETTY_NAME="Arch Linux"\nID=arch\nBUILD_ID=rolling\n'
MANJARO = 'NAME="Manjaro Linux"\nID=manjaro\nID_LIKE=arch\n'
ENDEAVOUR = "NAME='EndeavourOS'\nID='endeavouros'\nID_LIKE='arch'\n"
SUSE = 'NAME="openSUSE Tumbleweed"\nID="opensuse-tumbleweed"\nID_LIKE="opensuse suse"\n'
ALPINE = "NAME=\"Alpine Linux\"\nID=alpine\n"
# Comments, blank lines, an unclosed quote and a line without '=' are skipped.
NOISY = '# made by hand\n\nID="ubuntu\nBROKEN LINE\nID_LIKE=debian\n  \n'


@pytest.mark.parametrize(("text", "system", "expected"), [
    (DEBIAN, "Linux", "debian"), (UBUNTU, "Linux", "debian"), (MINT, "Linux", "debian"),
    (POP, "Linux", "debian"), (FEDORA, "Linux", "fedora"), (RHEL, "Linux", "fedora"),
    (ROCKY, "Linux", "fedora"), (ARCH, "Linux", "arch"), (MANJARO, "Linux", "arch"),
    (ENDEAVOUR, "Linux", "arch"), (SUSE, "Linux", "other"), (ALPINE, "Linux", "other"),
    (NOISY, "Linux", "debian"), ("", "Linux", "other"), (None, "Linux", "other"),
    (None, "Darwin", "macos"), (DEBIAN, "Darwin", "macos"),
])
def test_the_family_comes_from_id_then_id_like(
        text: str | None, system: str, expected: str) -> None:
    assert family(text, system) == expected


def test_quoting_is_undone_and_the_pretty_name_describes_the_system() -> None:
    assert parse_os_release(ENDEAVOUR)["ID"] == "endeavouros"
    assert parse_os_release(MINT)["ID_LIKE"] == "ubuntu debian"
    assert describe("fedora", FEDORA) \
        == "Fedora Linux 40 (Workstation Edition) (commands for fedora)"
    assert describe("other", None) == "other (commands for other)"


@pytest.mark.parametrize(("what", "kind", "expected"), [
    ("supercollider", "debian",
     "sudo apt-get install -y supercollider-server supercollider-language"),
    ("supercollider", "fedora", "sudo dnf install -y supercollider"),
    ("supercollider", "arch", "sudo pacman -S --needed supercollider"),
    ("jack", "debian", "sudo apt-get install -y jackd2"),
    ("jack", "macos", "brew install jack"),
    ("pipewire-jack", "arch", "sudo pacman -S --needed pipewire-jack"),
    ("group", "arch", 'sudo usermod -aG realtime "$USER"; then log out and in'),
    ("group", "debian", 'sudo usermod -aG audio "$USER"; then log out and in'),
])
def test_each_fix_is_the_systems_own_command(what: str, kind: str, expected: str) -> None:
    assert fix(what, kind) == expected


def test_every_thing_has_a_fix_on_every_family() -> None:
    for what in FIXES:
        for kind in FAMILIES:
            assert fix(what, kind), (what, kind)
    assert fix("supercollider", "macos").startswith("brew install --cask supercollider")
    assert "debconf-set-selections" in fix("realtime", "debian")


@pytest.mark.parametrize(("limits", "kind", "rt", "group"), [
    (Limits(rtprio=0, uid=1000, groups=frozenset()), "debian", False, False),
    (Limits(rtprio=95, uid=1000, groups=frozenset({"audio"})), "debian", True, True),
    (Limits(rtprio=9, uid=1000, groups=frozenset({"audio"})), "fedora", False, True),
    (Limits(rtprio=95, uid=1000, groups=frozenset({"audio"})), "arch", True, False),
    (Limits(rtprio=95, uid=1000, groups=frozenset({"realtime"})), "arch", True, True),
    (Limits(rtprio=0, uid=0, groups=frozenset()), "debian", True, True),
    # root in a container without CAP_SYS_NICE: the kernel's refusal is what counts
    (Limits(rtprio=0, uid=0, groups=frozenset(), granted=False), "debian", False, True),
    (Limits(rtprio=0, uid=1000, groups=frozenset(), granted=True), "debian", True, False),
])
def test_realtime_and_group_checks(limits: Limits, kind: str, rt: bool, group: bool) -> None:
    assert (realtime_ok(limits), group_ok(limits, kind)) == (rt, group)


@given(st.text(max_size=400), st.sampled_from(["Linux", "Darwin", "Windows", ""]))
def test_any_text_gives_a_known_family(text: str, system: str) -> None:
    assert family(text, system) in FAMILIES
