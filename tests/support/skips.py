"""The one way a test is skipped: a missing tool fails on CI, another platform stays a skip.

Every skip in tests/ goes through here (a hook refuses ``pytest.skip(``,
``importorskip(`` and ``mark.skipif`` elsewhere). Two kinds:

- :func:`missing` and :func:`needs` (a mark): a tool, a package, a permission the
  tests need and ``make test`` installs or CI has (jackd, chromium, root for network
  namespaces). Here they skip, saying what to install; on CI (``$CI`` set, as CI
  services set it and ``.ci/run`` does) they fail: a missing tool there is a broken
  install step, never a reason to test less.
- :func:`elsewhere` and :func:`only_on` (a mark): the test does not apply here (another
  operating system, a machine with a sound card). They stay skips everywhere, with a
  reason that names no tool.

Registered as a plugin by ``tests/conftest.py`` (``pytest -p tests.support.skips`` for
a test file elsewhere): its :func:`pytest_runtest_setup` turns :func:`needs` marks into
:func:`missing` at setup, when ``$CI`` is read.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import NoReturn

import pytest

#: The mark :func:`needs` leaves on a test whose tool is missing.
MARK = "scorch_needs"
#: Values of ``$CI`` that mean "not on CI".
NOT_CI = frozenset({"", "0", "false", "no", "off"})


def on_ci() -> bool:
    """Whether this run is CI's (``$CI`` set to anything but empty, 0, false, no or off)."""
    return os.environ.get("CI", "").strip().lower() not in NOT_CI


def missing(why: str) -> NoReturn:
    """Skip: a tool (package, permission) the test needs is missing; on CI, fail instead."""
    if on_ci():
        pytest.fail(f"{why}: on CI every tool the tests need is installed (`make test`), so "
                    "this is a failure, not a skip", pytrace=False)
    pytest.skip(f"missing here: {why}")


def needs(present: bool, why: str) -> pytest.MarkDecorator:
    """A mark: the test runs when ``present``; else :func:`missing` (skip here, fail on CI)."""
    return pytest.mark.scorch_needs(why=None if present else why)


def module(name: str, why: str) -> ModuleType:
    """``name`` imported, or :func:`missing` (``why`` says what installs it)."""
    try:
        return importlib.import_module(name)
    except ImportError as err:
        missing(f"{why} ({err})")


def elsewhere(why: str) -> NoReturn:
    """Skip everywhere, CI included: the test does not apply to this machine (``why``)."""
    pytest.skip(f"not for this machine: {why}")


def only_on(applies: bool, why: str) -> pytest.MarkDecorator:
    """A mark: skip everywhere unless ``applies`` (another platform: ``why``, never a tool)."""
    return pytest.mark.skipif(not applies, reason=f"not for this machine: {why}")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARK}(why): a tool the test needs (tests/support/"
                            "skips.py): skipped where missing, failed on CI")


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers(MARK):
        why = mark.kwargs.get("why")
        if why is not None:
            missing(why)
