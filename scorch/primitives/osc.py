"""Encode and decode OSC 1.0 messages and bundles, as scsynth speaks them.

Pure functions over bytes: no sockets here (see ``scorch.primitives.scsynth.client``).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import NamedTuple

from scorch.errors import OscError

OscArg = int | float | str | bytes | bool | None

#: Time tag meaning "now" in a bundle.
IMMEDIATELY = 1
_NTP_EPOCH_OFFSET = 2208988800  # seconds from 1900-01-01 to 1970-01-01


class OscMessage(NamedTuple):
    """One decoded OSC message."""

    address: str
    """The OSC address pattern, such as ``/status.reply``."""
    args: tuple[OscArg, ...]
    """The arguments, decoded to Python values."""


def _pad4(data: bytes) -> bytes:
    return data + b"\x00" * (-len(data) % 4)


def _string(value: str) -> bytes:
    return _pad4(value.encode() + b"\x00")


def encode_message(address: str, *args: OscArg) -> bytes:
    """Encode one message; ints are int32, floats float32, bytes a blob."""
    tags = [","]
    payload = bytearray()
    for arg in args:
        if arg is True:
            tags.append("T")
        elif arg is False:
            tags.append("F")
        elif arg is None:
            tags.append("N")
        elif isinstance(arg, int):
            if -(2**31) <= arg < 2**31:
                tags.append("i")
                payload += struct.pack(">i", arg)
            else:
                tags.append("h")
                payload += struct.pack(">q", arg)
        elif isinstance(arg, float):
            tags.append("f")
            try:
                payload += struct.pack(">f", arg)
            except OverflowError:
                raise OscError(f"{arg!r} does not fit an OSC float (float32, |x| <= 3.4e38) "
                               f"in {address}") from None
        elif isinstance(arg, str):
            tags.append("s")
            payload += _string(arg)
        elif isinstance(arg, bytes | bytearray):
            tags.append("b")
            payload += struct.pack(">i", len(arg)) + _pad4(bytes(arg))
        else:
            raise TypeError(f"cannot encode {type(arg).__name__} as an OSC argument: {arg!r}")
    return _string(address) + _string("".join(tags)) + bytes(payload)


def timetag(unix_seconds: float) -> int:
    """Convert Unix time in seconds to a 64-bit NTP time tag."""
    ntp = unix_seconds + _NTP_EPOCH_OFFSET
    seconds = int(ntp)
    fraction = int((ntp - seconds) * (1 << 32))
    return (seconds << 32) | fraction


def encode_bundle(tag: int, elements: Sequence[bytes]) -> bytes:
    """Encode a bundle of already encoded messages (or bundles) at time tag ``tag``."""
    out = bytearray(b"#bundle\x00")
    out += struct.pack(">Q", tag)
    for element in elements:
        out += struct.pack(">i", len(element)) + element
    return bytes(out)


def _read_string(data: bytes, pos: int) -> tuple[str, int]:
    end = data.find(b"\x00", pos)
    if end < 0:
        raise OscError(f"unterminated OSC string at byte {pos}")
    text = data[pos:end].decode(errors="replace")
    return text, end + 1 + (-(end + 1 - pos) % 4)


#: Fixed-size numbers by type tag: int32, float32, int64, float64.
_NUMBERS = {tag: struct.Struct(fmt) for tag, fmt in
            (("i", ">i"), ("f", ">f"), ("h", ">q"), ("d", ">d"))}


def decode_message(data: bytes) -> OscMessage:
    """Decode one OSC message (not a bundle)."""
    try:
        address, pos = _read_string(data, 0)
        if not address.startswith("/"):
            raise OscError(f"OSC address must start with '/', got {address!r}")
        if pos >= len(data):
            return OscMessage(address, ())
        tags, pos = _read_string(data, pos)
        args: list[OscArg] = []
        for tag in tags[1:]:
            if tag in _NUMBERS:
                number = _NUMBERS[tag]
                args.append(number.unpack_from(data, pos)[0])
                pos += number.size
            elif tag == "s" or tag == "S":
                text, pos = _read_string(data, pos)
                args.append(text)
            elif tag == "b":
                (size,) = struct.unpack_from(">i", data, pos)
                if size < 0 or pos + 4 + size > len(data):
                    raise OscError(f"a blob of {size} bytes past the end of {address}")
                pos += 4
                args.append(bytes(data[pos : pos + size]))
                pos += size + (-size % 4)
            elif tag == "T":
                args.append(True)
            elif tag == "F":
                args.append(False)
            elif tag in "NI":
                args.append(None)
            else:
                raise OscError(f"unsupported OSC type tag {tag!r} in {address}")
        return OscMessage(address, tuple(args))
    except struct.error as err:
        raise OscError(f"truncated OSC message: {err}") from err


#: Bundles in bundles a packet may hold (OSC from outside is hostile input).
MAX_NESTING = 8


def decode_packet(data: bytes, depth: int = 0) -> list[OscMessage]:
    """Decode a message or a (possibly nested) bundle into its messages, in order."""
    if not data.startswith(b"#bundle\x00"):
        return [decode_message(data)]
    if depth >= MAX_NESTING:
        raise OscError(f"bundles nested more than {MAX_NESTING} deep")
    messages: list[OscMessage] = []
    pos = 16
    while pos < len(data):
        try:
            (size,) = struct.unpack_from(">i", data, pos)
        except struct.error as err:
            raise OscError(f"truncated OSC bundle: {err}") from err
        pos += 4
        if size <= 0 or pos + size > len(data):
            raise OscError(f"a bundle element of {size} bytes past the end of the bundle")
        messages.extend(decode_packet(data[pos : pos + size], depth + 1))
        pos += size
    return messages
