"""Dumping the running class library: one real headless sclang, and the JSON reader."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from scorch.errors import IntrospectionError
from scorch.knowledge.introspect import (
    DUMP_SCHEMA,
    ClassRecord,
    Introspection,
    dump_code,
    format_default,
    introspect,
    parse_dump,
)
from scorch.primitives.sclang.launch import CLASSES, SCLANG_ENV, class_library_conf
from scorch.primitives.system.process import spawn
from tests.support.skips import needs

PLATFORM = {"class_library_dir": "/sc/SCClassLibrary", "system_extension_dir": "/sc/Extensions",
            "user_extension_dir": "/home/x/Extensions", "help_dir": "/sc/HelpSource",
            "include_paths": [], "exclude_paths": []}


def raw_dump(classes: list[Any], **extra: Any) -> dict[str, Any]:
    """A dump as sclang writes it, with ``classes``."""
    return {"schema": DUMP_SCHEMA, "version": "3.13.0", "platform": PLATFORM,
            "classes": classes, "complete": True, **extra}

needs_sclang = needs(shutil.which("sclang") is not None, "sclang (supercollider-language)")

# A class file in the user extension directory: what "a class defined at runtime"
# can mean in sclang (a file added, then the library compiled).
PROBE_CLASS = """
ScorchProbe {
    *make { |level = 0.25, shape = \\sine, tags = #[1, 2]| ^this.new }
    play { |out = 0 ... more| ^nil }
}
+ SinOsc { *scorchExtra { |x = 1.5| ^x } }
"""


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory) -> Introspection:
    """One headless sclang for the module, with a user class in its extension directory."""
    data_home = tmp_path_factory.mktemp("xdg-data")
    extensions = data_home / "SuperCollider" / "Extensions"
    extensions.mkdir(parents=True)
    (extensions / "ScorchProbe.sc").write_text(PROBE_CLASS, encoding="utf-8")
    return introspect(data_home=data_home, timeout=60)


def by_name(dump: Introspection) -> dict[str, ClassRecord]:
    return {c.name: c for c in dump.classes}


@pytest.mark.integration
@needs_sclang
def test_sinosc_ar_has_sclangs_argument_names_and_defaults(dump: Introspection) -> None:
    sinosc = by_name(dump)["SinOsc"]

    [ar] = [m for m in sinosc.class_methods if m.name == "ar"]
    assert ar.signature() == "ar(freq: 440, phase: 0, mul: 1, add: 0)"
    assert [a.default_code for a in ar.args] == ["440.0", "0.0", "1.0", "0.0"]
    assert sinosc.is_ugen
    assert sinosc.superclasses[-1] == "Object"
    assert "UGen" in sinosc.superclasses
    assert sinosc.file.endswith("Osc.sc")


@pytest.mark.integration
@needs_sclang
def test_dump_covers_the_whole_library_with_version(dump: Introspection) -> None:
    classes = by_name(dump)

    assert dump.version.startswith("3.")
    assert len(classes) > 1000
    assert not any(name.startswith("Meta_") for name in classes)
    assert not classes["Pbind"].is_ugen
    assert [m.signature() for m in classes["Pbind"].class_methods] == ["new(... pairs)"]


@pytest.mark.integration
@needs_sclang
def test_dump_says_where_the_library_and_help_live(dump: Introspection) -> None:
    platform = dump.platform

    # scorch's own classes stay out: they make a room refuse 0.exit.
    assert "Scorch" not in by_name(dump)
    assert str(CLASSES) not in platform.include_paths
    assert Path(platform.class_library_dir, "Common").is_dir()
    assert Path(platform.help_dir).name == "HelpSource"
    assert platform.user_extension_dir.endswith("SuperCollider/Extensions")


@pytest.mark.integration
@needs_sclang
def test_a_class_file_in_the_extension_directory_is_in_the_dump(dump: Introspection) -> None:
    probe = by_name(dump)["ScorchProbe"]

    assert probe.file.endswith("Extensions/ScorchProbe.sc")
    assert [m.signature() for m in probe.class_methods] == [
        "make(level: 0.25, shape: 'sine', tags: [ 1, 2 ])"]
    assert [m.signature() for m in probe.instance_methods] == ["play(out: 0, ... more)"]
    [extra] = [m for m in by_name(dump)["SinOsc"].class_methods if m.name == "scorchExtra"]
    assert extra.file.endswith("ScorchProbe.sc")


def test_integral_floats_print_as_integers_and_others_as_they_round_trip() -> None:
    assert format_default(440.0, "440.0") == "440"
    assert format_default(0.1, "0.1") == "0.1"
    assert format_default(1e20, "1e+20") == "1e+20"
    assert format_default(True, "true") == "true"
    assert format_default(None, "'sine'") == "'sine'"
    assert format_default(None, None) is None


def test_a_dump_cut_short_is_an_error_not_a_partial_library() -> None:
    whole = json.dumps(raw_dump([]))

    assert parse_dump(whole).classes == ()
    with pytest.raises(IntrospectionError, match="cut short"):
        parse_dump(whole[: len(whole) // 2])
    with pytest.raises(IntrospectionError, match="to the end"):
        parse_dump(json.dumps(raw_dump([], complete=False)))


def test_a_dump_of_an_older_schema_is_refused() -> None:
    old = json.dumps(raw_dump([], schema=DUMP_SCHEMA - 1))

    with pytest.raises(IntrospectionError, match="schema"):
        parse_dump(old)


def test_fingerprint_changes_when_a_default_changes() -> None:
    def dump_with(default: float) -> Introspection:
        raw = raw_dump([
            {"name": "A", "superclasses": ["Object"], "file": "/a.sc", "ugen": False,
             "class_methods": [{"name": "ar", "varargs": False,
                                "args": [["freq", default, str(default)]]}],
             "instance_methods": []}])
        return parse_dump(json.dumps(raw))

    assert dump_with(440.0).fingerprint() == dump_with(440.0).fingerprint()
    assert dump_with(440.0).fingerprint() != dump_with(220.0).fingerprint()


def test_code_for_a_running_interpreter_is_one_expression_with_the_path_quoted() -> None:
    code = dump_code(Path('/tmp/a "b"/classes.json'))

    assert code.startswith("({ |path|")
    assert code.endswith('.value("/tmp/a \\"b\\"/classes.json");')


@pytest.mark.integration
@needs_sclang
def test_dump_code_sent_to_an_interactive_sclang_writes_the_dump(tmp_path: Path) -> None:
    target = tmp_path / "room-classes.json"
    # What a room does: code on stdin, evaluated at \x0c, in an interpreter that stays up.
    stdin = f"{dump_code(target)}\x0c\"scorch-dump-sent\".postln;\x0c0.exit;\x0c".encode()

    run = run_interactive(stdin, tmp_path)

    assert "scorch-dump-sent" in run
    classes = by_name(parse_dump(target.read_text(encoding="utf-8")))
    [ar] = [m for m in classes["SinOsc"].class_methods if m.name == "ar"]
    assert ar.signature() == "ar(freq: 440, phase: 0, mul: 1, add: 0)"


def run_interactive(stdin: bytes, work: Path, timeout: float = 60.0) -> str:
    """Feed ``stdin`` to ``sclang -i scorch`` in its own process group; return its output."""
    env = {**SCLANG_ENV, "XDG_CONFIG_HOME": str(work / "config"),
           "XDG_DATA_HOME": str(work / "data")}
    proc = spawn(["sclang", "-i", "scorch"], env=env, stdin=True, cwd=work)
    try:
        out, _ = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    return out.decode("utf-8", errors="replace")


def test_headless_library_keeps_the_persons_include_and_exclude_paths(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conf = tmp_path / "config" / "SuperCollider" / "sclang_conf.yaml"
    conf.parent.mkdir(parents=True)
    conf.write_text("includePaths:\n  - /q/SomeQuark\nexcludePaths:\n  - /q/Old\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))

    text = class_library_conf(scorch_classes=False).read_text()

    assert text.splitlines()[:4] == ["includePaths:", "  - /q/SomeQuark", "excludePaths:",
                                     "  - /q/Old"]
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "nothing"))
    assert class_library_conf(scorch_classes=False).read_text().splitlines()[:2] == [
        "includePaths: []", "excludePaths: []"]
