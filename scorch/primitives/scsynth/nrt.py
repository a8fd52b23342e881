"""Non-realtime rendering: a score of timed OSC bundles, played by ``scsynth -N`` into a file.

A score file is what sclang's ``Score.writeOSCFile`` writes: each bundle
prefixed by its length (int32), in time order, its time tag counting seconds
from the start. scsynth renders until the last bundle's time, so a score ends
with a bundle at the length wanted. An sclang ``Score`` is turned into that file
by a headless sclang run (:func:`score_from_code`).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import struct
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from scorch.errors import CaptureError, InvalidRequest
from scorch.primitives.osc import encode_bundle, encode_message
from scorch.primitives.sclang import SCLANG_ENV, guard_library_conf
from scorch.primitives.system import spawn

#: libsndfile's header and sample format names per file format (FLAC holds no floats).
NRT_FORMATS = {"wav": ("WAV", "float"), "aiff": ("AIFF", "float"), "flac": ("FLAC", "int24")}


@dataclass(frozen=True)
class Bundle:
    """One timed bundle of a score: its time in seconds and its encoded bytes."""

    time: float
    data: bytes


def bundle(time: float, *messages: bytes) -> Bundle:
    """A bundle of encoded messages at ``time`` seconds."""
    return Bundle(time, encode_bundle(round(time * 2**32), list(messages)))


def end_marker(time: float) -> Bundle:
    """A bundle that does nothing at ``time``: scsynth renders until the last bundle."""
    return bundle(time, encode_message("/c_set", 0, 0))


def encode_score(bundles: Sequence[Bundle]) -> bytes:
    """The score file's bytes, bundles sorted by time (stable: same-time order is kept)."""
    ordered = sorted(bundles, key=lambda b: b.time)
    return b"".join(struct.pack(">i", len(b.data)) + b.data for b in ordered)


def decode_score(data: bytes) -> list[Bundle]:
    """The bundles of a score file; InvalidRequest if it is not one."""
    bundles, position = [], 0
    while position < len(data):
        if position + 4 > len(data):
            raise InvalidRequest("the score file ends inside a bundle's length")
        (size,) = struct.unpack_from(">i", data, position)
        body = data[position + 4 : position + 4 + size]
        if size < 16 or len(body) < size or not body.startswith(b"#bundle\x00"):
            raise InvalidRequest(f"the score holds something that is not an OSC bundle at "
                                 f"byte {position}")
        (tag,) = struct.unpack_from(">Q", body, 8)
        bundles.append(Bundle(tag / 2**32, body))
        position += 4 + size
    return bundles


def render(score: Path, out: Path, *, sample_rate: int, channels: int, fmt: str,
           timeout: float) -> str:
    """Render ``score`` into ``out`` with ``scsynth -N``; return what scsynth printed."""
    header, sample = NRT_FORMATS[fmt]
    argv = ["scsynth", "-D", "0", "-i", "0", "-o", str(channels), "-N", str(score), "_",
            str(out), str(sample_rate), header, sample]
    output, code, timed_out = _run(argv, env={}, cwd=score.parent, timeout=timeout)
    if timed_out:
        raise CaptureError(f"scsynth -N did not finish the render within {timeout:g} s")
    if code != 0 or not out.exists():
        tail = " | ".join(output.strip().splitlines()[-6:])
        raise CaptureError(f"scsynth -N failed (exit {code}): {tail}")
    return output


_SCORE_SCRIPT = r"""
(
var fn, score, ok = false;
ScorchGuard.activate;  // the code came through a front end: sclang's ways out are closed
fn = thisProcess.interpreter.compile(File.readAllString(%(code)s));
if(fn.isNil) { "@@scorch-error the code does not parse (see the lines above)".postln } {
    try {
        score = fn.value;
        if(score.isKindOf(Score).not) { score = Score(score) };
        score.sort;
        score.writeOSCFile(%(out)s);
        ("@@scorch-end " ++ score.endTime).postln;
        ok = true;
    } { |err| ("@@scorch-error " ++ err.errorString).postln };
};
(if(ok) { 0 } { 1 }).exit;
)
"""
_ERROR_LINE = re.compile(r"^(ERROR|@@scorch-error|\s+line \d+ char \d+)")


def score_from_code(code: str, out: Path, timeout: float,
                    guard: Mapping[str, str] | None = None) -> float:
    """Evaluate sclang ``code`` (a Score, or an array of ``[time, [cmd...]...]`` events)
    in a headless sclang and write its score file to ``out``; return its end time.

    ``guard``: the environment naming the guard's file (``sclang.guard.guard_env``), which
    the code runs under as in a room (none: everything the guard closes is refused).
    """
    with tempfile.TemporaryDirectory(prefix="scorch-score-") as work_dir:
        work = Path(work_dir)
        source = work / "score.scd"
        source.write_text(code, encoding="utf-8")
        script = work / "write.scd"
        script.write_text(_SCORE_SCRIPT % {"code": _sc_string(str(source)),
                                           "out": _sc_string(str(out))}, encoding="utf-8")
        env = {**SCLANG_ENV, "XDG_CONFIG_HOME": str(work / "config"),
               "XDG_DATA_HOME": str(work / "data"), **(guard or {})}
        output, _, timed_out = _run(["sclang", "-l", str(guard_library_conf()), str(script)],
                                    env=env, cwd=work, timeout=timeout)
    if timed_out:
        raise InvalidRequest(f"the score code did not finish within {timeout:g} s")
    ended = re.search(r"^@@scorch-end (\S+)", output, re.MULTILINE)
    if ended is None or not out.exists():
        problems = [line.strip() for line in output.splitlines() if _ERROR_LINE.match(line)]
        detail = " | ".join(problems[-6:]) or output.strip()[-400:]
        raise InvalidRequest(f"the score code failed: {detail.replace('@@scorch-error ', '')}")
    try:
        return float(ended.group(1))
    except ValueError:
        return 0.0


def _sc_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _run(argv: list[str], *, env: dict[str, str], cwd: Path,
         timeout: float) -> tuple[str, int, bool]:
    """Run ``argv`` in its own process group; kill the group if it overruns."""
    try:
        proc = spawn(argv, env=env, cwd=cwd)
    except OSError as err:
        raise CaptureError(f"cannot run {argv[0]}: {err}") from err
    try:
        out, _ = proc.communicate(timeout=timeout)
        return out.decode("utf-8", errors="replace"), proc.returncode, False
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return out.decode("utf-8", errors="replace"), proc.returncode, True
