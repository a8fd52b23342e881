"""The reference store: one JSON file per name, refused names, a broken file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scorch.app.studio.references import References
from scorch.audio.analysis import analyse
from scorch.audio.reference import Reference
from scorch.errors import InvalidRequest, ReferenceNotFound


def reference(name: str) -> Reference:
    sound = np.sin(2 * np.pi * 220 * np.arange(48000) / 48000) * 0.3
    return Reference.of(name, "a sine", 1.0, analyse(sound, 48000))


def test_a_reference_is_kept_listed_read_and_forgotten(tmp_path: Path) -> None:
    store = References(tmp_path / "references")
    assert store.list() == []
    store.save(reference("b-mix"))
    path = store.save(reference("a.take-2"))
    assert path == (tmp_path / "references" / "a.take-2.json").resolve()
    assert [r.name for r in store.list()] == ["a.take-2", "b-mix"]
    assert store.get("b-mix") == reference("b-mix")
    assert store.forget("b-mix").name == "b-mix"
    with pytest.raises(ReferenceNotFound, match=r"no reference 'b-mix'; references: a\.take-2"):
        store.get("b-mix")


@pytest.mark.parametrize("name", ["", ".hidden", "../up", "a/b", "x" * 65, "-dash", "sp ace"])
def test_names_that_could_leave_the_folder_are_refused(tmp_path: Path, name: str) -> None:
    store = References(tmp_path)
    with pytest.raises(InvalidRequest, match="reference name"):
        store.check_name(name)
    with pytest.raises(InvalidRequest):
        store.get(name)


def test_a_broken_file_is_not_listed_and_says_so_when_asked_for(tmp_path: Path) -> None:
    store = References(tmp_path)
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "other.json").write_text('{"name": 3}', encoding="utf-8")
    assert store.list() == []
    with pytest.raises(ReferenceNotFound, match="cannot be read"):
        store.get("broken")
