"""Prepare the messages that queued up together: recover swallowed ones, thin out values.

rtmidi's JACK backend treats every event after a SysEx without its closing F7
as more of that SysEx, until some event ends with F7, and hands the lot over as
one message: a truncated SysEx would swallow the note-offs behind it.
:func:`unpack` splits such a message at its status bytes, as the MIDI spec reads
a byte stream (a status byte ends a SysEx), and gives the swallowed messages back.

Under a flood the router takes a port's messages in batches (everything queued
since it last looked). A control change, pitch bend or channel pressure that a
later one of the same controller and channel replaces within the batch needs no
work: only the newest value would be heard. Nothing else is ever dropped, and a
note, program change or poly pressure on a channel is a barrier: a value sent
before a note-on (an MPE controller's initial timbre) stays before it.
"""

from __future__ import annotations

from midi.routes import Table

#: A message's bytes and rtmidi's delta time in seconds since the one before it on its port.
Message = tuple[list[int], float]

#: Controllers whose every value counts: bank select, data entry and (N)RPN selection,
#: pedals, and the channel mode messages (all notes off among them).
STATEFUL_CCS = frozenset({0, 32, 6, 38, 96, 97, 98, 99, 100, 101, 64, 65, 66, 67, 68, 69,
                          *range(120, 128)})


_SIZES = {0x80: 3, 0x90: 3, 0xA0: 3, 0xB0: 3, 0xC0: 2, 0xD0: 2, 0xE0: 3,
          0xF1: 2, 0xF2: 3, 0xF3: 2, 0xF6: 1}


def swallowed(data: list[int]) -> bool:
    """True for a SysEx message with other messages inside (a status byte before its end)."""
    return len(data) > 2 and data[0] == 0xF0 and max(data[1:-1]) >= 0x80


def unpack(data: list[int]) -> list[list[int]]:
    """Split a SysEx that swallowed messages into that SysEx and the messages, in order.

    Realtime bytes (clock, start, stop...) may sit anywhere, even inside a SysEx, and
    come out as messages of their own. Data bytes without a status byte before them
    come out as one message the engine will name as malformed.
    """
    out: list[list[int]] = []
    realtime: list[list[int]] = []
    current: list[int] = []
    expected = 0
    """Bytes the current message needs; 0 for a SysEx or stray data (until a status byte)."""
    for byte in data:
        if byte >= 0xF8:
            realtime.append([byte])
            continue
        if (byte >= 0x80 and byte != 0xF7) or not current:
            if current:
                out.append(current)
                out += realtime
                realtime = []
            current = [byte]
            expected = _SIZES.get(byte & 0xF0 if byte < 0xF0 else byte, 0)
            continue
        current.append(byte)
        if (byte == 0xF7 and current[0] == 0xF0) or (expected and len(current) == expected):
            out.append(current)
            current, expected = [], 0
        out += realtime
        realtime = []
    if current:
        out.append(current)
    return out + realtime


def recover(batch: list[Message]) -> list[Message]:
    """Return ``batch`` with every SysEx that swallowed messages unpacked (usually itself)."""
    if not any(m[0] and m[0][0] == 0xF0 and swallowed(m[0]) for m in batch):
        return batch
    out: list[Message] = []
    for message in batch:
        if message[0] and message[0][0] == 0xF0 and swallowed(message[0]):
            out += [(part, 0.0) for part in unpack(message[0])]
        else:
            out.append(message)
    return out


def replaceable_cc(table: Table | None, channel: int, cc: int) -> bool:
    """True when only the newest value of CC ``cc`` on ``channel`` matters for ``table``.

    Not for stateful controllers, relative encoders (every tick is a step) or the
    two halves of a 14-bit control (an MSB kept without the LSB before it would
    assemble a value the controller never sent).
    """
    if cc in STATEFUL_CCS:
        return False
    if table is None:
        return True
    if cc < 64 and table.cc14:
        return False
    if (table.pages or table.cues) and (
            ("cc", channel, cc) in table.pages or ("cc", channel, cc) in table.cues):
        return False  # a page or cue button's press and release
    targets = table.controls.get(("cc", channel, cc))
    return not targets or all(target.route.relative is None and target.route.button is None
                              for target in targets)


def coalesce(batch: list[Message], table: Table | None) -> list[Message]:
    """Return ``batch`` without the controller values a later one replaces; order kept."""
    if len(batch) < 2:
        return batch
    newer: set[tuple[int, int]] = set()
    """(status, controller) of the values kept so far, walking from the newest."""
    kept: list[Message] = []
    for message in reversed(batch):
        data = message[0]
        status = data[0] if data else 0
        kind = status & 0xF0
        key: tuple[int, int] | None = None
        if 0x80 <= status < 0xF0:
            if kind == 0xB0:
                if len(data) == 3 and replaceable_cc(table, status & 0x0F, data[1]):
                    key = (status, data[1])
            elif kind in (0xE0, 0xD0):
                if len(data) == (3 if kind == 0xE0 else 2):
                    key = (status, -1)
            elif newer:
                # A note (or program change, poly pressure): values before it stay.
                newer = {k for k in newer if k[0] & 0x0F != status & 0x0F}
        if key is not None:
            if key in newer:
                continue
            newer.add(key)
        kept.append(message)
    kept.reverse()
    return kept


def message_error(data: list[int]) -> str | None:
    """Return why ``data`` is not one well-formed channel message, or None if it is."""
    if not data:
        return "empty message"
    status = data[0]
    if status < 0x80:
        return f"no status byte (running status or garbage): {bytes(data[:8]).hex(' ')}"
    if status >= 0xF0:
        return None  # system messages: ignored, not errors
    size = 2 if status & 0xF0 in (0xC0, 0xD0) else 3
    if len(data) != size:
        return f"{len(data)} bytes for status {status:#04x}, expected {size}"
    if any(b > 0x7F for b in data[1:]):
        return f"data byte above 127: {bytes(data).hex(' ')}"
    return None
