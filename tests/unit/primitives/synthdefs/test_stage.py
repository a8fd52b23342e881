"""The safety stage's SynthDef bytes, its interpolator, and the reading of its replies."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import signal

from scorch.primitives.osc import OscMessage
from scorch.primitives.synthdefs.graph import Graph
from scorch.primitives.synthdefs.scgf import AUDIO, param_names
from scorch.primitives.synthdefs.stage import (
    LATENCY,
    LOOKAHEAD,
    SILENT_LUFS,
    STAGE_REPLY,
    TAPS,
    interpolator,
    reading,
    stage_name,
    stage_synthdef,
)


def test_the_interpolator_is_scipys_kaiser_windowed_sinc_and_phase_0_the_sample() -> None:
    taps = np.array(interpolator())
    assert np.max(np.abs(taps - signal.firwin(4 * TAPS + 1, 0.25, window=("kaiser", 5.0)) * 4)
                  ) < 1e-12
    phase0 = taps[0::4]  # the stage takes the sample itself for it
    assert phase0[TAPS // 2] == pytest.approx(1.0, abs=1e-3)
    assert np.sum(np.abs(phase0)) - abs(phase0[TAPS // 2]) < 1e-12


def test_the_latency_is_the_look_ahead_and_half_the_interpolator() -> None:
    assert LATENCY == LOOKAHEAD - 1 + TAPS // 2 + 1 == 134


@pytest.mark.parametrize(("channels", "lufs", "name"), [
    (2, False, "scorch_stage_2"), (1, True, "scorch_stage_lufs_1"), (128, False,
                                                                    "scorch_stage_128")])
def test_each_shape_has_its_own_name_and_the_same_controls(channels: int, lufs: bool,
                                                          name: str) -> None:
    data = stage_synthdef(channels, lufs)
    assert stage_name(channels, lufs) == name
    assert data.startswith(b"SCgf" + struct.pack(">iH", 2, 1) + bytes([len(name)]) + name.encode())
    assert param_names(data) == ["gain", "fade", "ceiling", "lufs", "report"]
    assert stage_synthdef(channels, lufs) == data  # the same bytes every time
    assert b"\x03SOS" in data  # every stage measures the loudness (K-weighted)...
    assert (b"\x03Lag" in data) is lufs  # ...and only one with a limit turns it down


@pytest.mark.parametrize("channels", [0, 129])
def test_a_stage_of_no_or_too_many_channels_is_refused_by_name(channels: int) -> None:
    with pytest.raises(ValueError, match="1 to 128 channels"):
        stage_name(channels)


def test_the_graph_folds_constants_and_keeps_each_once() -> None:
    g = Graph()
    (x,) = g.controls(x=1.0)
    y = (x + 2.0 * 3.0) * 6.0
    assert g.size == 3  # Control, +, *: 2 * 3 was folded
    assert g.unary("dbamp", 0.0).ugen == -1
    data = g.synthdef("folded")
    count = struct.unpack(">i", data[10 + 1 + 6:10 + 1 + 6 + 4])[0]
    assert count == 3  # 6.0 once for both uses, and dbamp's 0.0 and 1.0
    assert y.rate == 1


def test_a_ugen_of_another_graph_is_refused() -> None:
    g, other = Graph(), Graph()
    sig = other.one("WhiteNoise", AUDIO)
    with pytest.raises(ValueError, match="another graph"):
        g.one("Out", AUDIO, 0.0, sig)


def test_a_reply_is_a_typed_reading() -> None:
    values = (7, 1, 100.0, 0.89, 0.01, -3.0, 1.0, 0.25, 10.0, -17.0)
    found = reading(OscMessage(STAGE_REPLY, values))
    assert found is not None and found.node == 7 and found.non_finite
    assert found.reduction_db == pytest.approx(40.0)
    assert found.peak_in == 100.0 and found.loudness_db == -3.0 and found.rms_in == 0.5
    assert found.dc_in == 10.0 and found.loudness_lufs == -17.0
    # a reply of an older stage (one value fewer): not a reading
    assert reading(OscMessage(STAGE_REPLY, values[:-1])) is None
    silent = reading(OscMessage(STAGE_REPLY, (*values[:-1], -300.0)))
    assert silent is not None and silent.loudness_lufs == SILENT_LUFS


@given(st.lists(st.one_of(st.integers(), st.floats(), st.text(max_size=3), st.none(),
                          st.booleans(), st.binary(max_size=3)), max_size=11))
def test_any_reply_reads_or_is_refused_never_raises(args: list[object]) -> None:
    found = reading(OscMessage(STAGE_REPLY, tuple(args)))  # type: ignore[arg-type]
    if found is not None:
        assert math.isfinite(found.reduction_db) and found.reduction_db >= 0
