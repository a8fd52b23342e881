"""True peaks of captured sound, by two references that do not share the stage's detector.

- :func:`bs1770`: ITU-R BS.1770-4 Annex 2's method as libebur128 (the EBU R 128 reference
  library) implements it: 4x oversampling by a 49-tap Hann-windowed sinc.
- :func:`ideal`: the band-limited signal itself, oversampled 16x by a long Kaiser sinc
  (what a perfect reconstruction filter would put out).

ffmpeg's ``ebur128=peak=true`` resamples with libswresample and reads white noise near
Nyquist about 0.7 dB higher than both: it is not used as a limit.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import signal

#: Samples at each end of a window left out: a window cut out of a longer sound rings there.
EDGE = 64


def _hann_sinc() -> list[np.ndarray]:
    taps = 49
    coefs = []
    for j in range(taps):
        m = j - (taps - 1) / 2
        c = 1.0 if abs(m) < 1e-10 else math.sin(m * math.pi / 4) / (m * math.pi / 4)
        coefs.append(c * 0.5 * (1 - math.cos(2 * math.pi * j / (taps - 1))))
    full = np.array(coefs)
    return [full[k::4] for k in range(4)]


_PHASES = _hann_sinc()


def bs1770(sound: np.ndarray) -> float:
    """The largest true peak of any channel (rows), as BS.1770-4's 4x oversampling reads it."""
    top = 0.0
    for row in np.atleast_2d(sound).astype(np.float64):
        for phase in _PHASES:
            up = np.convolve(row, phase)[EDGE:len(row) - EDGE]
            top = max(top, float(np.max(np.abs(up))) if len(up) else 0.0)
    return top


def ideal(sound: np.ndarray) -> float:
    """The largest peak of any channel's band-limited signal (16x, a long Kaiser sinc)."""
    top = 0.0
    for row in np.atleast_2d(sound).astype(np.float64):
        up = signal.resample_poly(row, 16, 1, window=("kaiser", 12.0))[EDGE * 16:-EDGE * 16]
        top = max(top, float(np.max(np.abs(up))) if len(up) else 0.0)
    return top
