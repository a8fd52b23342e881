"""The docs index: the installed help merged with a small fake runtime dump."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from scorch.knowledge.docs_index import DocsIndex, docs_fingerprint
from scorch.knowledge.introspect import ArgRecord, ClassRecord, MethodRecord
from tests.support.skips import missing, needs

HELP = Path("/usr/share/SuperCollider/HelpSource")

needs_help = needs(HELP.is_dir(), "SuperCollider's help (supercollider-common)")

HOSTILE_QUERIES = [
    "", "   ", "AND", "OR", "NOT", "AND OR NOT", "\"", "\"\"\"", "'", "*", "**", "^", "-",
    "(", ")", "((a)", "[x]", "{}", "NEAR(sin osc)", "NEAR(a b, 2)", "name:SinOsc",
    "summary : reverb", "sin*", "\"unterminated", "a\"b", "a AND", "OR b", "\x00", "\\",
    "%", "_", ";DROP TABLE docs;--", "é", "日本語", "🎵 reverb", "x" * 10_000,
    "reverb " * 2_000, "\n\t\r", "SinOsc.ar(freq: 440)", "{ SinOsc.ar }.play",
]


def method(name: str, *args: tuple[str, float | None, str | None],
           varargs: bool = False) -> MethodRecord:
    return MethodRecord(name, tuple(ArgRecord(*a) for a in args), varargs, "")


SINOSC_ARGS = (("freq", 440.0, "440.0"), ("phase", 0.0, "0.0"), ("mul", 1.0, "1.0"),
               ("add", 0.0, "0.0"))

FAKE_DUMP = [
    ClassRecord("SinOsc", ("PureUGen", "UGen", "AbstractFunction", "Object"),
                "/sc/Osc.sc", True,
                (method("ar", *SINOSC_ARGS), method("kr", *SINOSC_ARGS)), ()),
    ClassRecord("FreeVerb", ("Filter", "UGen", "AbstractFunction", "Object"),
                "/sc/FreeVerb.sc", True,
                (method("ar", ("in", None, None), ("mix", 0.33, "0.33"), ("room", 0.5, "0.5"),
                        ("damp", 0.5, "0.5"), ("mul", 1.0, "1.0"), ("add", 0.0, "0.0")),), ()),
    ClassRecord("Pbind", ("Pattern", "AbstractFunction", "Object"), "/sc/Patterns.sc", False,
                (method("new", ("pairs", None, None), varargs=True),), ()),
    ClassRecord("Collection", ("Object",), "/sc/Collection.sc", False,
                (method("fill", ("size", None, None), ("function", None, None)),), ()),
    ClassRecord("Array", ("ArrayedCollection", "SequenceableCollection", "Collection", "Object"),
                "/sc/Array.sc", False, (method("with", ("args", None, None), varargs=True),), ()),
    ClassRecord("ScorchGlitchBox", ("Object",), "/home/me/Extensions/Glitch.sc", False,
                (method("crunch", ("bits", 8, "8"), ("shape", None, "'saw'")),),
                (method("prSecret"), method("level"), method("level_", ("value", None, None)))),
]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> DocsIndex:
    """The real help merged with FAKE_DUMP, built once for the module."""
    if not HELP.is_dir():
        missing("SuperCollider's help (supercollider-common)")
    docs = DocsIndex(tmp_path_factory.mktemp("docs") / "docs.sqlite")
    docs.build(HELP, FAKE_DUMP, version="3.13.0")
    return docs


@needs_help
def test_lookup_sinosc_gives_runtime_defaults_with_help_words(index: DocsIndex) -> None:
    doc = index.lookup("SinOsc")

    assert doc is not None
    assert doc.summary == "Interpolating sine wavetable oscillator."
    assert [m.signature() for m in doc.class_methods] == [
        "ar(freq: 440, phase: 0, mul: 1, add: 0)", "kr(freq: 440, phase: 0, mul: 1, add: 0)"]
    assert doc.class_methods[0].args[0].doc.startswith("Frequency in Hertz")
    assert doc.superclasses == ("PureUGen", "UGen", "AbstractFunction", "Object")
    assert doc.is_ugen and doc.has_help and doc.in_library
    assert "Classes/FSinOsc" in doc.related
    assert "{ SinOsc.ar(200, 0, 0.5) }.play;" in doc.examples[0]


@needs_help
def test_lookup_ignores_case_and_accepts_keys_and_method_names(index: DocsIndex) -> None:
    for name in ["sinosc", "Classes/SinOsc", "SinOsc.ar", "  SinOsc "]:
        doc = index.lookup(name)
        assert doc is not None and doc.name == "SinOsc", name
    assert index.lookup("NoSuchThingAnywhere") is None


@needs_help
def test_search_reverb_finds_freeverb_or_gverb_in_the_top_three(index: DocsIndex) -> None:
    names = [hit.name for hit in index.search("reverb")[:3]]

    assert {"FreeVerb", "GVerb"} & set(names)


@needs_help
def test_search_a_question_still_finds_the_ugens(index: DocsIndex) -> None:
    names = [hit.name for hit in index.search("how do I make a reverb?", limit=10)]

    assert {"FreeVerb", "GVerb"} <= set(names)


@needs_help
def test_exact_class_name_is_the_first_hit_even_when_everything_mentions_it(
        index: DocsIndex) -> None:
    hits = index.search("SinOsc")

    assert hits[0].name == "SinOsc"
    assert hits[0].kind == "class"
    assert hits[0].summary == "Interpolating sine wavetable oscillator."
    assert len(hits) == 10


@needs_help
def test_names_and_summaries_outrank_body_text(index: DocsIndex) -> None:
    hits = index.search("sine oscillator", limit=5)

    assert hits[0].name == "SinOsc"
    assert all(h.score >= hits[-1].score for h in hits)


@needs_help
@pytest.mark.parametrize("query", HOSTILE_QUERIES, ids=range(len(HOSTILE_QUERIES)))
def test_hostile_query_gives_a_list_never_an_sqlite_error(index: DocsIndex, query: str) -> None:
    hits = index.search(query)

    assert isinstance(hits, list)
    assert len(hits) <= 10


@needs_help
def test_hostile_queries_with_real_words_still_find_them(index: DocsIndex) -> None:
    assert index.search("🎵 reverb")[0].name in {"FreeVerb", "GVerb", "FreeVerb2"}
    assert "SinOsc" in [h.name for h in index.search("NEAR(sin osc)")[:3]]
    assert index.search("\"unterminated") == []
    assert index.search("", limit=10) == []
    assert index.search("reverb", limit=0) == []


@needs_help
def test_runtime_only_class_gets_an_entry_and_is_found(index: DocsIndex) -> None:
    doc = index.lookup("ScorchGlitchBox")

    assert doc is not None
    assert not doc.has_help and doc.in_library
    assert doc.file == "/home/me/Extensions/Glitch.sc"
    assert "no help file" in doc.summary
    assert [m.signature() for m in doc.class_methods] == ["crunch(bits: 8, shape: 'saw')"]
    # prSecret is private; level_ is the setter of the level property.
    assert [(m.name, m.settable) for m in doc.instance_methods] == [("level", True)]
    assert index.search("glitch")[0].name == "ScorchGlitchBox"
    assert index.search("crunch")[0].name == "ScorchGlitchBox"


@needs_help
def test_help_class_missing_from_the_library_keeps_documented_arguments(
        index: DocsIndex) -> None:
    doc = index.lookup("GVerb")

    assert doc is not None and doc.has_help and not doc.in_library
    [ar] = doc.class_methods
    assert ar.args[0].name == "in"
    assert ar.args[0].default is None
    assert not ar.in_library


@needs_help
def test_varargs_method_signature_shows_the_ellipsis(index: DocsIndex) -> None:
    doc = index.lookup("Pbind")

    assert doc is not None
    assert doc.class_methods[0].signature() == "new(... pairs)"


@needs_help
def test_a_documented_inherited_method_gets_the_superclass_signature(index: DocsIndex) -> None:
    doc = index.lookup("Array")  # Array.schelp has "copymethod:: Collection *fill"

    assert doc is not None
    [fill] = [m for m in doc.class_methods if m.name == "fill"]
    assert fill.signature() == "fill(size, function)"
    assert fill.inherited_from == "Collection"
    assert fill.in_library
    assert fill.args[0].doc  # the words come from Collection's help


@needs_help
def test_guides_are_indexed_and_looked_up_by_name(index: DocsIndex) -> None:
    doc = index.lookup("Tour_of_UGens")

    assert doc is not None and doc.kind == "guide"
    assert doc.title == "Tour of UGens"
    assert "Tour_of_UGens" in [h.name for h in index.search("tour of ugens", limit=5)]


@needs_help
def test_suggest_finds_sinosc_for_a_typo(index: DocsIndex) -> None:
    assert index.suggest("SinOssc")[0] == "SinOsc"
    assert "FreeVerb" in index.suggest("freeverb")
    assert index.suggest("") == []
    assert index.suggest("x" * 10_000) == []


@needs_help
def test_rebuild_is_needed_only_when_version_or_fingerprint_change(index: DocsIndex) -> None:
    fingerprint = docs_fingerprint(HELP, FAKE_DUMP)

    assert not index.needs_rebuild("3.13.0", fingerprint)
    assert index.needs_rebuild("3.14.0", fingerprint)
    assert index.needs_rebuild("3.13.0", docs_fingerprint(HELP, FAKE_DUMP[:-1]))


def test_a_new_index_needs_a_build_and_finds_nothing(tmp_path: Path) -> None:
    docs = DocsIndex(tmp_path / "docs.sqlite")

    assert docs.needs_rebuild("3.13.0", "anything")
    assert docs.search("reverb") == []
    assert docs.lookup("SinOsc") is None
    assert docs.suggest("SinOsc") == []


def test_missing_help_dir_indexes_runtime_classes_only_and_says_so(tmp_path: Path) -> None:
    docs = DocsIndex(tmp_path / "docs.sqlite")

    stats = docs.build(tmp_path / "no-help-here", FAKE_DUMP, version="3.13.0")

    assert "runtime classes only" in stats.note
    assert stats.help_files == 0
    assert stats.documents == len(FAKE_DUMP)
    doc = docs.lookup("SinOsc")
    assert doc is not None and not doc.has_help
    assert doc.class_methods[0].signature() == "ar(freq: 440, phase: 0, mul: 1, add: 0)"


def test_a_rebuild_replaces_the_old_entries(tmp_path: Path) -> None:
    docs = DocsIndex(tmp_path / "docs.sqlite")
    docs.build(None, FAKE_DUMP)

    docs.build(None, FAKE_DUMP[:1])

    assert docs.lookup("ScorchGlitchBox") is None
    assert docs.suggest("ScorchGlitchBx") == []
    assert docs.lookup("SinOsc") is not None


def test_a_second_connection_reads_what_the_first_built(tmp_path: Path) -> None:
    path = tmp_path / "docs.sqlite"
    writer = DocsIndex(path)
    reader = DocsIndex(path)
    assert reader.lookup("SinOsc") is None

    writer.build(None, FAKE_DUMP, version="3.13.0")

    doc = reader.lookup("SinOsc")
    assert doc is not None and doc.in_library
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
