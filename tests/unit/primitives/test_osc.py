"""OSC encoding and decoding, byte for byte where the spec fixes the bytes."""

from __future__ import annotations

import pytest

from scorch.errors import OscError
from scorch.primitives.osc import (
    decode_message,
    decode_packet,
    encode_bundle,
    encode_message,
    timetag,
)


def test_status_message_bytes_match_the_osc_spec() -> None:
    assert encode_message("/status") == b"/status\x00,\x00\x00\x00"


@pytest.mark.parametrize(
    "args",
    [(), (1,), (-5, 2.5, "sine"), (b"\x01\x02\x03",), (True, False, None), (2**40,)],
)
def test_round_trip(args: tuple[object, ...]) -> None:
    msg = decode_message(encode_message("/x", *args))  # type: ignore[arg-type]
    assert msg.address == "/x"
    assert msg.args == args


def test_bundle_decodes_to_its_messages_in_order() -> None:
    bundle = encode_bundle(1, [encode_message("/a", 1), encode_message("/b", "x")])
    assert [m.address for m in decode_packet(bundle)] == ["/a", "/b"]


def test_timetag_is_ntp_seconds_with_fraction() -> None:
    assert timetag(0.5) >> 32 == 2208988800
    assert timetag(0.5) & 0xFFFFFFFF == 1 << 31


@pytest.mark.parametrize("data", [b"status\x00\x00", b"/x\x00\x00,i\x00\x00\x00", b"/x"])
def test_malformed_packets_raise_osc_error(data: bytes) -> None:
    with pytest.raises(OscError):
        decode_message(data)


def test_unencodable_argument_says_what_it_was() -> None:
    with pytest.raises(TypeError, match="dict"):
        encode_message("/x", {})  # type: ignore[arg-type]
