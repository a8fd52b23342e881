"""The skip rule: a missing tool skips here and fails on CI; another platform skips everywhere."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

CASES = textwrap.dedent("""
    from tests.support import skips

    @skips.needs(False, "a tool nobody has")
    def test_marked():
        pass

    def test_imperative():
        skips.missing("another tool")

    def test_module():
        skips.module("scorch_no_such_module", "a package")

    @skips.only_on(False, "another operating system")
    def test_platform():
        pass

    def test_elsewhere():
        skips.elsewhere("a sound card is here")

    @skips.needs(True, "a tool this machine has")
    def test_present():
        pass
    """)


def outcomes(tmp_path: Path, ci: str | None) -> dict[str, tuple[str, str]]:
    """Each case's outcome (passed, skipped, failed, error) and message, run with ``$CI``."""
    (tmp_path / "test_cases.py").write_text(CASES)
    report = tmp_path / f"report-{ci}.xml"
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    env["PYTHONPATH"] = str(ROOT)
    subprocess.run([sys.executable, "-m", "pytest", "-c", os.devnull, "--rootdir", str(tmp_path),
                    "-p", "tests.support.skips", "-p", "no:cacheprovider", "-q",
                    f"--junitxml={report}", str(tmp_path / "test_cases.py")],
                   cwd=tmp_path, env=env, capture_output=True, timeout=120, check=False)
    found: dict[str, tuple[str, str]] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        kinds = [(child.tag, child.get("message", "")) for child in case
                 if child.tag in ("skipped", "failure", "error")]
        found[case.get("name", "")] = kinds[0] if kinds else ("passed", "")
    return found


@pytest.mark.parametrize("ci", [None, "false"])
def test_off_ci_a_missing_tool_skips_saying_what_is_missing(tmp_path: Path,
                                                            ci: str | None) -> None:
    seen = outcomes(tmp_path, ci)
    for name, what in (("test_marked", "a tool nobody has"), ("test_imperative", "another tool"),
                       ("test_module", "a package")):
        kind, message = seen[name]
        assert kind == "skipped" and message.startswith("missing here: ") and what in message
    assert seen["test_platform"] == ("skipped", "not for this machine: another operating system")
    assert seen["test_elsewhere"] == ("skipped", "not for this machine: a sound card is here")
    assert seen["test_present"] == ("passed", "")


@pytest.mark.parametrize("ci", ["true"])
def test_on_ci_a_missing_tool_fails_and_another_platform_still_skips(tmp_path: Path,
                                                                     ci: str) -> None:
    seen = outcomes(tmp_path, ci)
    assert seen["test_marked"][0] == "error"  # refused at setup, before the test ran
    assert "a tool nobody has: on CI every tool the tests need is installed" in (
        seen["test_marked"][1])
    for name in ("test_imperative", "test_module"):
        kind, message = seen[name]
        assert kind == "failure" and "this is a failure, not a skip" in message, name
    assert seen["test_platform"][0] == "skipped"
    assert seen["test_elsewhere"][0] == "skipped"
    assert seen["test_present"] == ("passed", "")


def test_no_test_module_skips_but_through_the_helper() -> None:
    """What the repository's hook refuses outside tests/support, refused here too."""
    skip = "skip"  # the words whole would be found in this file
    words = (f"pytest.{skip}(", f"importor{skip}(", f"mark.{skip}if", f"pytest.mark.{skip}(")
    found = [f"{path.relative_to(ROOT)}: {word}"
             for path in sorted((ROOT / "tests").rglob("*.py"))
             if "support" not in path.relative_to(ROOT / "tests").parts[:1]
             for word in words if word in path.read_text()]
    assert found == []
