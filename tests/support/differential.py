"""Run the same code through a bare sclang and through execute, and compare what each said.

The reference is a plain sclang (no scorch classes) attached to the same
scsynth, fed the code on stdin as the IDE would (``\\x0c``: evaluate and print
``-> value``), with a marker chunk after it. scorch's side is ``execute`` on a
room. Compared: the value, the posted lines (less what the code left running
posted after it returned, which scorch puts in the console), the error's kind,
message, line and character.

Both sides start every run from the same random seed, give what the code left
running the same time before ``CmdPeriod``, and are replaced together when
either hangs or dies, so they hold the same state. What sclang itself still
does differently from run to run (times, counters, state the code grows) is
found by running the bare side twice: such a unit is named nondeterministic,
not counted as a difference; so is a unit on which sclang itself dies or takes
about the time limit. Node ids, temporary SynthDef names and identity hashes
differ between processes and are normalised on both sides.
Used by tests/integration/rooms/test_execute_diff.py (a fast subset) and
bench/rooms/execute_diff.py; the bare side is tests/support/bare_sclang.py.
"""

from __future__ import annotations

import random
import re
import time
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path

from scorch.primitives.sclang.result import ExecuteResult
from scorch.state.events import Kind
from tests.support.bare_sclang import BareRun, BareSclang

HELP = Path("/usr/share/SuperCollider/HelpSource")
#: Units that would reach beyond the test: processes, files, the server's own life,
#: hardware, the class library, windows. They are not run on either side.
UNSAFE = re.compile(
    r"killAll|\.exit\b|recompile|shutdown|unixCmd|systemCmd|runInTerminal|\bFile\b|Pipe"
    r"|\bpipe\b|Archive|Quarks?\b|Document|MIDIClient|MIDIIn|MIDIOut|LinkClock|\bHID\b"
    r"|SerialPort|Window|GUI|View\b|Pen\b|Platform|\.boot\b|\.quit\b|reboot|Server\.local"
    r"|Server\(|Server\.new|Server\.internal|NetAddr|thisProcess|\bloop\b|inf\.do|while\s*\{"
    r"|Buffer\.read|\.load\b|\.openDialog|\.gui|\.plot|\.scope|\.front|\.edit|Help\b"
    r"|\bStethoscope|FreqScope|Recorder|\.record|prepareForRecord|\.dump|dumpBackTrace"
    r"|Env\(.*\)\.test|\.test\b|Tdef|Pdef|Ndef|ProxySpace|~\w+\s*=.*\.play")
#: What scorch's guard refuses in a room (classes/guard/): shell commands, file writes,
#: the class library's paths. A unit that calls one of these may differ from the bare
#: sclang by the guard's refusal, and by nothing else (:func:`_guarded`).
GUARDED = re.compile(
    r"unixCmd|systemCmd|runInTerminal|\bPipe\b|openOS|\bFile\b|SoundFile|\.write\b|writeDefFile"
    r"|\.store\b|\.load\b|[Aa]rchive|recordNRT|\.record\b|prepareForRecord|recordingsDir"
    r"|LanguageConfig|b_write")
#: How the guard's refusal begins (ScorchGuard.refuse).
REFUSED = "scorch refused "
NOISE = [
    (re.compile(r"0x[0-9a-f]{6,}"), "0x?"),
    # SynthDesc:makeMsgFunc names its variable after the desc's identity hash (an address)
    (re.compile(r"\bx[0-9A-F]{8}\b"), "x<hash>"),
    (re.compile(r"gc=\d+"), "gc=?"),
    (re.compile(r"temp__\d+"), "temp__N"),
    (re.compile(r"(Synth|Group|Node|RootNode)\(('[^']*' : )?\d+\)"), r"\1(N)"),
    # the wall clock: seconds since 1970 (Date.rawSeconds prints as few decimals as it
    # needs) and the time of day, which no two runs share
    (re.compile(r"\b1\d{9}(\.\d+)?\b"), "<epoch seconds>"),
    (re.compile(r"\b\d\d:\d\d:\d\d\b"), "<hh:mm:ss>"),
    (re.compile(r"-?\d+\.\d{4,}(e[-+]?\d+)?"), "<float>"),
]


@dataclass(frozen=True)
class Unit:
    """One piece of code, as a person would evaluate it in the IDE."""

    source: str
    """Where it comes from: a help file and its block, or ``case:NAME``."""
    code: str


@dataclass
class Verdict:
    """How the two sides compared on one unit."""

    unit: Unit
    same: bool
    reason: str = ""
    nondeterministic: bool = False
    guarded: bool = False
    """scorch's guard refused what the bare sclang did (a shell command, a file written),
    and the two agreed up to that refusal."""
    bare: str = ""
    scorch: str = ""
    notes: list[str] = field(default_factory=list)


def normalise(text: str) -> str:
    """Text with what differs between clients and runs made the same."""
    for pattern, replacement in NOISE:
        text = pattern.sub(replacement, text)
    return text


def units_of_block(block: str, source: str) -> list[Unit]:
    """Split a code block into what one would evaluate at once: ( ... ) regions, lines."""
    units: list[str] = []
    region: list[str] = []
    for line in block.splitlines():
        if region:
            region.append(line)
            if line.rstrip() == ")":
                units.append("\n".join(region))
                region = []
            continue
        if line.rstrip() == "(":
            region = [line]
        elif line.strip() and not line.strip().startswith("//"):
            units.append(line)
    return [Unit(f"{source}#{i}", code) for i, code in enumerate(units)]


def guarded_units() -> list[Unit]:
    """The runnable help units that call what scorch's guard refuses (every one: few)."""
    return [unit for unit in help_units() if GUARDED.search(unit.code)]


def help_units(limit: int | None = None, seed: int = 18) -> list[Unit]:
    """Units from the code blocks of the installed class help (``examples::`` and the rest)."""
    found: list[Unit] = []
    block = re.compile(r"(?ms)^\s*code::\s*\n(.*?)\n\s*::\s*$")
    for path in sorted((HELP / "Classes").glob("*.schelp")):
        text = path.read_text(errors="replace")
        for index, match in enumerate(block.finditer(text)):
            for unit in units_of_block(match.group(1), f"{path.stem}:{index}"):
                if not UNSAFE.search(unit.code) and "\x0c" not in unit.code \
                        and "\x1b" not in unit.code and len(unit.code) < 4000:
                    found.append(unit)
    if limit is not None and limit < len(found):
        found = random.Random(seed).sample(found, limit)
    return found


#: Hand-made cases: every defect of issue 18, and the value kinds people meet.
CASES = [Unit(f"case:{name}", code) for name, code in [
    ("int", "1 + 1"), ("nil", "nil"), ("symbol", "\\sym"), ("string", '"text"'),
    ("trailing-newline", '"two lines\\n"'), ("collection", "(1..20)"),
    ("event", "(a: 1, b: [2, 3])"), ("float", "1/3"), ("unicode", '"é日本"'),
    ("posts", '"one".postln; "two".postln; 3'), ("partial", '"abc".post; 5'),
    ("arrow-post", '"-> hello".postln; 6'), ("fake-error", '"ERROR: fake".postln; 3'),
    ("tab-lines", "(\n\tvar a = 1;\n\ta + 1\n)"),
    ("fork-post", 'fork { "from-a-routine".postln }; 5'),
    ("fork-error", "fork { 0.01.wait; nil.foo }; 5"),
    ("runtime", "nil.foo"), ("runtime-args", "3.foo(1, 2)"),
    ("primitive", r"[1, 2, 3].put(\a, 1)"), ("protect", r"protect { [1,2,3].put(\a, 1) } { }"),
    ("parse", "(\nvar x = 1;\nx = x + ) 3;\n)"), ("parse-eof", "1 + "),
    ("undefined-var", "xyzzy + 1"), ("no-class", "NoSuchClass.new"),
    ("routine-value", "r = Routine { 0.yield }; r"), ("big", "String.fill(3000, $x).size"),
    ("multiline-value", '"a\\nb\\nc"'), ("printOn", "Env.perc"),
    ("synthdef", r"SynthDef(\x, { Out.ar(0, SinOsc.ar) })"),
]]


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _without(lines: list[str], drop: list[str]) -> list[str]:
    out = list(lines)
    for line in drop:
        if line in out:
            out.remove(line)
    return out


def compare(unit: Unit, bare_runs: list[str], result: ExecuteResult,
            late: list[str]) -> Verdict:
    """Compare one unit's bare output (two runs) with scorch's result and late lines."""
    first = normalise(bare_runs[0])
    stable = all(normalise(run) == first for run in bare_runs[1:])
    late = [normalise(line) for line in late]
    verdict = Verdict(unit, True, bare=bare_runs[0], scorch=_describe(result),
                      nondeterministic=not stable)
    problem = _problem(first, result, late)
    if problem is not None:
        verdict.same = False
        verdict.reason = problem
    return verdict


def _problem(bare: str, result: ExecuteResult, late: list[str]) -> str | None:
    error = result.error
    if error is None:
        assert result.value is not None or result.ok
        value = normalise(result.value or "")
        expect = f"-> {value}\n"
        at = bare.rfind(expect)
        if at < 0:
            return f"value: scorch {value!r}, not found as '-> ...' in sclang's output"
        before = _without(_lines(bare[:at]), late)
        if before and before[-1] == "" and (not result.posted or result.posted[-1] != ""):
            before.pop()  # the newline that ended the last post
        mine = [normalise(line) for line in result.posted]
        return None if before == mine else f"posted: scorch {mine!r}, sclang {before!r}"
    if error.kind == "parse":
        found = re.search(r"line (\d+) char (\d+):", bare)
        position = (int(found.group(1)), int(found.group(2))) if found else (None, None)
        if position != (error.line, error.char):
            return f"parse position: scorch {(error.line, error.char)}, sclang {position}"
        if f"ERROR: {error.message}" not in bare:
            return f"parse message {error.message!r} not in sclang's output"
        return None
    if error.kind == "runtime":
        first = normalise(error.message.split("\n", 1)[0])
        at = bare.find(f"ERROR: {first}")
        if at < 0:
            return f"runtime message {first!r} not in sclang's output"
        before = _without(_lines(bare[:at]), late)
        if before and before[-1] == "":
            before.pop()
        mine = [normalise(line) for line in result.posted]
        return None if before == mine else f"posted: scorch {mine!r}, sclang {before!r}"
    if error.kind == "aborted":
        return None if "\n-> " not in f"\n{bare}" else "scorch aborted, sclang printed a value"
    return f"scorch could not run it: {error.kind}: {error.message}"


def _describe(result: ExecuteResult) -> str:
    if result.error is not None:
        return f"{result.error.kind}: {result.error.message}"
    return f"value {result.value!r}, posted {list(result.posted)!r}"


def _wait_for_sclang(orch: object, room: str, timeout: float = 30.0) -> None:
    """Wait until the room's sclang is up (scorch restarts it after code that timed out)."""
    deadline = time.monotonic() + timeout
    view = orch.views[room]  # type: ignore[attr-defined]
    while view.snapshot.sclang_state != "ready" and time.monotonic() < deadline:
        time.sleep(0.05)


def _sclang_pid(orch: object, room: str) -> int | None:
    return orch.views[room].snapshot.sclang_pid  # type: ignore[attr-defined, no-any-return]


def _wait_for_new_sclang(orch: object, room: str, old: int | None,
                         timeout: float = 30.0) -> None:
    """After a timed-out request: wait until scorch replaced sclang ``old`` and it is up."""
    deadline = time.monotonic() + timeout
    while _sclang_pid(orch, room) in (old, None) and time.monotonic() < deadline:
        time.sleep(0.05)
    _wait_for_sclang(orch, room, max(0.0, deadline - time.monotonic()))


def restart_room_sclang(orch: object, room: str) -> None:
    """Give the room a fresh sclang the way scorch makes one: a request that times out."""
    pid = _sclang_pid(orch, room)
    orch.rooms.execute_one(room, "loop { }", 0.3)  # type: ignore[attr-defined]
    _wait_for_new_sclang(orch, room, pid)


def seed_for(unit: Unit) -> int:
    """The random seed both sides start a unit's run with (the same every run)."""
    return zlib.crc32(unit.source.encode()) & 0x3FFFFFFF


#: Seconds each side is given, after the code returned, for what it left running (both
#: sides the same: a routine that sets a variable a moment later must do so on both).
SETTLE = 0.1


def run_units(orch: object, room: str, bare: BareSclang, units: list[Unit],
              timeout: float = 5.0, progress: bool = False) -> list[Verdict]:
    """Run each unit twice on each side, in step; compare the first runs.

    Both sides run every unit twice, so code that changes state (allocates a
    buffer, adds a function) has the same history on both; the bare side's two
    runs tell what sclang itself does differently from one run to the next.
    Every run starts from the same random seed on both sides (``rand``,
    ``coin``, ``Prand`` give the same numbers); both sides give what the code
    left running the same time before ``CmdPeriod``; and when one side's
    sclang had to be replaced (code that hung it), the other's is replaced
    too: the two interpreters always hold the same variables.
    """
    verdicts: list[Verdict] = []
    for index, unit in enumerate(units):
        if progress and index % 100 == 0:
            print(f"  {index}/{len(units)} units", flush=True)
        if verdicts and not bare.alive():  # it died a moment after the last unit's end
            status = bare.exit_status()
            verdicts[-1].notes.append(f"bare sclang died after it (exit status {status})")
            if not verdicts[-1].same:
                verdicts[-1].nondeterministic = True
                verdicts[-1].reason = (f"sclang itself died on it (exit status {status}), "
                                       f"after it returned; {verdicts[-1].reason}")
            bare.restart()
            restart_room_sclang(orch, room)
        runs: list[BareRun] = []
        results: list[tuple[ExecuteResult, list[str]]] = []
        notes: list[str] = []
        since = orch.views[room].events.mark()  # type: ignore[attr-defined]
        seed = f"thisThread.randSeed = {seed_for(unit)}"
        for _ in range(2):
            run = bare.evaluate(unit.code, timeout, prelude=seed)
            runs.append(run)
            bare_fresh = not run.finished
            if run.finished:
                time.sleep(SETTLE)
                bare_fresh = bare.run("CmdPeriod.run; 1", timeout) is None
            if bare_fresh:  # stuck in the code (a loop) or in what it left running, or dead
                status = bare.exit_status()
                notes.append("bare sclang " + ("hung" if status is None
                                               else f"died (exit status {status})"))
                if status is not None and run.finished:  # died in what the code left running
                    runs[-1] = replace(run, died=True)
                bare.restart()
            result, late, scorch_fresh = _scorch_run(orch, room, unit.code, seed, timeout)
            if scorch_fresh:
                notes.append(f"scorch's sclang restarted ({_kind(result) or 'after the code'})")
            if bare_fresh and not scorch_fresh:
                restart_room_sclang(orch, room)
            elif scorch_fresh and not bare_fresh:
                bare.restart()
            results.append((result, late))
        notes += [f"scorch: {event.message}"  # a crash is sclang's, or scorch's to explain
                  for event in orch.rooms.events(room, since)  # type: ignore[attr-defined]
                  if event.kind == Kind.CRASHED]
        verdicts.append(_judge(unit, runs, results, timeout))
        verdicts[-1].notes += notes
    return verdicts


def _scorch_run(orch: object, room: str, code: str, seed: str,
                timeout: float) -> tuple[ExecuteResult, list[str], bool]:
    """One run on scorch's side: its result, what it left running posted, and whether
    scorch's sclang was replaced meanwhile (it timed out, or died)."""
    _wait_for_sclang(orch, room)
    pid = _sclang_pid(orch, room)
    execute = orch.rooms.execute_one  # type: ignore[attr-defined]
    execute(room, f"{seed}; nil", timeout)
    result: ExecuteResult = execute(room, code, timeout)
    time.sleep(SETTLE)  # what the code left running posts now, into the console
    notes_of = {f"after #{result.request}", f"error after #{result.request}"}
    late = [line.text for line in orch.rooms.console(  # type: ignore[attr-defined]
        room, since=result.console_since or 0) if line.note in notes_of]
    stop = execute(room, "CmdPeriod.run; 1", timeout)
    if {_kind(result), _kind(stop)} & {"timeout", "interrupted", "unavailable"}:
        _wait_for_new_sclang(orch, room, pid)  # being replaced: it was stuck, or died
    else:
        _wait_for_sclang(orch, room)
    return result, late, _sclang_pid(orch, room) != pid


def _judge(unit: Unit, runs: list[BareRun], results: list[tuple[ExecuteResult, list[str]]],
           timeout: float) -> Verdict:
    """The verdict on one unit from both sides' two runs."""
    result = results[0][0]
    for run, (mine, _) in zip(runs, results, strict=True):
        # sclang done, scorch out of time: a real difference, unless the code takes about
        # the time limit in sclang itself (then which side makes it is luck)
        if run.finished and _kind(mine) == "timeout":
            if run.elapsed >= timeout / 2:
                return Verdict(unit, True, f"sclang itself takes about the time limit "
                               f"({run.elapsed:.2f} s of {timeout:g})", nondeterministic=True,
                               bare=run.text, scorch=_describe(mine))
            return Verdict(unit, False, f"scorch timed out; sclang took {run.elapsed:.2f} s",
                           bare=run.text, scorch=_describe(mine))
    if not runs[0].finished and not runs[0].died and _kind(result) == "timeout":
        return Verdict(unit, True, "neither side finished in time", bare=runs[0].text,
                       scorch=_describe(result))
    # Each run against its counterpart: code that changes state as it runs (a counter, a
    # buffer) gives different but certain answers run after run, and both must agree.
    # What the bare side printed before it hung or died (a routine the code left running
    # got stuck before sclang read the next chunk) is compared all the same.
    pairs = [compare(unit, [run.text], mine, late_lines)
             for run, (mine, late_lines) in zip(runs, results, strict=True)]
    failing = next((v for v in pairs if not v.same), None)
    verdict = pairs[0] if failing is None else failing
    if failing is pairs[1]:
        verdict.reason = f"second run: {verdict.reason}"
    refusal = _guarded(unit, runs, results) if failing is not None else None
    if refusal is not None:
        return replace(verdict, same=False, guarded=True, nondeterministic=False,
                       reason=refusal.removeprefix("WARNING: ")[:300])
    # scorch differs, and sclang's own two runs differ too: sclang itself varies
    verdict.nondeterministic = failing is not None and (
        normalise(runs[0].text) != normalise(runs[1].text))
    if not verdict.same and not runs[0].finished and result.elapsed >= timeout / 2:
        verdict.nondeterministic = True
        verdict.reason = (f"sclang itself takes about the time limit (scorch took "
                          f"{result.elapsed:.2f} s of {timeout:g}); {verdict.reason}")
    elif failing is not None and any(run.died for run in runs):
        verdict.nondeterministic = True
        verdict.reason = f"sclang itself died on it; {verdict.reason}"
    elif failing is not None and runs[0].finished != runs[1].finished:
        verdict.nondeterministic = True
        verdict.reason = ("sclang itself finished one of its two runs and not the other (slow "
                          f"code near the time limit, or a race with a routine); {verdict.reason}")
    elif not all(run.finished for run in runs):
        verdict.notes.append("compared with what the bare sclang printed before it hung")
    return verdict


def _guarded(unit: Unit, runs: list[BareRun], results: list[tuple[ExecuteResult, list[str]]]
             ) -> str | None:
    """Whether the one difference is the guard's: each of scorch's runs refused a call the
    unit makes to what the guard closes (the guard posts its refusal, which an error the
    class library makes next may hide: SynthDef:store's cleanup), having posted what the
    bare sclang posted before it, and the bare sclang knows nothing of a refusal. Returns
    the first run's refusal, or None."""
    if not GUARDED.search(unit.code):
        return None
    refusals = []
    for run, (mine, _) in zip(runs, results, strict=True):
        warning = next((i for i, line in enumerate(mine.posted)
                        if line.startswith(f"WARNING: {REFUSED}")), None)
        if mine.error is None or warning is None or REFUSED in run.text:
            return None
        posted = [normalise(line) for line in mine.posted[:warning]]
        if _lines(normalise(run.text))[:len(posted)] != posted:
            return None
        refusals.append(mine.posted[warning])
    return refusals[0] if refusals else None


def _kind(result: ExecuteResult) -> str | None:
    return result.error.kind if result.error is not None else None
