"""Hostile input for pattern, undo and the dry runs, through a real MCP client to a room.

The room of tests/support/tool_fuzz.py, with its playing Pdef: every case of its
``NAMED`` list must end in a clear error (a code other than INTERNAL, no traceback)
whose structured content names the argument at fault, and the room plays on.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.state.events import Kind
from tests.conftest import jack_name
from tests.support.tool_fuzz import NAMED, Target, fuzz_target

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory,
           library: SynthDefLibrary) -> Iterator[Target]:
    with fuzz_target(tmp_path_factory.mktemp("pattern-edges"), jack_name("pattern-edges"),
                     library) as t:
        yield t


def test_every_hostile_argument_is_refused_by_its_name_and_the_pattern_plays_on(
        target: Target) -> None:
    since = target.orchestra.views["room"].events.mark()
    wrong: list[str] = []
    for tool, args, argument in NAMED:
        is_error, text, shown = target.ask(tool, args)
        said: dict[str, Any] = shown or {}
        if (not is_error or said.get("argument") != argument or said.get("code") == "INTERNAL"
                or "Traceback" in text or "internal error" in text.lower()):
            wrong.append(f"{tool} {str(args)[:120]}: {is_error} {said.get('code')} "
                         f"{said.get('argument')!r} {text[:200]!r}")
    assert not wrong, "\n".join(wrong)
    orch = target.orchestra
    assert orch.rooms.status("room").state == "READY"
    # no code that broke out of its argument ran (0.exit would have restarted sclang)
    assert not [e for e in orch.rooms.events("room", since)
                if e.kind in (Kind.CRASHED, Kind.RESTARTING, Kind.SCLANG_RESTARTED)]
    tick = orch.views["room"].patterns["Pdef tick"]
    assert tick.playing and "'dur', 0.5" in tick.text, tick
    assert "Pdef fresh" not in orch.views["room"].patterns, "a refused define left a pattern"
