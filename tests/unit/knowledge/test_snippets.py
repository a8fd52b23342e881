"""Snippets: the store's rules, the shipped starters' headers, and every starter run for real."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorch.errors import InvalidSnippet, ReadOnlySnippet, SnippetExists, UnknownSnippet
from scorch.knowledge.snippets import BUILTIN_DIR, SnippetStore, parse_snippet

BUILTINS = sorted(p.stem for p in BUILTIN_DIR.glob("*.scd"))


@pytest.fixture
def store(tmp_path: Path) -> SnippetStore:
    return SnippetStore(tmp_path / "user")


def test_about_ten_starters_ship_with_a_description_tags_and_runs(store: SnippetStore) -> None:
    snippets = [s for s in store.list() if s.builtin]

    assert 9 <= len(snippets) <= 12
    for snippet in snippets:
        assert snippet.description, snippet.name
        assert snippet.tags, snippet.name
        assert snippet.runs, snippet.name
        assert snippet.code.lstrip().startswith("("), snippet.name
        assert "// description:" not in snippet.code
        # Either it ends by itself, or the header says how to stop it.
        assert snippet.ends_after() is not None or snippet.stop, snippet.name


def test_starters_cover_the_promised_topics(store: SnippetStore) -> None:
    tags = {t for s in store.list() for t in s.tags}

    assert {"pbind", "reverb", "bus", "buffer", "midi", "routine", "clock", "drone", "lfo",
            "granular", "pdef", "synthdef", "ndef"} <= tags


def test_save_then_show_round_trips_code_description_and_tags(store: SnippetStore) -> None:
    code = "(\n{ SinOsc.ar(440) * 0.1 }.play;\n)\n"

    saved = store.save("my-sine", code, "A plain\nsine", ["Test", "sine"])

    shown = store.show("my-sine")
    assert shown == saved
    assert shown.code == code
    assert shown.description == "A plain sine"
    assert shown.tags == ("test", "sine")
    assert not shown.builtin
    assert shown.path == store.user_dir / "my-sine.scd"


def test_code_that_starts_with_a_comment_is_kept_whole(store: SnippetStore) -> None:
    code = "// tags: not a header, this is my code's comment\n1 + 1;\n"

    assert store.save("commented", code).code == code


def test_list_filters_by_tag_and_by_text(store: SnippetStore) -> None:
    store.save("bleep", "{ Blip.ar(3) }.play;", "short bleeps", ["noise"])

    assert [s.name for s in store.list(tag="noise")] == ["bleep"]
    assert "bleep" in [s.name for s in store.list(text="BLIP.ar")]
    assert "pdef-loop" in [s.name for s in store.list(tag="PDEF")]
    assert store.list(text="no snippet says this") == []
    assert len(store.list()) == len(BUILTINS) + 1


def test_saving_over_a_saved_snippet_needs_replace(store: SnippetStore) -> None:
    store.save("mine", "1;")

    with pytest.raises(SnippetExists, match="replace = true"):
        store.save("mine", "2;")
    assert store.save("mine", "2;", replace=True).code == "2;\n"


def test_builtins_are_read_only_and_say_so(store: SnippetStore) -> None:
    with pytest.raises(ReadOnlySnippet, match=r"built-in snippet.*read-only"):
        store.delete("pbind-melody")
    with pytest.raises(ReadOnlySnippet, match="read-only"):
        store.save("pbind-melody", "1;", replace=True)
    assert store.show("pbind-melody").builtin


def test_delete_removes_a_user_snippet(store: SnippetStore) -> None:
    store.save("gone-soon", "1;")

    store.delete("gone-soon")

    with pytest.raises(UnknownSnippet, match="no snippet named 'gone-soon'"):
        store.show("gone-soon")
    with pytest.raises(UnknownSnippet):
        store.delete("gone-soon")


@pytest.mark.parametrize("name", ["", "A", "Has Space", "../etc/passwd", "a/b", "-dash", "é",
                                  "x" * 41, "name.scd", "semi;colon", "new\nline"])
def test_unsafe_names_are_refused_with_the_rule(store: SnippetStore, name: str) -> None:
    with pytest.raises(InvalidSnippet, match="lower-case letters, digits"):
        store.save(name, "1;")
    with pytest.raises(InvalidSnippet):
        store.show(name)
    assert not store.user_dir.exists() or not any(store.user_dir.iterdir())


def test_bad_tags_empty_code_and_long_descriptions_are_refused(store: SnippetStore) -> None:
    with pytest.raises(InvalidSnippet, match="tag"):
        store.save("ok", "1;", tags=["two words"])
    with pytest.raises(InvalidSnippet, match="code"):
        store.save("ok", "   \n")
    with pytest.raises(InvalidSnippet, match="description"):
        store.save("ok", "1;", "x" * 301)


def test_unknown_snippet_lists_the_known_names(store: SnippetStore) -> None:
    with pytest.raises(UnknownSnippet, match=r"known: .*pbind-melody"):
        store.show("pbind-melodie")


@pytest.mark.parametrize(("runs", "seconds"), [
    ("6 s, then stops by itself", 6.0), ("2.5 s", 2.5), ("until stopped (the stop line)", None),
    ("", None)])
def test_ends_after_reads_the_seconds_of_the_runs_header(runs: str, seconds: float | None,
                                                         ) -> None:
    snippet = parse_snippet(f"// runs: {runs}\n1;\n", "n", builtin=False, path=Path("n.scd"))

    assert snippet.ends_after() == seconds


def test_header_stops_at_the_first_line_that_is_not_a_known_key() -> None:
    text = "// description: d\n// tags: a, b\n// stop: X.stop;\n// note: code\n(\n1\n)\n"

    snippet = parse_snippet(text, "n", builtin=False, path=Path("n.scd"))

    assert (snippet.description, snippet.tags, snippet.stop) == ("d", ("a", "b"), "X.stop;")
    assert snippet.code == "// note: code\n(\n1\n)\n"
