"""ffmpeg's ebur128 filter as an independent reference for loudness, range and true peak.

Debian's ffmpeg (the Makefile installs it) measures a file with ``ebur128=peak=true``
and, with ``metadata=1``, prints every 100 ms figure to three decimals through
``ametadata``; the last line of each is the whole file's. ffmpeg's own code (its
filter, its K-weighting coefficients, libswresample's 4x oversampling) shares nothing
with scorch's, pyloudnorm's or scipy's.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import NamedTuple

import pytest

HAVE_FFMPEG = shutil.which("ffmpeg") is not None
# In CI a missing tool is a failed install, never a reason to skip.
needs_ffmpeg = pytest.mark.skipif(not HAVE_FFMPEG and not os.environ.get("CI"),
                                  reason="ffmpeg missing (make system-deps installs it)")


class Measured(NamedTuple):
    """What ffmpeg's ebur128 says of a whole file."""

    integrated: float
    loudness_range: float
    true_peak: float
    """dBTP: the largest of the channels' true peaks."""


def reference_loudness(path: Path) -> Measured:
    """ffmpeg's integrated loudness, loudness range and true peak of the file at ``path``."""
    out = subprocess.run(
        ["ffmpeg", "-nostats", "-hide_banner", "-i", str(path), "-af",
         "ebur128=peak=true:metadata=1,ametadata=print:file=-", "-f", "null", "-"],
        capture_output=True, text=True, check=True, timeout=300)
    last: dict[str, float] = {}
    for line in out.stdout.splitlines():
        found = re.match(r"lavfi\.r128\.([\w.]+)=(\S+)", line)
        if found:
            last[found.group(1)] = float(found.group(2))
    peaks = [v for k, v in last.items() if k.startswith("true_peaks_ch")]
    return Measured(last["I"], last["LRA"], 20 * math.log10(max(peaks)))
