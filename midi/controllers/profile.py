"""A controller profile: a device's port names, its controls by name, and its feedback.

A profile file (TOML, ``midi/controllers/profiles/*.toml`` and the user's own) is
read into :class:`ProfileFile`, checked, and expanded into a :class:`Profile`: every
control under its own name (``fader1``...``fader8`` from one ``[[controls]]`` with
``count = 8``), with the message it sends in the factory mode and, if it has one, the
message that sets its light, ring or motor (:class:`Feedback`). Pure: no files here.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, NamedTuple

from pydantic import Field, model_validator

from scorch.values import StrictModel, Text

Relative = Literal["twos_complement", "signed_bit", "binary_offset"]
Kind = Literal["absolute", "relative", "button", "pad"]
Message = Literal["cc", "note", "pitchbend", "aftertouch"]
FeedbackMessage = Literal["cc", "note", "pitchbend", "sysex"]

#: A control's name, or a name template with ``{n}`` for a group of ``count`` controls.
NAME = r"^[a-z][a-z0-9_]{0,30}(\{n\}[a-z0-9_]{0,8})?$"
ControlName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,39}$",
                                   description="A control of the device's profile, e.g. "
                                   "fader1, knob3, pad9, play")]
Byte = Annotated[int, Field(ge=0, le=127)]
Channel = Annotated[int, Field(ge=1, le=16)]
Pattern = Annotated[Text, Field(min_length=1, max_length=200)]
#: A SysEx template: hex bytes, and ``{number}`` and ``{value}`` where the LED's number
#: and its value go.
_HEX = re.compile(r"^(?:[0-9A-Fa-f]{2}|\{number\}|\{value\})$")


def parse_hex(text: str, where: str, template: bool = False) -> tuple[int | str, ...]:
    """The bytes of ``F0 00 20 ...`` (with ``{number}``/``{value}`` kept when a template)."""
    items = text.split()
    if not items or len(items) > 256:
        raise ValueError(f"{where}: 1 to 256 hex bytes separated by spaces, got {len(items)}")
    out: list[int | str] = []
    for item in items:
        if not _HEX.match(item) or (item.startswith("{") and not template):
            raise ValueError(f"{where}: {item[:20]!r} is not a hex byte (00-FF)")
        out.append(item[1:-1] if item.startswith("{") else int(item, 16))
    first, last = out[0], out[-1]
    if first == 0xF0:
        if last != 0xF7 or any(isinstance(b, int) and b > 0x7F for b in out[1:-1]):
            raise ValueError(f"{where}: a SysEx starts F0, ends F7 and holds bytes 00-7F "
                             "between")
    elif not isinstance(first, int) or not 0x80 <= first < 0xF0 or len(out) != (
            2 if first & 0xF0 in (0xC0, 0xD0) else 3) or any(
            isinstance(b, int) and b > 0x7F for b in out[1:]):
        raise ValueError(f"{where}: one channel message (a status byte 80-EF and its data "
                         "bytes 00-7F) or one SysEx (F0 ... F7)")
    return tuple(out)


class Source(StrictModel):
    """Where a profile's numbers come from: the maker's document, or what stood in for it."""

    title: Text = Field(min_length=1, max_length=300)
    version: Text = Field("", max_length=100)
    url: Text = Field("", max_length=500)
    note: Text = Field("", max_length=2000, description="What else was used, and why.")


class Blink(StrictModel):
    """How a light shows that its control has not picked its param up yet (takeover)."""

    channel: Channel | None = Field(None, description="Send on this channel instead "
                                    "(devices whose channel selects blinking).")
    add: int | None = Field(None, ge=0, le=127, description="Add this to the value (a ring "
                            "whose blinking values follow its steady ones).")
    value: Byte | None = Field(None, description="Send this value instead.")

    @model_validator(mode="after")
    def _one(self) -> Blink:
        if sum(v is not None for v in (self.channel, self.add, self.value)) != 1:
            raise ValueError("blink takes exactly one of channel, add, value")
        return self


class FeedbackSpec(StrictModel):
    """The message that shows a control's param on the device."""

    message: FeedbackMessage
    channel: Channel | None = Field(None, description="Default: the control's.")
    number: int | None = Field(None, ge=0, le=127, description="The first control's LED; "
                               "default: the control's own number.")
    numbers: tuple[Byte, ...] | None = Field(None, description="One per control, in order.")
    shows: Literal["value", "light"] = Field(
        "value", description="value: the param's position (a ring, a motor fader, levels of "
        "a light); light: on at or above the middle of the range, else off.")
    range: tuple[int, int] = Field((0, 127), description="value: the message's value at the "
                                   "bottom and the top of the param's range.")
    levels: tuple[Byte, ...] = Field((), max_length=128, description="value: the values for "
                                     "equal steps of the position, lowest first (instead of "
                                     "range).")
    on: Byte = 127
    off: Byte = 0
    blink: Blink | None = None
    sysex: Text | None = Field(None, description="message sysex: the template, e.g. 'F0 00 "
                               "20 29 02 11 78 08 {number} {value} F7'.")
    sets_control: bool = Field(False, description="The device moves its control to the value "
                               "(a motor fader, an encoder that adopts it): no pickup needed.")

    @model_validator(mode="after")
    def _check(self) -> FeedbackSpec:
        low, high = self.range
        top = 16383 if self.message == "pitchbend" else 127
        if not (0 <= low <= top and 0 <= high <= top):
            raise ValueError(f"range must lie in 0-{top}, got {list(self.range)}")
        if (self.message == "sysex") != (self.sysex is not None):
            raise ValueError("sysex goes with message = 'sysex', and only with it")
        if self.sysex is not None:
            parts = parse_hex(self.sysex, "sysex", template=True)
            if parts[0] != 0xF0 or "value" not in parts:
                raise ValueError("a sysex template is one SysEx (F0 ... F7) with {value}")
        if self.number is not None and self.numbers is not None:
            raise ValueError("give number (the first) or numbers (each), not both")
        if self.message == "pitchbend" and self.shows == "light":
            raise ValueError("a pitch-bend feedback shows a value (a motor fader)")
        return self


class ControlSpec(StrictModel):
    """One control, or ``count`` alike (``name = "fader{n}"``), as the device sends them."""

    name: Annotated[str, Field(pattern=NAME, description="fader1, or fader{n} with count")]
    count: int = Field(1, ge=1, le=128)
    start: int = Field(1, ge=0, le=127, description="What {n} is for the first control.")
    kind: Kind
    message: Message = "cc"
    channel: Channel | None = Field(None, description="Default: the profile's channel.")
    number: int | None = Field(None, ge=0, le=127, description="The first control's number "
                               "(CC or note); the others follow by step.")
    step: int = Field(1, ge=1, le=16)
    numbers: tuple[Byte, ...] | None = Field(None, description="One number per control.")
    encoding: Relative | None = Field(None, description="relative: how a turn is sent.")
    button: Literal["momentary", "toggle"] = Field(
        "momentary", description="button, pad: momentary sends on at press and off at "
        "release; toggle sends on and off at alternate presses.")
    aftertouch: Literal["poly", "channel"] | None = Field(None, description="pad: pressure.")
    feedback: FeedbackSpec | None = None

    @model_validator(mode="after")
    def _check(self) -> ControlSpec:
        if self.count > 1 and "{n}" not in self.name:
            raise ValueError(f"{self.count} controls need {{n}} in their name")
        wants_number = self.message in ("cc", "note")
        if wants_number and (self.number is None) == (self.numbers is None):
            raise ValueError("a cc or note control needs number or numbers (one of them)")
        if not wants_number and (self.number is not None or self.numbers is not None):
            raise ValueError(f"a {self.message} control has no number")
        if not wants_number and self.count > 1:
            raise ValueError(f"one {self.message} per channel: count must be 1")
        if self.numbers is not None and len(self.numbers) != self.count:
            raise ValueError(f"numbers holds {len(self.numbers)}, count is {self.count}")
        if self.number is not None and self.number + self.step * (self.count - 1) > 127:
            raise ValueError(f"number {self.number} + step {self.step} x {self.count - 1} "
                             "passes 127")
        if (self.kind == "relative") != (self.encoding is not None):
            raise ValueError("encoding goes with kind = 'relative', and only with it")
        if self.kind == "relative" and self.message != "cc":
            raise ValueError("a relative encoder sends cc")
        if self.aftertouch is not None and self.kind != "pad":
            raise ValueError("aftertouch is a pad's")
        if self.start + self.count - 1 > 999:
            raise ValueError("names past 999")
        feedback = self.feedback
        if feedback is not None:
            count = len(feedback.numbers) if feedback.numbers is not None else None
            if count is not None and count != self.count:
                raise ValueError(f"feedback.numbers holds {count}, count is {self.count}")
            first = feedback.number if feedback.number is not None else self.number
            if feedback.message in ("cc", "note", "sysex") and feedback.numbers is None \
                    and first is None and self.numbers is None:
                raise ValueError("feedback needs number or numbers")
            if first is not None and feedback.numbers is None \
                    and first + self.step * (self.count - 1) > 127:
                raise ValueError("feedback numbers pass 127")
        return self


class ProfileFile(StrictModel):
    """One profile file: a device, where its numbers come from, and its controls."""

    name: Text = Field(min_length=1, max_length=100, description="The device, as people "
                       "call it.")
    ports: tuple[Pattern, ...] = Field(max_length=16, description="Case-insensitive "
                                       "substrings of its port names, on any system.")
    unless: tuple[Pattern, ...] = Field((), max_length=16, description="Port names holding "
                                        "one of these are another device.")
    fallback: bool = Field(False, description="For ports no other profile names.")
    channel: Channel = 1
    source: Source
    init: tuple[Text, ...] = Field((), max_length=16, description="Messages (hex) sent when "
                                   "the device is connected: the mode scorch needs.")
    rate: int = Field(500, ge=10, le=10000, description="Feedback messages a second at most.")
    controls: tuple[ControlSpec, ...] = Field(min_length=1, max_length=256)

    @model_validator(mode="after")
    def _check(self) -> ProfileFile:
        if not self.ports and not self.fallback:
            raise ValueError("a profile names its ports (or is the fallback)")
        for index, message in enumerate(self.init):
            parse_hex(message, f"init[{index}]")
        return self


class Feedback(NamedTuple):
    """One control's feedback, expanded: what to send, and how it shows."""

    message: str
    """cc, note, pitchbend or sysex."""
    channel: int
    """0-15."""
    number: int
    shows: str
    range: tuple[int, int]
    levels: tuple[int, ...]
    on: int
    off: int
    blink: Blink | None
    sysex: tuple[int | str, ...]
    sets_control: bool


class Control(NamedTuple):
    """One control as the device sends it in its factory mode."""

    name: str
    kind: str
    key: tuple[str, int, int]
    """The router's control key: (cc | note | pb | at, channel 0-15, number)."""
    encoding: str | None
    button: str
    aftertouch: str | None
    feedback: Feedback | None


class Profile(NamedTuple):
    """A device: the ports it shows, its controls by name, what to send it at connection."""

    id: str
    name: str
    ports: tuple[str, ...]
    unless: tuple[str, ...]
    fallback: bool
    source: Source
    init: tuple[bytes, ...]
    rate: int
    controls: dict[str, Control]

    def matches(self, port: str) -> bool:
        """Whether ``port`` (a port's name) is this device's."""
        lowered = port.lower()
        return any(p.lower() in lowered for p in self.ports) and not any(
            u.lower() in lowered for u in self.unless)

    def by_key(self) -> dict[tuple[str, int, int], Control]:
        """The controls by the message they send."""
        return {c.key: c for c in self.controls.values()}


_KEYS = {"cc": "cc", "note": "note", "pitchbend": "pb", "aftertouch": "at"}


def expand(profile_id: str, spec: ProfileFile) -> Profile:
    """Every control of ``spec`` under its own name; ValueError names a clash."""
    controls: dict[str, Control] = {}
    keys: dict[tuple[str, int, int], str] = {}
    for index, group in enumerate(spec.controls):
        channel = (group.channel or spec.channel) - 1
        for i in range(group.count):
            name = group.name.replace("{n}", str(group.start + i))
            if name in controls:
                raise ValueError(f"controls[{index}]: the name {name!r} is taken")
            number = _nth(group.numbers, group.number, group.step, i)
            key = (_KEYS[group.message], channel, number)
            if key in keys:
                raise ValueError(f"controls[{index}]: {name} sends what {keys[key]} sends "
                                 f"({group.message} {number} on channel {channel + 1})")
            keys[key] = name
            feedback = _feedback(group, channel, number, i)
            controls[name] = Control(name, group.kind, key, group.encoding, group.button,
                                     group.aftertouch, feedback)
    init = tuple(bytes(b for b in parse_hex(m, "init") if isinstance(b, int))
                 for m in spec.init)
    return Profile(profile_id, spec.name, spec.ports, spec.unless, spec.fallback,
                   spec.source, init, spec.rate, controls)


def _nth(numbers: tuple[int, ...] | None, first: int | None, step: int, i: int) -> int:
    if numbers is not None:
        return numbers[i]
    return 0 if first is None else first + step * i


def _feedback(group: ControlSpec, channel: int, number: int, i: int) -> Feedback | None:
    spec = group.feedback
    if spec is None:
        return None
    if spec.numbers is not None:
        at = spec.numbers[i]
    elif spec.number is not None:
        at = spec.number + group.step * i
    else:
        at = number
    sysex = parse_hex(spec.sysex, "sysex", template=True) if spec.sysex else ()
    return Feedback(spec.message, (spec.channel - 1) if spec.channel else channel, at,
                    spec.shows, spec.range, spec.levels, spec.on, spec.off, spec.blink,
                    sysex, spec.sets_control)
