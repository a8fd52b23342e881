"""The picture of a sound: a PNG of the promised size, drawn without a display."""

from __future__ import annotations

import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from scorch.audio.picture import HEIGHT, WIDTH, picture
from tests.support.audio_signals import RATE, kicks, noise, sine

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_header(data: bytes) -> dict[str, int]:
    """Parse the IHDR chunk that must open a PNG: width, height, depth, colour type."""
    assert data[:8] == PNG_SIGNATURE
    length, kind = struct.unpack(">I4s", data[8:16])
    assert (length, kind) == (13, b"IHDR")
    body = data[16:29]
    assert struct.unpack(">I", data[29:33])[0] == zlib.crc32(kind + body)
    width, height, depth, colour = struct.unpack(">IIBB", body[:10])
    return {"width": width, "height": height, "depth": depth, "colour": colour}


def png_text(data: bytes) -> dict[str, str]:
    """Return the tEXt chunks of a PNG (matplotlib signs its images there)."""
    found, position = {}, 8
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        if kind == b"tEXt":
            key, _, value = data[position + 8 : position + 8 + length].partition(b"\0")
            found[key.decode("latin-1")] = value.decode("latin-1")
        position += 12 + length
    return found


@pytest.mark.parametrize("samples", [
    sine(440.0), kicks([0.0, 0.5, 1.0, 1.5]), np.stack([noise(), noise(seed=2)], axis=1),
    sum(sine(hz, amplitude=0.15) for hz in (261.63, 329.63, 392.0)),
], ids=["sine", "kicks", "stereo-noise", "chord"])
def test_a_sound_draws_as_a_chat_sized_png_made_by_matplotlib(samples: np.ndarray) -> None:
    data = picture(samples, RATE, "room one")
    assert png_header(data)["width"] == WIDTH == 1000
    assert png_header(data)["height"] == HEIGHT == 600
    assert png_text(data)["Software"].startswith("Matplotlib")
    assert data.endswith(b"IEND\xaeB`\x82")


@pytest.mark.parametrize("samples", [np.zeros(RATE), np.zeros((RATE, 2)), sine(440.0, 0.01),
                                     np.full(RATE, np.nan), np.clip(4 * sine(100.0), -1, 1)],
                         ids=["silence", "stereo-silence", "10-ms", "nan", "clipped"])
def test_awkward_sounds_still_draw_at_full_size(samples: np.ndarray) -> None:
    header = png_header(picture(samples, RATE, "awkward"))
    assert (header["width"], header["height"]) == (WIDTH, HEIGHT)


def test_other_sample_rates_draw_up_to_their_own_nyquist() -> None:
    for rate in (22050, 44100, 96000):
        tone = np.sin(2 * np.pi * 1000 * np.arange(rate) / rate)
        header = png_header(picture(tone, rate, f"{rate} Hz"))
        assert (header["width"], header["height"]) == (WIDTH, HEIGHT)


def test_drawing_changes_no_global_matplotlib_state() -> None:
    # In a fresh interpreter: pyplot is never imported and rcParams stay as they were.
    # Reading rcParams["backend"] would resolve the backend through pyplot: the
    # snapshot reads the underlying dict instead.
    code = ("import matplotlib, numpy, sys; snap = lambda: dict(dict.items(matplotlib.rcParams)); "
            "before = snap(); from scorch.audio.picture import picture; "
            "picture(numpy.zeros(48000), 48000, 't'); "
            "print('matplotlib.pyplot' in sys.modules, snap() == before)")
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=root, env={"PYTHONPATH": str(root)})
    assert out.stdout.split() == ["False", "True"]
