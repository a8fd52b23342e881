"""The knowledge component while scorch starts: what answers at once, what waits for the rooms."""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path

import pytest

from scorch.app.knowledge import Knowledge
from scorch.config.installation import parse_config
from scorch.errors import Booting
from scorch.knowledge.docs_index import INDEX_SCHEMA, DocsIndex


class Rooms:
    """Stands for the tree's wait: says BOOTING as a start whose rooms are not up would."""

    def __init__(self) -> None:
        self.asked: list[tuple[list[str] | None, str]] = []

    def await_ready(self, names: Iterable[str] | None, deadline: float, what: str) -> None:
        self.asked.append((None if names is None else list(names), what))
        raise Booting(f"instance 'a' is BOOTING (starting scsynth): {what} waited 0.0 s")


@pytest.mark.parametrize("build", ["background", "on-demand"])
def test_a_cached_index_and_the_history_answer_at_once_while_the_rooms_boot(
        tmp_path: Path, build: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the shared index's home
    config = parse_config(f'state_dir = "{tmp_path / "state"}"\n[docs]\nbuild = "{build}"\n'
                          "[instances.a]\n", tmp_path / "config.toml")
    rooms = Rooms()
    knowledge = Knowledge(config, ready=rooms.await_ready)
    knowledge.docs_path.parent.mkdir(parents=True, exist_ok=True)
    cached = DocsIndex(knowledge.docs_path)
    cached.set_meta({"schema": INDEX_SCHEMA, "version": "3.13.0"})
    cached.close()  # published: what the builder renames into place is whole and closed
    knowledge.open()
    try:
        began = time.monotonic()
        state = knowledge.docs(timeout=20.0)
        assert time.monotonic() - began < 5.0
        assert state.version == "3.13.0" and not state.refreshing
        assert not knowledge.status()["building"]  # its check waits for the rooms
        assert rooms.asked == []
        assert knowledge.history().search() == []
    finally:
        knowledge.stop()


def test_without_an_index_docs_waits_for_the_rooms_and_says_booting_not_stopped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # no shared index there
    config = parse_config(f'state_dir = "{tmp_path / "state"}"\n[instances.a]\n',
                          tmp_path / "config.toml")
    rooms = Rooms()
    knowledge = Knowledge(config, ready=rooms.await_ready)
    knowledge.open()
    try:
        with pytest.raises(Booting, match="BOOTING") as raised:
            knowledge.docs(timeout=0.5)
        assert "stopped" not in str(raised.value)
        assert rooms.asked == [(None, "docs (a first docs index is built once the rooms are up)")]
        assert not knowledge.status()["building"]  # nothing was forked during the boot
    finally:
        knowledge.stop()
