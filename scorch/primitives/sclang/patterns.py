"""The pattern records ``ScorchPatterns.sc`` sends, and the code that restores patterns.

sclang reports every Pdef, Pbindef, Tdef and Ndef it defines, plays, stops or
changes as a ``pattern`` record (``pattern-gone`` when it has no source any more);
scorch keeps them in the desired state and, after sclang restarts, sends
:func:`restore_code` to define them again and resume those that played on the
next bar. Pure: no process, no thread.
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("Pdef", "Pbindef", "Tdef", "Ndef")
#: How the text of a record was made: the source's own compile string, the code of the
#: request that defined it, or (changed outside any request) a compile string that does
#: not compile back to the same source.
HOWS = ("source", "code", "approx")
#: Whether it is muted: "" (no), "muted", or "solo" (the one the others are muted for).
MUTES = ("", "muted", "solo")


@dataclass(frozen=True)
class PatternRecord:
    """One pattern or proxy as sclang reported it."""

    kind: str
    """Pdef, Pbindef, Tdef or Ndef."""
    name: str
    playing: bool
    """It plays now (False once its stream has ended: see :attr:`finished`)."""
    quant: str
    """The proxy's quant as sclang prints it (``1.0``, ``nil``, ``[ 4, 0.5 ]``): where a new
    source given by code lands."""
    how: str
    """One of :data:`HOWS`."""
    text: str
    """The code that defines it again."""
    mute: str = ""
    """One of :data:`MUTES` (a restore mutes it again)."""
    finished: bool = False
    """A Pdef or Tdef that played to the end of its stream: JITLib still calls it playing,
    but no event is coming (a new source, or play, starts it again)."""
    play_quant: str = "nil"
    """The grid it was last played on, as sclang prints it (``4``; ``nil``: never, or an
    Ndef)."""

    @property
    def quant_in_force(self) -> str:
        """The grid its events keep to: the one it was played on while it plays, else its own."""
        return self.play_quant if self.playing and self.play_quant != "nil" else self.quant

    @property
    def key(self) -> str:
        """Its key in the desired state: Pdef and Pbindef share one namespace in sclang."""
        return pattern_key(self.kind, self.name)


def pattern_key(kind: str, name: str) -> str:
    """``Pdef acc``, ``Ndef drone``: a Pbindef is a Pdef to sclang."""
    return f"{'Pdef' if kind == 'Pbindef' else kind} {name}"


def parse_pattern(payload: str) -> PatternRecord:
    """Read a ``pattern`` record's payload; ValueError when it does not fit."""
    head, sep, text = payload.partition("\n")
    fields = head.split("\t", 6)
    if not sep or len(fields) != 7:
        raise ValueError(f"not a pattern record: {head[:80]!r}")
    kind, playing, quant, how, mute, play_quant, name = fields
    if (kind not in KINDS or how not in HOWS or playing not in ("0", "1", "2") or not name
            or mute not in MUTES):
        raise ValueError(f"not a pattern record: {head[:80]!r}")
    return PatternRecord(kind, name, playing == "1", quant, how, text, mute,
                         finished=playing == "2", play_quant=play_quant)


@dataclass(frozen=True)
class Silenced:
    """What ``ScorchPatterns.silence`` stopped in sclang (the ``stop`` tool)."""

    routines: int
    """Routines, tasks and pattern players that code started (not a proxy's own player)."""
    patterns: tuple[str, ...]
    """Each pattern or proxy that played: ``Pdef kick``."""


def parse_silenced(value: str) -> Silenced:
    """Read ``ScorchPatterns.silence``'s answer: the routines, then a line a pattern;
    ValueError when it does not fit."""
    count, *patterns = value.split("\n")
    if not (count.isascii() and count.isdigit()) or any(
            p.split(" ", 1)[0] not in KINDS for p in patterns):
        raise ValueError(f"not what ScorchPatterns.silence answers: {value[:80]!r}")
    return Silenced(int(count), tuple(patterns))


def parse_gone(payload: str) -> str:
    """The key of a ``pattern-gone`` record's proxy (``Pdef acc``)."""
    kind, sep, name = payload.partition("\t")
    if not sep or kind not in KINDS or not name:
        raise ValueError(f"not a pattern-gone record: {payload[:80]!r}")
    return pattern_key(kind, name)


def sc_string(text: str) -> str:
    """``text`` as an sclang string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def restore_code(patterns: list[PatternRecord]) -> str:
    """``ScorchPatterns.restore([...])``: define each again, resume those that played (muted
    again if they were)."""
    entries = ", ".join(
        f"[{sc_string(p.kind)}, {sc_string(p.name)}, {'true' if p.playing else 'false'}, "
        f"{sc_string(p.how)}, {sc_string(p.text)}, {sc_string(p.quant)}, "
        f"{sc_string(p.mute)}]" for p in patterns)
    return f"ScorchPatterns.restore([{entries}]);"


def short(text: str, limit: int = 60) -> str:
    """The source on one line, cut to ``limit`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 3] + "..."
