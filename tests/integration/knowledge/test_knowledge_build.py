"""Keeping the docs index current: the sources' stamp, and a refresh with a real sclang."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scorch.knowledge.build import NOTE, SOURCES, STAMP, refresh
from scorch.knowledge.docs_index import DocsIndex
from scorch.knowledge.sources import Sources, find_help_dir, stamp
from tests.support.skips import missing, needs

needs_sclang = needs(shutil.which("sclang") is not None, "sclang (supercollider-language)")

HELP = """title:: Wobbler
summary:: Makes things wobble.
categories:: Test
description::
A test class for the help of a test.
classmethods::
method:: ar
argument:: rate
How fast it wobbles.
"""


@pytest.fixture
def tree(tmp_path: Path) -> Sources:
    """A class folder, a help folder, a conf and a binary, as a build would name them."""
    (tmp_path / "classes" / "Sub").mkdir(parents=True)
    (tmp_path / "classes" / "A.sc").write_text("A {}\n")
    (tmp_path / "classes" / "Sub" / "B.sc").write_text("B {}\n")
    (tmp_path / "help" / "Classes").mkdir(parents=True)
    (tmp_path / "help" / "Classes" / "A.schelp").write_text("title:: A\n")
    (tmp_path / "sclang_conf.yaml").write_text("includePaths: []\n")
    (tmp_path / "sclang").write_text("binary")
    return Sources(sclang=str(tmp_path / "sclang"), conf=str(tmp_path / "sclang_conf.yaml"),
                   class_dirs=(str(tmp_path / "classes"), str(tmp_path / "ext")),
                   exclude_dirs=(), help_dir=str(tmp_path / "help"))


def test_stamp_is_stable_while_nothing_changes(tree: Sources) -> None:
    assert stamp(tree) == stamp(tree)
    assert Sources.from_json(tree.to_json()) == tree


@pytest.mark.parametrize("change", [
    "add a class file", "edit a class file", "add a help file", "create the extension folder",
    "change the conf", "replace sclang"])
def test_stamp_changes_with_the_library_help_conf_or_binary(tree: Sources, tmp_path: Path,
                                                           change: str) -> None:
    before = stamp(tree)
    if change == "add a class file":
        (tmp_path / "classes" / "Sub" / "C.sc").write_text("C {}\n")
    elif change == "edit a class file":
        (tmp_path / "classes" / "A.sc").write_text("A { foo { ^1 } }\n")
    elif change == "add a help file":
        (tmp_path / "help" / "Classes" / "B.schelp").write_text("title:: B\n")
    elif change == "create the extension folder":
        (tmp_path / "ext").mkdir()
        (tmp_path / "ext" / "D.sc").write_text("D {}\n")
    elif change == "change the conf":
        (tmp_path / "sclang_conf.yaml").write_text("includePaths:\n  - /q\n")
    else:
        (tmp_path / "sclang").write_text("another binary")

    assert stamp(tree) != before


def test_stamp_ignores_other_files_and_excluded_folders(tree: Sources, tmp_path: Path) -> None:
    before = stamp(tree)
    (tmp_path / "classes" / "notes.txt").write_text("not a class")
    (tmp_path / "help" / "Classes" / "picture.png").write_bytes(b"png")
    excluded = Sources(**{**tree.__dict__, "exclude_dirs": (str(tmp_path / "classes" / "Sub"),)})
    with_excluded = stamp(excluded)

    (tmp_path / "classes" / "Sub" / "C.sc").write_text("C {}\n")

    assert stamp(tree) != before  # sanity: the folder counts when it is not excluded
    assert stamp(excluded) == with_excluded


def test_known_help_folder_is_found_beside_the_installed_sclang() -> None:
    found = find_help_dir("sclang")
    if shutil.which("sclang") is None or found is None:
        missing("SuperCollider's help (supercollider-common, with supercollider-language)")
    assert (found / "Classes" / "SinOsc.schelp").is_file()


@pytest.mark.integration
@needs_sclang
def test_refresh_builds_once_then_only_checks_and_records_its_sources(tmp_path: Path) -> None:
    help_dir = tmp_path / "help"
    (help_dir / "Classes").mkdir(parents=True)
    (help_dir / "Classes" / "Wobbler.schelp").write_text(HELP)
    index_path = tmp_path / "docs.sqlite"

    first = refresh(index_path, help_dir=help_dir)
    second = refresh(index_path, help_dir=help_dir)

    assert first.rebuilt and first.version.startswith("3.") and first.note == ""
    assert first.documents > 1000  # the whole library, plus the one help page
    assert not second.rebuilt and second.documents == first.documents
    index = DocsIndex(index_path)
    meta = index.meta()
    sources = Sources.from_json(meta[SOURCES])
    assert meta[STAMP] == stamp(sources) and sources.help_dir == str(help_dir)
    assert any(d.endswith("SCClassLibrary") for d in sources.class_dirs)
    assert index.lookup("Wobbler") is not None and index.lookup("SinOsc") is not None
    index.close()

    # sclang gone (uninstalled, broken): the index of the whole library is kept, not
    # replaced by the help alone.
    kept = refresh(index_path, sclang=str(tmp_path / "no-sclang"), help_dir=help_dir)

    assert not kept.rebuilt and "the last index is kept" in kept.note
    assert kept.documents == first.documents


@pytest.mark.integration
@needs_sclang
def test_refresh_without_help_indexes_the_runtime_classes_and_says_so(tmp_path: Path) -> None:
    report = refresh(tmp_path / "docs.sqlite", help_dir=tmp_path / "nowhere")

    assert report.rebuilt and "runtime classes only" in report.note
    index = DocsIndex(tmp_path / "docs.sqlite")
    sinosc = index.lookup("SinOsc")
    assert sinosc is not None and not sinosc.has_help and sinosc.in_library
    assert index.meta()[NOTE] == report.note
    index.close()


def test_refresh_without_sclang_builds_from_the_help_and_says_so(tmp_path: Path) -> None:
    help_dir = tmp_path / "help"
    (help_dir / "Classes").mkdir(parents=True)
    (help_dir / "Classes" / "Wobbler.schelp").write_text(HELP)
    index_path = tmp_path / "docs.sqlite"

    first = refresh(index_path, sclang=str(tmp_path / "no-sclang"), help_dir=help_dir)
    again = refresh(index_path, sclang=str(tmp_path / "no-sclang"), help_dir=help_dir)

    assert first.rebuilt and first.documents == 1
    assert "class library could not be read" in first.note and "help files only" in first.note
    assert not again.rebuilt and again.documents == 1
    index = DocsIndex(index_path)
    assert index.meta()[STAMP] == ""  # nothing to compare with: the next start tries again
    assert index.lookup("Wobbler") is not None
    index.close()


def test_the_builder_runs_as_a_module_and_reports_one_json_line(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    done = subprocess.run(
        [sys.executable, "-m", "scorch.knowledge.build", str(tmp_path / "docs.sqlite"),
         "--sclang", str(tmp_path / "no-sclang"), "--help-dir", str(tmp_path / "no-help")],
        capture_output=True, text=True, timeout=60, env=env, check=False)

    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["rebuilt"] and report["documents"] == 0
    assert "runtime classes only" in report["note"]
