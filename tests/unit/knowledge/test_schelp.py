"""The SCDoc parser: real help files from the installed SuperCollider, and broken ones."""

from __future__ import annotations

from pathlib import Path

from scorch.knowledge.schelp import iter_help_files, parse_schelp, read_schelp, strip_inline
from tests.support.skips import needs

HELP = Path("/usr/share/SuperCollider/HelpSource")

needs_help = needs(HELP.is_dir(), "SuperCollider's help (supercollider-common)")


@needs_help
def test_sinosc_help_gives_its_header_and_the_freq_and_phase_arguments() -> None:
    doc = read_schelp(HELP / "Classes" / "SinOsc.schelp", HELP)

    assert (doc.key, doc.name, doc.kind) == ("Classes/SinOsc", "SinOsc", "class")
    assert doc.summary == "Interpolating sine wavetable oscillator."
    assert doc.categories == ("UGens>Generators>Deterministic",)
    assert "Classes/FSinOsc" in doc.related
    [method] = [m for m in doc.methods if "ar" in m.names]
    assert method.kind == "class"
    assert method.names == ("ar", "kr")
    assert [a.name for a in method.arguments] == ["freq", "phase", "mul", "add"]
    assert method.arguments[0].doc.startswith("Frequency in Hertz.")
    assert "+-8pi" in method.arguments[1].doc
    assert doc.problems == ()


@needs_help
def test_sinosc_description_is_plain_text_with_links_and_code_resolved() -> None:
    doc = read_schelp(HELP / "Classes" / "SinOsc.schelp", HELP)

    assert "uses the same implementation as Osc except" in doc.description
    assert "SinOsc uses" in doc.description
    assert "::" not in doc.description
    assert "link" not in doc.description
    assert "- FSinOsc \N{EN DASH} fast sinewave oscillator" in doc.description


@needs_help
def test_sinosc_examples_are_its_code_blocks_verbatim() -> None:
    doc = read_schelp(HELP / "Classes" / "SinOsc.schelp", HELP)

    assert len(doc.examples) == 1
    assert "{ SinOsc.ar(200, 0, 0.5) }.play;" in doc.examples[0]
    assert doc.examples[0].startswith("// create an audio-rate sine wave")


@needs_help
def test_guide_gives_its_title_kind_and_code_without_methods() -> None:
    doc = read_schelp(HELP / "Guides" / "Tour_of_UGens.schelp", HELP)

    assert doc.kind == "guide"
    assert doc.name == "Tour_of_UGens"
    assert doc.title == "Tour of UGens"
    assert doc.summary == "Signal Processing in SuperCollider"
    assert doc.methods == ()
    assert len(doc.code) > 20
    assert "LFPar" in doc.text


@needs_help
def test_extension_file_adds_instance_methods_to_its_class_without_a_header_problem() -> None:
    doc = read_schelp(HELP / "Classes" / "String.ext.schelp", HELP)

    assert doc.extends == "Classes/String"
    assert doc.name == "String"
    assert [m.names for m in doc.methods][:1] == [("stripWhiteSpace",)]
    assert doc.methods[0].kind == "instance"
    assert doc.methods[0].returns == "The stripped string"
    assert doc.problems == ()


@needs_help
def test_every_installed_help_file_parses_without_raising() -> None:
    docs = [read_schelp(path, HELP) for path in iter_help_files(HELP)]

    assert len(docs) > 1000
    assert {d.kind for d in docs} >= {"class", "guide", "reference", "tutorial", "overview"}
    assert sum(1 for d in docs if d.problems) < 20


def test_malformed_file_keeps_what_it_could_read_and_lists_the_problems() -> None:
    text = (
        "class:: Broken\n"
        "summary:: A strong::half-closed summary\n"
        "description::\n"
        "Some note:: never closed\n\n"
        "classmethods::\n"
        "method:: ar, Kr%\n"
        "argument:: freq\nThe pitch.\n"
        "returns:: a UGen\n"
        "code::\n{ Broken.ar }.play\n"
    )

    doc = parse_schelp(text, "Classes/Broken")

    assert doc.name == "Broken"
    assert doc.methods[0].arguments[0].name == "freq"
    assert doc.methods[0].arguments[0].doc == "The pitch."
    assert doc.code == ("{ Broken.ar }.play\n",)
    problems = " / ".join(doc.problems)
    assert "code:: block is never closed" in problems
    assert "bad name list" in problems
    assert "strong:: is never closed" in problems


def test_garbage_and_empty_input_give_records_not_exceptions() -> None:
    for text in ["", "::::::", "method::\n", "argument::\n", "\x00\xff" * 50, "code::" * 30,
                 "link::", "section:: A\n" * 5 + "::", "copymethod:: Foo bar\n"]:
        doc = parse_schelp(text, "Classes/X")
        assert doc.key == "Classes/X"
        assert isinstance(doc.problems, tuple)


def test_stray_end_tag_is_a_problem_not_an_error() -> None:
    doc = parse_schelp("title:: T\nsummary:: s\n\nsection:: A\ntext :: more\n", "Guides/T")

    assert doc.title == "T"
    assert "an end-tag :: closes nothing" in doc.problems


def test_escaped_end_tag_inside_a_code_block_stays_code() -> None:
    doc = parse_schelp("title:: T\n\ncode::\na = 1;\n\\::\nb = 2;\n::\n", "Guides/T")

    assert doc.code == ("a = 1;\n::\nb = 2;",)


def test_inline_code_with_an_escaped_end_tag_keeps_the_double_colon() -> None:
    assert strip_inline("use code::Foo\\::bar:: here") == "use Foo::bar here"


def test_unknown_word_before_double_colon_is_text_then_an_end_tag_as_in_scdoc() -> None:
    doc = parse_schelp("title:: T\n\nnote:: see resumed:: and more\n", "Guides/T")

    assert "Note: see resumed" in doc.text
    assert doc.problems == ()


def test_tags_are_case_insensitive() -> None:
    doc = parse_schelp("CLASS:: Loud\nSUMMARY:: s\nCLASSMETHODS::\nMETHOD:: ar\nARGUMENT:: in\nx\n",
                       "Classes/Loud")

    assert doc.summary == "s"
    assert doc.methods[0].kind == "class"
    assert doc.methods[0].arguments[0].name == "in"


def test_links_render_as_their_label_or_name_and_method() -> None:
    assert strip_inline("link::Classes/SinOsc::") == "SinOsc"
    assert strip_inline("link::Classes/Process#-mainThread#main Thread::") == "main Thread"
    assert strip_inline("link::Classes/SinOsc#*ar::") == "SinOsc.ar"
    assert strip_inline("link::#-parent::") == "parent"


def test_copymethod_and_private_are_recorded() -> None:
    doc = parse_schelp("class:: A\nclassmethods::\ncopymethod:: Collection *fill\n"
                       "private:: prInit, prFoo\n", "Classes/A")

    assert doc.copied[0].source_class == "Collection"
    assert (doc.copied[0].kind, doc.copied[0].name) == ("class", "fill")
    assert doc.private == ("prInit", "prFoo")


def test_generic_method_keeps_the_argstring_written_in_the_file() -> None:
    doc = parse_schelp("title:: set\nsection:: x\nmethod:: set (key, value)\nSets it.\n",
                       "Reference/set")

    assert doc.methods[0].kind == "generic"
    assert doc.methods[0].argstring == "(key, value)"
    assert doc.methods[0].summary == "Sets it."


def test_file_that_is_not_utf8_is_read_with_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "Classes" / "Latin.schelp"
    path.parent.mkdir()
    path.write_bytes(b"class:: Latin\nsummary:: caf\xe9\n")

    doc = read_schelp(path, tmp_path)

    assert doc.name == "Latin"
    assert doc.summary.startswith("caf")
    assert any("UTF-8" in p for p in doc.problems)


def test_missing_file_gives_a_record_with_the_problem(tmp_path: Path) -> None:
    doc = read_schelp(tmp_path / "Classes" / "Gone.schelp", tmp_path)

    assert doc.key == "Classes/Gone"
    assert any("cannot read" in p for p in doc.problems)
