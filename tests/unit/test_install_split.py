"""`make run` installs what running needs; the test tools come with `make test` alone."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.support.skips import needs

ROOT = Path(__file__).resolve().parents[2]
#: Packages only the tests (or the bundle) need.
TEST_ONLY = ("openssh-server", "openssh-client", "nftables", "chromium", "nodejs", "npm")


def recipes(target: str) -> str:
    """What ``make TARGET`` would run, every prerequisite remade (nothing runs: ``-n``)."""
    done = subprocess.run(["make", "-n", "-B", target], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=True)
    return done.stdout


pytestmark = needs(shutil.which("make") is not None, "make")


def test_make_run_installs_supercollider_jack_and_a_compiler_and_no_test_tool() -> None:
    run = recipes("run")
    for package in ("supercollider-server", "supercollider-language", "jackd2", "gcc"):
        assert package in run, package
    for package in TEST_ONLY:
        assert f" {package}" not in run, package
    assert "policy-rc.d" not in run


def test_make_test_installs_the_test_tools_with_no_service_started() -> None:
    test = recipes("test")
    for package in TEST_ONLY:
        assert f" {package}" in test, package
    # openssh-server goes in under a policy that refuses starts, and its service is disabled.
    install = test.index("apt-get install -y --no-install-recommends openssh-server")
    assert test.index("exit 101") < install < test.index("update-rc.d ssh disable")
    assert "systemctl --root=/ --quiet disable ssh.service ssh.socket" in test


def test_make_bundle_brings_node_but_no_ssh_server_nor_browser() -> None:
    bundle = recipes("bundle")
    assert " nodejs npm" in bundle
    for package in ("openssh-server", "chromium", "nftables"):
        assert package not in bundle, package
