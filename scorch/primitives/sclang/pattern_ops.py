"""The sclang code of one change to a pattern or proxy while it plays (``ScorchPatternOps.sc``).

Each function answers one expression whose value is the seconds until the change
lands on the room's clock (0: now). Names and keys are quoted as symbols; the user's
source and values go in parentheses, evaluated when the request runs (so an error in
them is the request's), applied on the grid. Pure: no process, no thread.
"""

from __future__ import annotations

from scorch.primitives.sclang.patterns import sc_string

#: When a change lands: now, just before the next beat, or just before the next bar.
WHENS = ("now", "beat", "bar")


def sc_symbol(name: str) -> str:
    """``name`` as an sclang symbol literal (``'acc'``)."""
    return "'" + name.replace("\\", "\\\\").replace("'", "\\'") + "'"


def proxy_kind(kind: str) -> str:
    """The class sclang keeps it in: a Pbindef is a Pdef."""
    return "Pdef" if kind == "Pbindef" else kind


def replace_code(kind: str, name: str, source: str, when: str) -> str:
    """Replace the source of ``kind`` ``name`` by the value of the code ``source``."""
    definition = f"{proxy_kind(kind)}({sc_symbol(name)}, {source})"
    return (f"ScorchPatternOps.replace({sc_string(proxy_kind(kind))}, {sc_symbol(name)}, "
            f"(\n{source}\n), {sc_string(when)}, {sc_string(definition)})")


def set_key_code(name: str, key: str, value: str, when: str) -> str:
    """Set ``key`` of Pbindef ``name`` to the value of the code ``value``."""
    return (f"ScorchPatternOps.setKey({sc_symbol(name)}, {sc_symbol(key)}, (\n{value}\n), "
            f"{sc_string(when)})")


def simple_code(action: str, kind: str | None, name: str | None, when: str) -> str:
    """``play``, ``stop``, ``mute``, ``unmute`` (``name`` None: every muted one) or ``solo``."""
    method = {"play": "play", "stop": "stop", "mute": "mute", "unmute": "unmute",
              "solo": "solo"}[action]
    who = (f"{sc_string(proxy_kind(kind))}, {sc_symbol(name)}" if kind is not None
           and name is not None else "nil, nil")
    return f"ScorchPatternOps.{method}({who}, {sc_string(when)})"


def fade_code(kind: str, name: str, seconds: float, when: str) -> str:
    """Fade ``kind`` ``name`` out over ``seconds``, then stop it."""
    return (f"ScorchPatternOps.fade({sc_string(proxy_kind(kind))}, {sc_symbol(name)}, "
            f"{seconds!r}, {sc_string(when)})")


def define_code(kind: str, name: str, text: str, playing: bool, mute: str = "") -> str:
    """Define ``kind`` ``name`` by ``text`` (a recorded definition), then play or stop it
    (when it plays, muted, soloed or neither as ``mute`` says)."""
    proxy = f"{proxy_kind(kind)}({sc_symbol(name)})"
    then = f"{mute_code(kind, name, mute)}; " if playing else ""
    # one that does not play gets a new player: one a CmdPeriod caught waiting for its
    # quant (a `stop` right after a play or a change) never plays again
    play = (f"{proxy}.play" if kind == "Ndef"
            else f"if({proxy}.isPlaying.not) {{ {proxy}.stop }}; {proxy}.play")
    return f"(\n{text}\n);\n{play if playing else f'{proxy}.stop'}; {then}nil"


def mute_code(kind: str, name: str, mute: str) -> str:
    """Mute ``kind`` ``name`` ("muted"), mark it soloed ("solo") or unmute it (""), now."""
    return (f"ScorchPatternOps.setMute({sc_string(proxy_kind(kind))}, {sc_symbol(name)}, "
            f"{sc_string(mute)})")


def clear_code(kind: str, name: str) -> str:
    """Stop ``kind`` ``name`` and forget its source."""
    return f"{proxy_kind(kind)}({sc_symbol(name)}).clear; nil"
