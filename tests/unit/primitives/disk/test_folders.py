"""A path argument reaches only the allowed folders: made absolute, symlinks followed, checked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorch.errors import FileExists, PathRefused
from scorch.primitives.disk.folders import Folders


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    """state/ (its midi/ allowed), samples/ (allowed), outside/, and links out of samples/."""
    places = {name: tmp_path / name for name in ("state", "midi", "samples", "outside")}
    places["midi"] = places["state"] / "midi"
    for folder in places.values():
        folder.mkdir(parents=True, exist_ok=True)
    (places["outside"] / "secret.wav").write_bytes(b"secret")
    (places["samples"] / "kick.wav").write_bytes(b"kick")
    (places["state"] / "journal.jsonl").write_text("{}\n")
    (places["samples"] / "out.wav").symlink_to(places["outside"] / "secret.wav")
    (places["samples"] / "outdir").symlink_to(places["outside"])
    (places["samples"] / "nowhere.wav").symlink_to(places["outside"] / "not-yet.wav")
    (places["samples"] / "in.wav").symlink_to(places["samples"] / "kick.wav")
    return places


def folders(tree: dict[str, Path]) -> Folders:
    return Folders.of([tree["midi"]], [tree["samples"], tree["state"].parent / "samples"],
                      [tree["state"]])


def refused(tree: dict[str, Path], given: str, **kw: bool) -> PathRefused:
    with pytest.raises(PathRefused) as caught:
        folders(tree).file("path", given, [tree["samples"]], **kw)
    assert caught.value.argument == "path" and caught.value.code == "PATH_REFUSED"
    return caught.value


def test_a_relative_path_is_taken_in_its_folder_and_an_absolute_one_inside_stays(
        tree: dict[str, Path]) -> None:
    allowed = folders(tree)
    assert allowed.file("path", "kick.wav", [tree["samples"]]) == tree["samples"] / "kick.wav"
    assert allowed.file("path", str(tree["midi"] / "a.mid"), []) == tree["midi"] / "a.mid"
    assert allowed.file("path", "sub/../kick.wav", [tree["samples"]]) == (
        tree["samples"] / "kick.wav")
    assert allowed.file("path", "in.wav", [tree["samples"]]) == tree["samples"] / "kick.wav"


def test_a_relative_path_is_found_in_the_first_folder_that_holds_it(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    (two / "x.wav").write_bytes(b"x")
    allowed = Folders.of([], [one, two], [])
    assert allowed.file("path", "x.wav", [one, two]) == two / "x.wav"
    assert allowed.file("path", "y.wav", [one, two]) == one / "y.wav"  # none has it: the first


@pytest.mark.parametrize("given", [
    "../outside/secret.wav", "../../../../../../etc/hostname", "outdir/secret.wav", "out.wav",
    "nowhere.wav", "outdir", "..", "/etc/hostname", "~/.bashrc",
])
def test_a_path_leading_outside_is_refused_naming_the_argument_and_the_allowed_folders(
        tree: dict[str, Path], given: str) -> None:
    err = refused(tree, given)
    assert "outside the folders this installation allows" in str(err)
    assert str(tree["samples"]) in str(err) and str(tree["midi"]) in str(err)
    assert "[files] allow" in str(err)


def test_an_absolute_path_outside_is_refused(tree: dict[str, Path]) -> None:
    err = refused(tree, str(tree["outside"] / "secret.wav"))
    assert "secret.wav" in str(err)


@pytest.mark.parametrize("given", ["kick.wav\n", "kick\n.wav", "kick.wav\r", "a\x00b.wav",
                                   "\tkick.wav", "kick.wav\x7f", "kick\x1b.wav", "", "   "])
def test_control_characters_and_empty_paths_are_no_path(tree: dict[str, Path], given: str) -> None:
    err = refused(tree, given)
    assert "control character" in str(err) or "is empty" in str(err)


def test_scorchs_own_files_are_never_reached_though_a_folder_around_them_is_allowed(
        tmp_path: Path) -> None:
    state = tmp_path / "state"
    (state / "midi").mkdir(parents=True)
    allowed = Folders.of([state / "midi"], [tmp_path], [state])
    assert allowed.file("path", "x.mid", [state / "midi"]) == state / "midi" / "x.mid"
    with pytest.raises(PathRefused, match="one of scorch's own files"):
        allowed.file("path", str(state / "journal.jsonl"), [])
    assert allowed.file("path", str(tmp_path / "other.wav"), []) == tmp_path / "other.wav"


def test_writing_over_a_file_takes_overwrite(tree: dict[str, Path]) -> None:
    allowed = folders(tree)
    with pytest.raises(FileExists, match="overwrite = true") as caught:
        allowed.file("path", "kick.wav", [tree["samples"]], write=True)
    assert caught.value.argument == "path" and caught.value.code == "INVALID_ARGUMENT"
    assert allowed.file("path", "kick.wav", [tree["samples"]], write=True, overwrite=True)
    assert allowed.file("path", "new.wav", [tree["samples"]], write=True) == (
        tree["samples"] / "new.wav")


def test_a_relative_path_with_no_folder_to_take_it_in_is_refused(tree: dict[str, Path]) -> None:
    with pytest.raises(PathRefused, match="is relative"):
        folders(tree).file("path", "kick.wav", [])


@given(st.text(max_size=40))
def test_any_text_is_a_path_inside_the_allowed_folders_or_refused(text: str) -> None:
    base = Path(os.path.realpath("/tmp")) / "scorch-folders-prop"
    allowed = Folders.of([], [base], [])
    try:
        path = allowed.file("path", text, [base])
    except PathRefused as err:
        assert err.argument == "path"
        return
    assert path.is_relative_to(base)
    assert not any(ord(c) < 32 or ord(c) == 127 for c in text)


@given(st.text(min_size=1, max_size=20),
       st.sampled_from([chr(c) for c in (*range(32), 127)]),
       st.integers(min_value=0, max_value=20))
def test_a_control_character_anywhere_is_refused(text: str, control: str, at: int) -> None:
    base = Path(os.path.realpath("/tmp")) / "scorch-folders-prop"
    given = text[:at] + control + text[at:]
    with pytest.raises(PathRefused, match=r"control character|is empty"):
        Folders.of([], [base], []).file("path", given, [base])
