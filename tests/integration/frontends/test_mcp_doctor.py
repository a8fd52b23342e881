"""The ``doctor`` tool through a real ``mcp.Client``: what this machine lacks, and each fix.

The cheapest server that is still the real one: ``build_server`` over an
installation that was never started (the doctor reads the machine and the
config, not the rooms), on this machine as it is, and on a PATH that holds
neither SuperCollider nor JACK. Then ``scorch mcp`` itself on that PATH, where
the rooms cannot start: the moment a person needs the doctor most.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from mcp_server.server import build_server
from scorch.api.local import LocalService
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.machine.doctor import this_machine
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.primitives.system.setup_fixes import fix
from tests.conftest import jack_name
from tests.support.mcp.calls import call, text
from tests.support.mcp.stdio import one_room_config

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return one_room_config(tmp_path, jack_name("doctor"))


@pytest.fixture
def installation(config: Path, library: SynthDefLibrary) -> Iterator[Orchestra]:
    orch = Orchestra(parse_config(config.read_text(), config), library)
    yield orch
    orch.stop()


@pytest.fixture
async def client(installation: Orchestra) -> AsyncIterator[Client]:
    async with Client(build_server(LocalService(installation))) as session:
        yield session


def by_name(found: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The doctor's checks by name, once each; ``ok`` is true only when all are."""
    checks = {check["name"]: check for check in found["checks"]}
    assert len(checks) == len(found["checks"])
    assert found["ok"] is all(check["ok"] for check in checks.values())
    return checks


def without_fix(checks: dict[str, dict[str, Any]]) -> list[str]:
    """The checks that failed and say nothing of how to fix it."""
    return [name for name, check in checks.items() if not check["ok"] and not check["fix"]]


async def test_the_doctor_tool_checks_supercollider_and_jack_on_this_machine(
        client: Client) -> None:
    result = await client.call_tool("doctor", {})
    assert not result.is_error and result.structured_content is not None
    checks = by_name(result.structured_content)
    assert {"system", "scsynth", "sclang", "jack", "midi", "clock"} <= set(checks)
    assert without_fix(checks) == []
    for binary in ("scsynth", "sclang"):  # the suite runs where both are installed
        assert checks[binary]["ok"] and checks[binary]["detail"].startswith("/"), checks
    assert checks["jack"]["ok"], checks["jack"]
    report = text(result)
    for name, check in checks.items():
        assert f"] {name}: {check['detail']}" in report
        if not check["ok"]:
            assert f"fix: {check['fix']}" in report


async def test_without_supercollider_and_jack_the_tool_gives_this_systems_commands(
        client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # the doctor looks each binary up on PATH
    checks = by_name(await call(client, "doctor"))
    kind = this_machine().family
    assert [(checks[name]["ok"], checks[name]["fix"]) for name in ("scsynth", "sclang")] \
        == [(False, fix("supercollider", kind))] * 2
    assert not checks["jack"]["ok"] and checks["jack"]["fix"].startswith(fix("jack", kind))
    assert "jackd and jack_wait not found" in checks["jack"]["detail"]
    assert without_fix(checks) == []


async def test_scorch_mcp_that_cannot_start_its_rooms_still_answers_the_doctor(
        config: Path, tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    log = tmp_path / "mcp.log"
    params = StdioServerParameters(
        command="/bin/sh", args=["-c", 'exec "$0" -m scorch.cli.main mcp --config "$1" 2>>"$2"',
                                 sys.executable, str(config), str(log)],
        env={**os.environ, "PATH": str(empty)}, cwd=str(tmp_path))
    async with Client(params) as client:
        with anyio.fail_after(90):
            while "could not start" not in log.read_text():  # jackd is not on PATH
                await anyio.sleep(0.1)
        result = await client.call_tool("doctor", {})
        rooms = await client.call_tool("list_instances", {})
    assert rooms.is_error and "scorch could not start" in text(rooms)  # the rest say why
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    checks = by_name(result.structured_content)
    assert not checks["jack"]["ok"] and checks["jack"]["fix"]
