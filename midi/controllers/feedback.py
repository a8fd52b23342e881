"""What a device is sent to show a param: its own feedback language, pure.

A control's :class:`~midi.controllers.profile.Feedback` says which message sets its
light, ring or motor; :func:`encode` turns a param's position (0..1 along the
route's range and curve, None where nothing is mapped) into those bytes, and
shows a takeover that is still waiting for the control (the light blinks, or
the ring shows the target blinking) the way the profile says.
"""

from __future__ import annotations

from midi.controllers.profile import Feedback


def level(feedback: Feedback, position: float | None, pending: bool = False) -> tuple[int, int]:
    """The (channel, value) that shows ``position``; ``pending``: not picked up yet."""
    channel = feedback.channel
    if position is None:
        return channel, feedback.off
    position = min(1.0, max(0.0, position))
    if feedback.shows == "light":
        value = feedback.on if position >= 0.5 else feedback.off
    elif feedback.levels:
        steps = len(feedback.levels) - 1
        value = feedback.levels[min(steps, int(position * steps + 0.5))]
    else:
        low, high = feedback.range
        value = int(low + position * (high - low) + 0.5) if high >= low else \
            int(low - position * (low - high) + 0.5)
    blink = feedback.blink
    if pending and blink is not None:
        if blink.channel is not None:
            channel = blink.channel - 1
        elif blink.add is not None:
            value += blink.add
        elif blink.value is not None:
            value = blink.value
    top = 16383 if feedback.message == "pitchbend" else 127
    return channel, min(top, max(0, value))


def encode(feedback: Feedback, position: float | None, pending: bool = False) -> bytes:
    """The bytes of the message that shows ``position`` on the device."""
    channel, value = level(feedback, position, pending)
    kind = feedback.message
    if kind == "cc":
        return bytes((0xB0 | channel, feedback.number, value))
    if kind == "note":
        return bytes((0x90 | channel, feedback.number, value))
    if kind == "pitchbend":
        return bytes((0xE0 | channel, value & 0x7F, value >> 7))
    return bytes(part if isinstance(part, int) else feedback.number if part == "number"
                 else value for part in feedback.sysex)


def address(feedback: Feedback) -> tuple[str, int, int]:
    """What one message of this feedback replaces: its kind, channel and number."""
    return feedback.message, feedback.channel, feedback.number
