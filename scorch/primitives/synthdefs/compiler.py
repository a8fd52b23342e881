"""Compile SynthDef files with one headless ``sclang`` run: bytes and metadata as JSON.

Each changed ``synthdefs/NAME.scd`` is evaluated inside ``try`` by a generated
script that writes its ``.scsyndef`` and its metadata (description, category,
specs, descriptions) for :mod:`scorch.primitives.synthdefs.library` to check and
cache. A file that fails gives a record with its error, not an exception.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from scorch.primitives.sclang import SCLANG_ENV
from scorch.primitives.system import spawn


def _sc_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# The generated script: for each file, compile its text (nil on a syntax error),
# evaluate it inside try, and write <i>.json (metadata) and <i>.scsyndef.
# Markers on stdout let Python pick up what sclang printed about a failing file.
_SCRIPT_HEAD = r"""
var esc, num, spec, one;
esc = { |s|
    var r = String.new;
    s.asString.do { |c|
        r = r ++ case
            { c == $" } { "\\\"" }
            { c == $\\ } { "\\\\" }
            { c.ascii.inclusivelyBetween(0, 31) } { "\\u" ++ c.ascii.asHexString(4) }
            { c.asString };
    };
    "\"" ++ r ++ "\""
};
num = { |x|
    case
        { x.isNil } { "null" }
        { x.isKindOf(SimpleNumber) and: { x.isNaN.not } and: { x.abs != inf } }
            { x.asFloat.asString }
        { x.isKindOf(SequenceableCollection) and: { x.isString.not } }
            { "[" ++ x.collect(num).join(",") ++ "]" }
        { esc.(x.asString) }
};
spec = { |v|
    var s = if(v.respondsTo(\asSpec)) { v.asSpec };
    if(s.isKindOf(ControlSpec)) {
        "{\"minval\":" ++ num.(s.minval) ++ ",\"maxval\":" ++ num.(s.maxval)
        ++ ",\"warp\":" ++ esc.(s.warp.asSpecifier) ++ ",\"default\":" ++ num.(s.default)
        ++ ",\"step\":" ++ num.(s.step) ++ ",\"units\":" ++ esc.(s.units) ++ "}"
    } { esc.("not a ControlSpec: " ++ v.asCompileString) }
};
one = { |index, path, outdir|
    var fn, def, md, full, json, dict, text;
    ("@@scorch-begin " ++ index).postln;
    fn = thisProcess.interpreter.compile(File.readAllString(path));
    if(fn.isNil) { "ERROR: the file does not parse".postln } {
        try {
            def = fn.value;
            if(def.isKindOf(SynthDef).not) {
                ("ERROR: the file evaluates to " ++ def.class.name ++ ", not a SynthDef").postln
            } {
                md = def.metadata ? ();
                // The metadata as sclang reads it back into the room's SynthDesc
                // (scorch/primitives/synthdefs/descs.py), its specs made ControlSpecs.
                full = md.copy;
                if(md[\specs].isKindOf(Dictionary)) {
                    full[\specs] = md[\specs].collect { |v|
                        if(v.respondsTo(\asSpec)) { v.asSpec ? v } { v } }
                };
                dict = { |d, f|
                    if(d.isKindOf(Dictionary)) {
                        "{" ++ d.keys.asArray.sort.collect { |k|
                            esc.(k) ++ ":" ++ f.(d[k])
                        }.join(",") ++ "}"
                    } { "null" }
                };
                text = { |x| if(x.isNil) { "null" } { esc.(x) } };
                json = "{\"name\":" ++ esc.(def.name)
                    ++ ",\"description\":" ++ text.(md[\description])
                    ++ ",\"category\":" ++ text.(md[\category])
                    ++ ",\"specs\":" ++ dict.(md[\specs], spec)
                    ++ ",\"descriptions\":" ++ dict.(md[\descriptions], esc)
                    ++ ",\"metadata\":" ++ esc.(full.asCompileString)
                    ++ ",\"controls\":[" ++ def.allControlNames.collect { |c|
                        "{\"name\":" ++ esc.(c.name) ++ ",\"default\":" ++ num.(c.defaultValue)
                        ++ ",\"rate\":" ++ esc.(c.rate) ++ "}"
                    }.join(",") ++ "]}";
                File.use(outdir +/+ index ++ ".scsyndef", "wb", { |f| f.putAll(def.asBytes) });
                File.use(outdir +/+ index ++ ".json", "w", { |f| f.write(json) });
            }
        } { |err| err.errorString.postln };
    };
    ("@@scorch-end " ++ index).postln;
};
"""


def compile_with_sclang(
    paths: list[Path], cache_dir: Path, sclang: str, timeout: float
) -> dict[Path, dict[str, Any]]:
    """Compile ``paths`` in one headless sclang run; return one record per path."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".compile-") as work_str:
        work = Path(work_str)
        lines = ["(", _SCRIPT_HEAD]
        for index, path in enumerate(paths):
            source = _sc_string(str(path.resolve()))
            lines.append(f"one.({index}, {source}, {_sc_string(work_str)});")
        lines += ["0.exit;", ")"]
        script = work / "compile.scd"
        script.write_text("\n".join(lines), encoding="utf-8")
        # A private config and data home: the user's startup.scd (which may boot a
        # server) and sclang_conf.yaml stay out of a pure compile.
        env = {**SCLANG_ENV, "XDG_CONFIG_HOME": str(work / "config"),
               "XDG_DATA_HOME": str(work / "data")}
        try:
            output, timed_out = _run(
                [sclang, str(script)], env=env, cwd=work, timeout=timeout
            )
        except OSError as err:
            reason = f"cannot run sclang ({sclang}): {err}"
            return {path: {"error": reason, "transient": True} for path in paths}
        sections, ended = _sections(output)
        records: dict[Path, dict[str, Any]] = {}
        for index, path in enumerate(paths):
            meta = work / f"{index}.json"
            data = work / f"{index}.scsyndef"
            if meta.exists() and data.exists():
                try:
                    raw = json.loads(meta.read_text(encoding="utf-8"))
                except ValueError as err:
                    records[path] = {"error": f"unreadable metadata from sclang: {err}"}
                    continue
                records[path] = {
                    "raw": raw,
                    "scsyndef": base64.b64encode(data.read_bytes()).decode("ascii"),
                }
            elif index in ended:
                records[path] = {"error": _summarise(sections[index])}
            elif timed_out:
                reason = f"sclang timed out after {timeout:g} s"
                records[path] = {"error": reason, "transient": True}
            else:
                tail = _summarise(sections.get(index, output.splitlines()[-20:]))
                records[path] = {"error": f"sclang stopped before finishing it: {tail}",
                                 "transient": True}
        return records


def _run(argv: list[str], *, env: dict[str, str], cwd: Path, timeout: float) -> tuple[str, bool]:
    """Run ``argv`` in its own process group; kill that group if it overruns."""
    proc = spawn(argv, env=env, cwd=cwd)
    try:
        out, _ = proc.communicate(timeout=timeout)
        return out.decode("utf-8", errors="replace"), False
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return out.decode("utf-8", errors="replace"), True


def _sections(output: str) -> tuple[dict[int, list[str]], set[int]]:
    """Split sclang's output into the lines printed for each file, and the files it finished."""
    sections: dict[int, list[str]] = {}
    ended: set[int] = set()
    current: int | None = None
    for line in output.splitlines():
        if line.startswith("@@scorch-begin "):
            current = int(line.split()[1])
            sections[current] = []
        elif line.startswith("@@scorch-end "):
            ended.add(int(line.split()[1]))
            current = None
        elif current is not None:
            sections[current].append(line)
    return sections, ended


def _summarise(lines: list[str]) -> str:
    """Keep the lines that say what went wrong, joined into one reason."""
    noise = {"in interpreted text", "ERROR: Command line parse failed"}
    keep = [line.strip() for line in lines
            if line.strip() and line.strip() not in noise and not set(line.strip()) <= {"-", "^"}]
    errors = [i for i, line in enumerate(keep) if line.startswith("ERROR")]
    if errors:
        keep = keep[errors[0] :]
        # A runtime error's receiver and call stack say little about the .scd file.
        for marker in ("RECEIVER:", "PROTECTED CALL STACK:", "CALL STACK:"):
            keep = keep[: _index(keep, marker)]
    text = " | ".join(keep)
    return text[:600] if text else "sclang printed nothing about it"


def _index(lines: list[str], marker: str) -> int:
    for i, line in enumerate(lines):
        if line.startswith(marker):
            return i
    return len(lines)
