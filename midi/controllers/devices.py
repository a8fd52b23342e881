"""Devices as ports show them: a device's output found for its input, its controls summed up.

Pure: port names and profiles in, names out.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from midi.controllers.profile import Control, Profile

#: Words that say a port's direction, not its device (ALSA, JACK's a2j, CoreMIDI, WinMM).
_DIRECTION = re.compile(r"\((?:capture|playback)(?:_\d+)?\)|\b(?:in|out|input|output|midiin\d*|"
                        r"midiout\d*)\b|\d+:\d+$", re.IGNORECASE)


def _device_part(name: str) -> str:
    return " ".join(_DIRECTION.sub(" ", name).split()).lower()


def pair(input_name: str, outputs: list[str], profile: Profile) -> str | None:
    """The output of the device whose input is ``input_name`` (None: it shows none).

    Among the outputs ``profile`` recognises, the one whose name without its direction
    words is the input's; else the most alike (two devices of one model side by side).
    """
    candidates = [o for o in outputs if profile.matches(o)]
    if not candidates:
        return None
    wanted = _device_part(input_name)
    for output in candidates:
        if _device_part(output) == wanted:
            return output
    return max(candidates, key=lambda o: difflib.SequenceMatcher(
        None, _device_part(o), wanted).ratio())


def has_feedback(profile: Profile) -> bool:
    """Whether any control of ``profile`` can be shown on the device."""
    return any(c.feedback is not None for c in profile.controls.values())


def groups(profile: Profile) -> list[str]:
    """The controls in a few words each: ``fader1-8 (absolute, cc 0-7 ch 1)``."""
    out: list[str] = []
    run: list[Control] = []

    def flush() -> None:
        if not run:
            return
        first, last = run[0], run[-1]
        stem = re.sub(r"\d+$", "", first.name)
        names = first.name if len(run) == 1 else f"{first.name}-{last.name[len(stem):]}"
        kind, channel, number = first.key
        each = [c.key[2] for c in run]
        numbers = (f"{number}" if len(run) == 1 else f"{number}-{last.key[2]}"
                   if each == list(range(number, number + len(run))) else
                   ",".join(map(str, each)) if len(run) <= 16 else "various")
        where = f"{kind} {numbers} ch {channel + 1}" if kind in ("cc", "note") else \
            f"{kind} ch {channel + 1}"
        lit = ", lit" if first.feedback is not None else ""
        out.append(f"{names} ({first.kind}, {where}{lit})")
        run.clear()

    for control in profile.controls.values():
        if run and not _follows(run[-1], control):
            flush()
        run.append(control)
    flush()
    return out


def _follows(previous: Control, control: Control) -> bool:
    """``control`` continues the run of ``previous``: same stem, kind and channel."""
    stem = re.sub(r"\d+$", "", previous.name)
    if not re.fullmatch(rf"{re.escape(stem)}\d+", control.name) or stem == previous.name:
        return False
    return (previous.kind, previous.key[:2], previous.feedback is None) == (
        control.kind, control.key[:2], control.feedback is None) and \
        int(control.name[len(stem):]) == int(previous.name[len(stem):]) + 1


def describe(profile: Profile, full: bool = False) -> dict[str, Any]:
    """A profile as the ``midi profiles`` action lists it (``full``: every control)."""
    out: dict[str, Any] = {
        "id": profile.id, "name": profile.name, "ports": list(profile.ports),
        "source": f"{profile.source.title} {profile.source.version}".strip()
        + (f" <{profile.source.url}>" if profile.source.url else ""),
        "controls": groups(profile)}
    if full:
        out["controls"] = {c.name: _control(c) for c in profile.controls.values()}
        out["init"] = [m.hex(" ") for m in profile.init]
        out["source_note"] = profile.source.note
    return out


def _control(control: Control) -> str:
    kind, channel, number = control.key
    text = f"{control.kind} {kind}" + (f" {number}" if kind in ("cc", "note") else "") + \
        f" ch {channel + 1}"
    if control.encoding:
        text += f" {control.encoding}"
    if control.kind in ("button", "pad"):
        text += f" {control.button}"
    feedback = control.feedback
    if feedback is not None:
        text += f"; feedback {feedback.message} {feedback.number} ch {feedback.channel + 1} " \
            f"({feedback.shows})"
    return text
