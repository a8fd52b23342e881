"""The SynthDef library: metadata convention, error reports, the compile cache."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from scorch.errors import SynthDefError, UnknownSynthDef
from scorch.primitives.synthdefs.compiler import _summarise
from scorch.primitives.synthdefs.library import DEFAULT_DIRECTORY, SynthDefLibrary, _parse_record


def _spec(minval: float, maxval: float, warp: str = "linear", default: float = 0,
          step: float = 0, units: str = "") -> dict[str, Any]:
    return {"minval": minval, "maxval": maxval, "warp": warp, "default": default,
            "step": step, "units": units}


def _record(**changes: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "name": "lead",
        "description": "A test lead",
        "category": "lead",
        "controls": [
            {"name": "out", "default": 0.0, "rate": "control"},
            {"name": "freq", "default": 440.0, "rate": "control"},
            {"name": "gate", "default": 1.0, "rate": "control"},
            {"name": "shape", "default": 0.5, "rate": "control"},
        ],
        "specs": {
            "freq": _spec(20, 20000, "exp", 440, units="Hz"),
            "gate": _spec(0, 1, step=1, default=1),
            "shape": _spec(0, 1, "-4"),
        },
        "descriptions": {"freq": "Pitch", "gate": "Held note", "shape": "Tone"},
    }
    raw.update(changes)
    return {"raw": raw, "scsyndef": "U0NnZg=="}


def _reason(record: dict[str, Any], name: str = "lead") -> str:
    with pytest.raises(SynthDefError) as caught:
        _parse_record(name, Path(f"{name}.scd"), record)
    return str(caught.value)


def test_a_complete_record_becomes_info_with_params_in_control_order() -> None:
    info, data = _parse_record("lead", Path("lead.scd"), _record())

    assert data == b"SCgf"
    assert (info.name, info.category, info.description) == ("lead", "lead", "A test lead")
    assert info.sustained and info.pitched
    assert [p.name for p in info.params] == ["out", "freq", "gate", "shape"]
    freq = info.param("freq")
    assert (freq.minval, freq.maxval, freq.warp, freq.units, freq.default) == (
        20, 20000, "exp", "Hz", 440)
    assert info.param("shape").warp == "-4"
    assert info.param("gate").warp == "lin"


def test_out_without_a_spec_gets_the_bus_spec() -> None:
    info, _ = _parse_record("lead", Path("lead.scd"), _record())

    out = info.param("out")
    assert (out.minval, out.maxval, out.step, out.units) == (0, 1023, 1, "bus")
    assert out.description


def test_a_def_without_gate_or_freq_is_percussive_and_unpitched() -> None:
    record = _record(
        controls=[{"name": "shape", "default": 0.5, "rate": "control"}],
        specs={"shape": _spec(0, 1)}, descriptions={"shape": "Tone"},
    )
    info, _ = _parse_record("lead", Path("lead.scd"), record)

    assert not info.sustained and not info.pitched


def test_missing_specs_are_reported_with_the_reason() -> None:
    assert "metadata has no specs" in _reason(_record(specs=None))


def test_a_control_without_a_spec_is_reported_by_control_name() -> None:
    reason = _reason(_record(specs={"freq": _spec(20, 20000, "exp", 440)}))

    assert "control 'gate' has no spec" in reason
    assert "control 'shape' has no spec" in reason


def test_a_control_without_a_description_is_reported() -> None:
    reason = _reason(_record(descriptions={"freq": "Pitch", "gate": "Held note"}))

    assert "control 'shape' has no description" in reason


def test_a_missing_description_or_unknown_category_is_reported() -> None:
    assert "no description" in _reason(_record(description=None))
    assert "category 'keys' is not one of" in _reason(_record(category="keys"))


def test_a_spec_naming_no_control_is_reported_as_a_likely_typo() -> None:
    specs = _record()["raw"]["specs"] | {"cutof": _spec(20, 20000)}

    assert "spec for 'cutof' names no control" in _reason(_record(specs=specs))


def test_a_default_outside_its_spec_is_reported() -> None:
    specs = _record()["raw"]["specs"] | {"shape": _spec(0.6, 1)}

    assert "default 0.5 of 'shape' is outside its spec" in _reason(_record(specs=specs))


def test_a_spec_sclang_could_not_read_is_reported() -> None:
    specs = _record()["raw"]["specs"] | {"shape": "not a ControlSpec: 3"}

    assert "spec for 'shape' is not a ControlSpec: 3" in _reason(_record(specs=specs))


def test_a_def_named_unlike_its_file_is_reported() -> None:
    assert "the file must be lead.scd" in _reason(_record(name="other"))


def test_a_compile_error_record_keeps_its_reason() -> None:
    assert _reason({"error": "ERROR: syntax error, unexpected '}'"}) == (
        "ERROR: syntax error, unexpected '}'")


def test_a_syntax_error_is_summarised_from_what_sclang_printed() -> None:
    printed = [
        "ERROR: syntax error, unexpected ')', expecting '}'",
        "  in interpreted text",
        "  line 3 char 5:",
        "",
        "    )",
        "    ^",
        "-----------------------------------",
        "ERROR: Command line parse failed",
        "ERROR: the file does not parse",
    ]

    reason = _summarise(printed)

    assert reason.startswith("ERROR: syntax error, unexpected ')'")
    assert "line 3 char 5" in reason
    assert "-----" not in reason


def test_a_runtime_error_summary_drops_the_call_stack() -> None:
    printed = ["ERROR: Message 'foo' not understood.", "RECEIVER:", "   Integer 1",
               "CALL STACK:", "\tDoesNotUnderstandError:reportError"]

    assert _summarise(printed) == "ERROR: Message 'foo' not understood."


# Below: a real headless sclang compiles the files.

GOOD = "kick"


@pytest.fixture
def library_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "defs"
    directory.mkdir()
    shutil.copy(DEFAULT_DIRECTORY / f"{GOOD}.scd", directory)
    (directory / "broken.scd").write_text(
        "SynthDef(\\broken, { |out = 0| Out.ar(out, SinOsc.ar(440) ",  # unclosed
        encoding="utf-8")
    (directory / "nospecs.scd").write_text(
        'SynthDef(\\nospecs, { |out = 0, amp = 0.1| Out.ar(out, SinOsc.ar(440) * amp) },\n'
        '    metadata: (description: "No specs", category: \\lead))\n', encoding="utf-8")
    (directory / "crashes.scd").write_text(
        'SynthDef(\\crashes, { |out = 0| Out.ar(out, SinOsc.ar(1.foo)) })\n', encoding="utf-8")
    (directory / "notadef.scd").write_text("42\n", encoding="utf-8")
    return directory


@pytest.mark.integration
def test_bad_defs_are_reported_by_name_and_the_good_one_still_loads(
    library_dir: Path, tmp_path: Path
) -> None:
    library = SynthDefLibrary(library_dir, cache_dir=tmp_path / "cache")

    assert library.names() == [GOOD]
    assert library.compiled(GOOD).startswith(b"SCgf")
    errors = library.errors
    assert sorted(errors) == ["broken", "crashes", "nospecs", "notadef"]
    assert "syntax error" in errors["broken"]
    assert "metadata has no specs" in errors["nospecs"]
    assert "'foo' not understood" in errors["crashes"]
    assert "evaluates to Integer, not a SynthDef" in errors["notadef"]


@pytest.mark.integration
def test_asking_for_a_def_that_failed_says_why(library_dir: Path, tmp_path: Path) -> None:
    library = SynthDefLibrary(library_dir, cache_dir=tmp_path / "cache")

    with pytest.raises(UnknownSynthDef, match=r"'broken' failed to load: .*syntax error"):
        library.info("broken")
    with pytest.raises(UnknownSynthDef, match="unknown SynthDef 'nope'; known: kick"):
        library.compiled("nope")


@pytest.mark.integration
def test_a_second_load_of_unchanged_files_does_not_start_sclang(
    library_dir: Path, tmp_path: Path
) -> None:
    first = SynthDefLibrary(library_dir, cache_dir=tmp_path / "cache")

    again = SynthDefLibrary(library_dir, cache_dir=tmp_path / "cache", sclang="/no/sclang")

    assert again.names() == first.names()
    assert again.compiled(GOOD) == first.compiled(GOOD)
    assert again.info(GOOD) == first.info(GOOD)
    assert again.errors == first.errors


@pytest.mark.integration
def test_a_changed_file_is_compiled_again(library_dir: Path, tmp_path: Path) -> None:
    SynthDefLibrary(library_dir, cache_dir=tmp_path / "cache")
    source = library_dir / f"{GOOD}.scd"
    source.write_text(source.read_text().replace('"Electronic kick drum', '"Changed kick'))

    library = SynthDefLibrary(library_dir, cache_dir=tmp_path / "cache")

    assert library.info(GOOD).description.startswith("Changed kick")


def test_without_sclang_every_uncached_def_is_reported_and_nothing_cached(
    library_dir: Path, tmp_path: Path
) -> None:
    library = SynthDefLibrary(library_dir, cache_dir=tmp_path / "cache", sclang="/no/sclang")

    assert library.names() == []
    assert all("cannot run sclang" in reason for reason in library.errors.values())
    assert list((tmp_path / "cache").glob("*.json")) == []


@pytest.mark.integration
def test_a_hanging_compile_is_killed_and_reported_without_being_cached(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "defs"
    directory.mkdir()
    (directory / "hangs.scd").write_text("loop { }\n", encoding="utf-8")

    library = SynthDefLibrary(directory, cache_dir=tmp_path / "cache", timeout=5)

    assert "timed out after 5 s" in library.errors["hangs"]
    assert list((tmp_path / "cache").glob("*.json")) == []


@pytest.mark.integration
def test_the_shipped_library_loads_without_errors_and_covers_every_category(
    tmp_path: Path,
) -> None:
    library = SynthDefLibrary(cache_dir=tmp_path / "cache")

    assert library.errors == {}
    assert {info.category for info in library.all()} == {"drums", "bass", "pad", "lead", "fx",
                                                          "sampler"}
    for info in library.all():
        for common in ("out", "amp"):
            assert common in [p.name for p in info.params], (info.name, common)
