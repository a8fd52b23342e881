"""What the router sends to MIDI outputs on request: messages by name, and panic's."""

from __future__ import annotations

_KINDS = {
    "note_on": "note_on",
    "note_off": "note_off",
    "cc": "control_change",
    "control_change": "control_change",
    "program": "program_change",
    "program_change": "program_change",
    "clock": "clock",
    "start": "start",
    "stop": "stop",
    "continue": "continue",
}
#: What panic sends on every channel of every output: sustain off, all notes off (control
#: change, status 0xB0 + channel).
PANIC = [[0xB0 | channel, control, 0] for channel in range(16) for control in (64, 123)]


def encode(kind: str, channel: int, fields: dict[str, int]) -> list[int]:
    """The bytes of one message: ``kind`` as ``MidiRouter.send`` names it, channel 1-16."""
    import mido  # only when asked to send: a router that never sends does not load it

    if kind not in _KINDS:
        raise ValueError(f"cannot send {kind!r}: use one of {sorted(_KINDS)}")
    mido_kind = _KINDS[kind]
    if mido_kind in ("clock", "start", "stop", "continue"):
        return list(mido.Message(mido_kind).bytes())
    if not 1 <= channel <= 16:
        raise ValueError(f"channel must be 1-16, got {channel}")
    return list(mido.Message(mido_kind, channel=channel - 1, **fields).bytes())
