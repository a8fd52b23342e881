"""One docs index per SuperCollider installation: shared by configs, built once, safely."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scorch.app.knowledge import Knowledge
from scorch.config.installation import parse_config
from scorch.knowledge.docs_index import DocsIndex
from tests.support.skips import needs

pytestmark = [pytest.mark.integration,
              needs(shutil.which("sclang") is not None, "sclang (supercollider-language)")]

ROOT = Path(__file__).resolve().parents[3]
#: Seconds a test waits for a docs build (about 3 s of a core on an idle machine).
BUILD_WAIT = 120.0


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private XDG_CACHE_HOME (and XDG_DATA_HOME: no one's extensions)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "cache"


def knowledge(tmp_path: Path, name: str) -> Knowledge:
    state = tmp_path / name / "state"
    config = parse_config(f'state_dir = "{state}"\n[instances.room]\n[docs]\n'
                          'build = "background"\n', tmp_path / name / "config.toml")
    return Knowledge(config)


def test_two_configs_share_one_index_and_the_second_start_does_not_rebuild_it(
        tmp_path: Path, cache: Path) -> None:
    first, second = knowledge(tmp_path, "one"), knowledge(tmp_path, "two")
    assert first.docs_path == second.docs_path
    assert first.docs_path.is_relative_to(cache)
    assert first.history_path != second.history_path  # the history stays per installation

    first.start()
    try:
        assert first.docs(BUILD_WAIT).index.lookup("SinOsc") is not None
        assert first.status()["last"]["rebuilt"]
    finally:
        first.stop()
    built = first.docs_path.stat()

    second.start()
    try:
        state = second.docs(BUILD_WAIT)
        refresh = second.refresh_docs()  # the start's own check, or a new one: both cheap
        assert refresh.done.wait(BUILD_WAIT)
        status = second.status()
    finally:
        second.stop()

    assert state.index.lookup("SinOsc") is not None
    # No builder ran for the second config: the stamp alone said the index is current.
    assert status["last"] == {} and status["failure"] == ""
    after = first.docs_path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (built.st_ino, built.st_mtime_ns)
    assert sorted(p.name for p in first.docs_path.parent.iterdir()) == sorted(
        [first.docs_path.name, first.docs_path.with_suffix(".lock").name])


def test_two_builders_at_once_build_the_index_once_and_leave_it_whole_and_alone(
        tmp_path: Path, cache: Path) -> None:
    index = cache / "docs" / "shared.sqlite"
    index.parent.mkdir(parents=True)
    # What a builder killed on the way (its scorch stopped) left behind.
    (index.parent / ".shared.4194304.building").write_bytes(b"half an index")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    builders = [subprocess.Popen([sys.executable, "-m", "scorch.knowledge.build", str(index)],
                                 stdout=subprocess.PIPE, text=True, env=env)
                for _ in range(2)]
    reports = []
    for builder in builders:
        out, _ = builder.communicate(timeout=BUILD_WAIT)
        assert builder.returncode == 0, out
        reports.append(json.loads(out.strip().splitlines()[-1]))

    assert sorted(r["rebuilt"] for r in reports) == [False, True]
    # The one that waited for the lock found the index current: no class dump of its own.
    [waited] = [r for r in reports if not r["rebuilt"]]
    assert waited["introspection_seconds"] == 0 and waited["documents"] > 1000
    docs = DocsIndex(index, published=True)
    try:
        assert docs.lookup("SinOsc") is not None
    finally:
        docs.close()
    assert not list(index.parent.glob("*.building"))
