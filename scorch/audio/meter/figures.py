"""A mixing engineer's figures of a sound: loudness to the standard, balance and space.

The models travel as JSON (plain numbers, dB rounded to 0.1); :func:`measure` takes
samples and imports numpy (and the modules that use it) inside the call only.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

#: A band whose mono sum falls this far (dB) under its channels' mean is not mono-safe:
#: unrelated channels lose 3 dB, channels half cancelled about 6.
MONO_WEAK_DB = -6.0


class LoudnessFigures(BaseModel):
    """Loudness as ITU-R BS.1770-4 / EBU R 128 measure it (None: too short or too quiet)."""

    model_config = ConfigDict(frozen=True)

    integrated_lufs: float | None = Field(description="Integrated loudness, gated.")
    momentary_max_lufs: float | None = Field(description="Loudest 400 ms (momentary).")
    short_term_max_lufs: float | None = Field(description="Loudest 3 s (short-term).")
    range_lu: float | None = Field(description="Loudness range (EBU Tech 3342), from 3 s.")
    true_peak_dbtp: float | None = Field(description="True peak, 4x oversampled.")

    def lines(self) -> list[str]:
        """The figures as a line of text."""
        return [f"loudness: integrated {_unit(self.integrated_lufs, 'LUFS')}, range "
                f"{_unit(self.range_lu, 'LU')}, short-term max "
                f"{_unit(self.short_term_max_lufs, 'LUFS')}, momentary max "
                f"{_unit(self.momentary_max_lufs, 'LUFS')}, true peak "
                f"{_unit(self.true_peak_dbtp, 'dBTP')}"]


class Balance(BaseModel):
    """Where the energy is and how wide it is: octave and third-octave bands (IEC 61260),
    dB of mean square against full scale (the bands add up to the RMS level)."""

    model_config = ConfigDict(frozen=True)

    octaves: dict[str, float] = Field(description="dB per octave band, by nominal centre Hz.")
    thirds: dict[str, float] = Field(description="dB per third-octave band, 25 Hz-20 kHz.")
    tilt_db_per_octave: float | None = Field(description="Slope of the octave levels: 0 pink "
                                             "noise, +3 white; negative: darker.")
    crest_db: float | None = Field(description="Peak over RMS (a sine: 3.0).")
    correlation: float | None = Field(None, description="Stereo: 1 mono, 0 unrelated, -1 "
                                      "opposite phase. None for mono.")
    width: float | None = Field(None, description="Side's share of the power: 0 mono, 0.5 "
                                "unrelated channels, 1 opposite phase.")
    mono_db: float | None = Field(None, description="The mono sum's level against the "
                                  "channels' mean: 0 mono, -3 unrelated, very low: cancels.")
    band_correlation: dict[str, float] | None = Field(None, description="Correlation per "
                                                      "octave band (quiet bands left out).")
    band_width: dict[str, float] | None = Field(None, description="Width per octave band.")
    mono_weak: list[str] = Field(default_factory=list, description=(
        f"Octave bands whose mono sum falls more than {-MONO_WEAK_DB:g} dB: they thin out "
        "or vanish in mono."))

    def lines(self) -> list[str]:
        """The figures as lines of text: bands, then stereo."""
        bands = ", ".join(f"{name} {db:.0f}" for name, db in self.octaves.items())
        lines = [f"bands (octaves, dB): {bands}; tilt {_unit(self.tilt_db_per_octave, 'dB/octave')}"
                 f", crest {_unit(self.crest_db, 'dB')}"]
        if self.correlation is not None:
            widths = ", ".join(f"{name} {w:.2f}" for name, w in (self.band_width or {}).items())
            weak = f"; thin in mono: {', '.join(self.mono_weak)}" if self.mono_weak else ""
            lines.append(f"stereo: correlation {self.correlation:.2f}, width {self.width:.2f} "
                         f"(0 mono, 0.5 unrelated, 1 opposite), mono sum "
                         f"{_unit(self.mono_db, 'dB')}; width per band: {widths}{weak}")
        return lines


def measure(samples: NDArray[np.float64], sample_rate: int,
            ) -> tuple[LoudnessFigures, Balance | None]:
    """The loudness and balance of ``samples`` (frames, channels); no balance for silence."""
    import numpy as np

    from scorch.audio.meter import bands, loudness

    found = loudness.measure(samples, sample_rate)
    figures = LoudnessFigures(
        integrated_lufs=_round(found.integrated), momentary_max_lufs=_round(found.momentary_max),
        short_term_max_lufs=_round(found.short_term_max), range_lu=_round(found.loudness_range),
        true_peak_dbtp=_round(found.true_peak))
    if not np.any(samples):
        return figures, None
    spectra = bands.spectra(samples, sample_rate)
    octaves = bands.measure(spectra, sample_rate)
    thirds = bands.measure(spectra, sample_rate, octaves=False)
    balance: dict[str, object] = {
        "octaves": _by_name(octaves.names, octaves.level),
        "thirds": _by_name(thirds.names, thirds.level),
        "tilt_db_per_octave": _round(bands.tilt(octaves), 2),
        "crest_db": _round(bands.crest_db(samples)),
    }
    overall = bands.overall_stereo(samples)
    if overall is not None and octaves.correlation is not None and octaves.width is not None \
            and octaves.mono_db is not None:
        correlation, width, mono_db = overall
        balance |= {
            "correlation": _round(correlation, 3), "width": _round(width, 3),
            "mono_db": _round(mono_db),
            "band_correlation": _by_name(octaves.names, octaves.correlation, 3),
            "band_width": _by_name(octaves.names, octaves.width, 3),
            "mono_weak": [name for name, db in zip(octaves.names, octaves.mono_db, strict=True)
                          if math.isfinite(db) and db < MONO_WEAK_DB],
        }
    return figures, Balance.model_validate(balance)


def _by_name(names: tuple[str, ...], values: NDArray[np.float64], digits: int = 1,
             ) -> dict[str, float]:
    """The finite values by band name, rounded (a quiet band's NaN left out)."""
    return {name: round(float(v), digits) + 0.0 for name, v in zip(names, values, strict=True)
            if math.isfinite(float(v))}


def _unit(value: float | None, unit: str) -> str:
    return "none" if value is None else f"{value:.1f} {unit}"


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None or not math.isfinite(value) else round(value, digits) + 0.0
