"""Dump the class library sclang is running, with real argument names and defaults.

Help files document about 900 classes; the running library has every class,
including quarks, extensions and a person's own ``.sc`` files, with the
argument names and default values sclang itself will use. :data:`DUMP_FUNCTION`
is sclang code (a function of one path) that writes them as JSON. It runs in a
fresh headless sclang (:func:`introspect`) or, sent as code by
:func:`dump_code`, inside an interpreter that is already running (a room's).

sclang cannot define a class at runtime: a class exists only once its ``.sc``
file is in a compiled directory (an ``Extensions`` folder, or an include path)
and the library has been recompiled, which restarts that interpreter. So "a
class defined at runtime" means a class file added followed by a recompile;
a dump taken after the recompile has it. SynthDefs and functions, on the other
hand, are made at runtime all the time, and are not classes.

Defaults come from ``Method.prototypeFrame``: numbers as JSON numbers (17
significant digits), anything else as its ``asCompileString``. The dump also
says where this sclang's library and help live (:class:`Platform`), so a later
check can tell whether anything there changed without starting sclang again.
"""

from __future__ import annotations

import hashlib
import json
import math
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scorch.errors import IntrospectionError
from scorch.knowledge.headless import run_sclang
from scorch.primitives.sclang import sc_string

#: Bump when the JSON the dump writes changes shape.
DUMP_SCHEMA = 2

# One class per line of JSON is written as it goes, so a library of thousands of
# classes never builds one huge sclang String. The last key, "complete", tells a
# reader that the file was written to the end.
DUMP_FUNCTION = r"""{ |path|
    var file, esc, num, value, method, methods, started = Main.elapsedTime, count = 0;
    esc = { |s|
        var r;
        s = s.asString;
        if(s.any { |c| c == $" or: { c == $\\ } or: { c.ascii < 32 } }) {
            r = String.new;
            s.do { |c|
                r = r ++ case
                    { c == $" } { "\\\"" }
                    { c == $\\ } { "\\\\" }
                    { c.ascii.inclusivelyBetween(0, 31) } { "\\u" ++ c.ascii.asHexString(4) }
                    { c.asString };
            };
            "\"" ++ r ++ "\""
        } { "\"" ++ s ++ "\"" }
    };
    num = { |v|
        case
            { v.isKindOf(Float) } {
                if(v.isNaN or: { v.abs == inf }) { "null" } { v.asStringPrec(17) }
            }
            { v.isKindOf(Integer) } { v.asString }
            { v === true or: { v === false } } { v.asString }
            { "null" }
    };
    value = { |v| if(v.isNil) { "null" } { esc.(v.asCompileString) } };
    method = { |m, classFile|
        var names = m.argNames ? #[], frame = m.prototypeFrame ? #[];
        var own = m.filenameSymbol.asString;
        "{\"name\":" ++ esc.(m.name)
        ++ ",\"varargs\":" ++ (m.varArgs == true)
        ++ (if(own != classFile) { ",\"file\":" ++ esc.(own) } { "" })
        ++ ",\"args\":[" ++ names.drop(1).collect { |n, i|
            var v = frame[i + 1];
            "[" ++ esc.(n) ++ "," ++ num.(v) ++ "," ++ value.(v) ++ "]"
        }.join(",") ++ "]}"
    };
    methods = { |list, classFile|
        "[" ++ (list ? #[]).collect { |m| method.(m, classFile) }.join(",") ++ "]"
    };
    file = File(path, "w");
    if(file.isOpen.not) { ("scorch introspection: cannot write " ++ path).error } {
        file.write("{\"schema\":" ++ SCHEMA ++ ",\"version\":" ++ esc.(Main.version)
            ++ ",\"platform\":{\"class_library_dir\":" ++ esc.(Platform.classLibraryDir)
            ++ ",\"system_extension_dir\":" ++ esc.(Platform.systemExtensionDir)
            ++ ",\"user_extension_dir\":" ++ esc.(Platform.userExtensionDir)
            ++ ",\"help_dir\":" ++ esc.(SCDoc.helpSourceDir ? "")
            ++ ",\"include_paths\":[" ++ LanguageConfig.includePaths.collect(esc).join(",")
            ++ "],\"exclude_paths\":[" ++ LanguageConfig.excludePaths.collect(esc).join(",")
            ++ "]},\"classes\":[\n");
        Class.allClasses.do { |cls|
            var classFile, supers;
            if(cls.isMetaClass.not) {
                classFile = cls.filenameSymbol.asString;
                supers = cls.superclasses ? #[];
                if(count > 0) { file.write(",\n") };
                file.write("{\"name\":" ++ esc.(cls.name)
                    ++ ",\"superclasses\":[" ++ supers.collect { |c| esc.(c.name) }.join(",")
                    ++ "],\"file\":" ++ esc.(classFile)
                    ++ ",\"ugen\":" ++ (cls === UGen or: { supers.includes(UGen) })
                    ++ ",\"class_methods\":" ++ methods.(cls.class.methods, classFile)
                    ++ ",\"instance_methods\":" ++ methods.(cls.methods, classFile) ++ "}");
                count = count + 1;
            };
        };
        file.write("\n],\"seconds\":" ++ num.(Main.elapsedTime - started)
            ++ ",\"complete\":true}\n");
        file.close;
    };
    count
}""".replace("SCHEMA", str(DUMP_SCHEMA))


@dataclass(frozen=True)
class ArgRecord:
    """One argument of a method as sclang compiled it."""

    name: str
    default: float | int | bool | None
    """The default when it is a number or a boolean, else None."""
    default_code: str | None
    """The default as sclang source (``440.0``, ``'sine'``, ``[1, 2]``); None: no default."""

    def display(self) -> str:
        """Return ``name: default``, or the bare name when there is no default."""
        text = format_default(self.default, self.default_code)
        return self.name if text is None else f"{self.name}: {text}"


@dataclass(frozen=True)
class MethodRecord:
    """One method of a class (not inherited) as sclang compiled it."""

    name: str
    args: tuple[ArgRecord, ...]
    varargs: bool
    """The last argument takes the rest (``... args``)."""
    file: str
    """Where the method is defined when that is not its class's file (an extension), else ''."""

    def signature(self) -> str:
        """Return ``ar(freq: 440, phase: 0, mul: 1, add: 0)``."""
        parts = [a.display() for a in self.args]
        if self.varargs and parts:
            parts[-1] = "... " + self.args[-1].name
        return f"{self.name}({', '.join(parts)})"


@dataclass(frozen=True)
class ClassRecord:
    """One class of the running library."""

    name: str
    superclasses: tuple[str, ...]
    """Nearest first, ending with Object."""
    file: str
    is_ugen: bool
    class_methods: tuple[MethodRecord, ...]
    instance_methods: tuple[MethodRecord, ...]


@dataclass(frozen=True)
class Platform:
    """Where the sclang that wrote a dump finds its class library and its help."""

    class_library_dir: str
    system_extension_dir: str
    user_extension_dir: str
    help_dir: str
    """SCDoc's HelpSource folder (it may not exist: a package without the help)."""
    include_paths: tuple[str, ...]
    """Folders ``sclang_conf.yaml`` adds to the library (quarks, scorch's own classes)."""
    exclude_paths: tuple[str, ...]

    def class_dirs(self) -> tuple[str, ...]:
        """Return every folder whose ``.sc`` files make up the library, in sclang's order."""
        return (self.class_library_dir, self.system_extension_dir, self.user_extension_dir,
                *self.include_paths)


@dataclass(frozen=True)
class Introspection:
    """A dump of the running class library."""

    version: str
    classes: tuple[ClassRecord, ...]
    seconds: float
    """How long sclang took to write the dump (inside sclang, without its startup)."""
    platform: Platform

    def fingerprint(self) -> str:
        """Return a hash that changes when any class, method, argument or default does."""
        return classes_fingerprint(self.classes)


def format_default(value: float | int | bool | None, code: str | None) -> str | None:
    """Return a default as a person would write it: ``440`` for 440.0, ``0.1``, ``'sine'``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    return code


def classes_fingerprint(classes: tuple[ClassRecord, ...] | list[ClassRecord]) -> str:
    """Return a hash of the classes' names, files and method signatures."""
    digest = hashlib.sha256(f"scorch-classes-v{DUMP_SCHEMA}".encode())
    for cls in sorted(classes, key=lambda c: c.name):
        digest.update(f"\0{cls.name}\0{cls.file}\0{','.join(cls.superclasses)}".encode())
        for kind, methods in (("*", cls.class_methods), ("-", cls.instance_methods)):
            for m in methods:
                digest.update(f"\0{kind}{m.signature()}{m.file}".encode())
    return digest.hexdigest()[:32]


def dump_code(path: str | Path) -> str:
    """Return sclang code that writes the dump to ``path`` in a running interpreter."""
    return f"({DUMP_FUNCTION}).value({sc_string(str(path))});"


def parse_dump(text: str) -> Introspection:
    """Read the JSON the dump wrote; raise IntrospectionError if it is cut short or wrong."""
    try:
        data = json.loads(text)
    except ValueError as err:
        raise IntrospectionError(f"the dump is not valid JSON (cut short?): {err}") from err
    if not isinstance(data, dict) or data.get("complete") is not True:
        raise IntrospectionError("the dump was not written to the end")
    if data.get("schema") != DUMP_SCHEMA:
        raise IntrospectionError(f"dump schema {data.get('schema')!r}, expected {DUMP_SCHEMA}")
    try:
        classes = tuple(_class(c) for c in data["classes"])
        return Introspection(str(data["version"]), classes, float(data.get("seconds") or 0.0),
                             _platform(data["platform"]))
    except (KeyError, TypeError, ValueError) as err:
        raise IntrospectionError(f"the dump has an unexpected shape: {err!r}") from err


def introspect(
    *, timeout: float = 60.0, sclang: str = "sclang", data_home: Path | None = None
) -> Introspection:
    """Dump the class library of a fresh headless sclang (no server is booted).

    The library is the rooms' (:func:`~scorch.knowledge.headless.run_sclang`).
    ``data_home`` replaces ``XDG_DATA_HOME``; classes in
    ``data_home/SuperCollider/Extensions`` are compiled into the library and so
    appear in the dump. Raises IntrospectionError when there is no dump.
    """
    with tempfile.TemporaryDirectory(prefix="scorch-introspect-") as work:
        target = Path(work) / "classes.json"
        script = f"{dump_code(target)}\n0.exit;\n"
        try:
            run = run_sclang(script, timeout=timeout, sclang=sclang, data_home=data_home)
        except OSError as err:
            raise IntrospectionError(f"cannot run sclang ({sclang}): {err}") from err
        if run.timed_out:
            raise IntrospectionError(f"sclang did not finish the dump within {timeout:g} s")
        try:
            text = target.read_text(encoding="utf-8")
        except OSError as err:
            tail = "\n".join(run.output.splitlines()[-15:])
            raise IntrospectionError(f"sclang wrote no dump ({err.strerror}):\n{tail}") from err
        return parse_dump(text)


def _platform(raw: dict[str, Any]) -> Platform:
    return Platform(
        class_library_dir=str(raw["class_library_dir"]),
        system_extension_dir=str(raw["system_extension_dir"]),
        user_extension_dir=str(raw["user_extension_dir"]), help_dir=str(raw["help_dir"]),
        include_paths=tuple(str(p) for p in raw["include_paths"]),
        exclude_paths=tuple(str(p) for p in raw["exclude_paths"]))


def _class(raw: dict[str, Any]) -> ClassRecord:
    return ClassRecord(
        name=str(raw["name"]), superclasses=tuple(str(s) for s in raw["superclasses"]),
        file=str(raw["file"]), is_ugen=bool(raw["ugen"]),
        class_methods=tuple(_method(m) for m in raw["class_methods"]),
        instance_methods=tuple(_method(m) for m in raw["instance_methods"]),
    )


def _method(raw: dict[str, Any]) -> MethodRecord:
    varargs = bool(raw["varargs"])
    args = [ArgRecord(str(n), _number(v), None if c is None else str(c)) for n, v, c in raw["args"]]
    if varargs and args:
        # The frame holds an empty array for "... rest": not a default anyone passes.
        args[-1] = ArgRecord(args[-1].name, None, None)
    return MethodRecord(name=str(raw["name"]), args=tuple(args), varargs=varargs,
                        file=str(raw.get("file", "")))


def _number(value: Any) -> float | int | bool | None:
    if isinstance(value, bool | int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    return None
