"""The meter SynthDef's bytes and the reading of its replies."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorch.primitives.osc import OscMessage
from scorch.primitives.synthdefs.meter import METER_REPLY, levels, meter_name, meter_synthdef


def test_the_meter_reads_n_buses_and_sends_peak_rms_to_its_address() -> None:
    data = meter_synthdef(2)
    assert data.startswith(b"SCgf" + struct.pack(">iH", 2, 1))
    assert b"\x0escorch_meter_2" in data
    assert b"\x0bSendPeakRMS" in data and b"\x02In" in data
    # the reply address is spelt out as constants, one per character, after the name
    start = data.index(b"\x0escorch_meter_2") + 15
    count = struct.unpack(">i", data[start:start + 4])[0]
    constants = struct.unpack(f">{count}f", data[start + 4:start + 4 + 4 * count])
    assert {float(c) for c in METER_REPLY.encode()} <= set(constants)
    assert meter_synthdef(2) == data  # the same bytes every time: scsynth keeps one def


@pytest.mark.parametrize("channels", [0, -1, 129])
def test_a_meter_of_no_or_too_many_channels_is_refused_by_name(channels: int) -> None:
    with pytest.raises(ValueError, match="1 to 128 channels"):
        meter_name(channels)


def test_a_reply_gives_the_node_and_each_channels_peak_and_rms() -> None:
    msg = OscMessage(METER_REPLY, (5, -1, 0.5, 0.25, 0.1, 0.05))
    assert levels(msg) == (5, [0.5, 0.1], [0.25, 0.05])


@given(st.lists(st.one_of(st.integers(), st.floats(), st.text(max_size=3), st.none(),
                          st.booleans(), st.binary(max_size=3)), max_size=8),
       st.sampled_from([METER_REPLY, "/reply", "/n_end"]))
def test_any_reply_is_read_or_refused_without_raising(args: list[object], address: str) -> None:
    found = levels(OscMessage(address, tuple(args)))
    if found is not None:
        _node, peaks, rms = found
        assert address == METER_REPLY and len(peaks) == len(rms) == (len(args) - 2) // 2
