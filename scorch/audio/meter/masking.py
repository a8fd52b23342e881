"""Where two sounds heard together mask each other: their third-octave bands side by side.

Pure: it reads two sets of third-octave levels (dB, by band name). A band counts for a
sound when it is within :data:`SIGNIFICANT_DB` of that sound's loudest band. Where both
count and lie within :data:`COLLIDE_DB` of each other they collide (each blurs the
other: the place to carve one of them); where one counts and the other is
:data:`MASKED_DB` or more louder there, the quieter one is masked in that band. This
is band overlap, not a model of hearing: masking spreads upwards from a band too, so
a masked band here is the least that is lost.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

from scorch.audio.meter.iec_bands import THIRD_NAMES

SIGNIFICANT_DB = 20.0
COLLIDE_DB = 3.0
MASKED_DB = 6.0


class Masking(BaseModel):
    """Where two sounds heard at the same time cover each other."""

    model_config = ConfigDict(frozen=True)

    a: str = Field(description="The first sound.")
    b: str = Field(description="The second sound.")
    collide: list[str] = Field(description=f"Third-octave bands where both are strong and "
                               f"within {COLLIDE_DB:g} dB of each other.")
    a_masked: list[str] = Field(description=f"Bands of the first that the second tops by "
                                f"{MASKED_DB:g} dB or more.")
    b_masked: list[str] = Field(description="Bands of the second that the first tops.")
    a_masked_share: float = Field(description="Share of the first's power in its masked bands.")
    b_masked_share: float = Field(description="Share of the second's power in its masked bands.")

    def lines(self) -> list[str]:
        """The masking as lines of text."""
        def bands(names: list[str]) -> str:
            return _ranges(names) or "none"

        return [f"masking, {self.a} with {self.b}: collide at {bands(self.collide)}; {self.a} "
                f"masked at {bands(self.a_masked)} ({self.a_masked_share:.0%} of its power), "
                f"{self.b} masked at {bands(self.b_masked)} ({self.b_masked_share:.0%})"]


def masking(a: str, a_bands: dict[str, float], b: str, b_bands: dict[str, float]) -> Masking:
    """How ``a`` and ``b`` (third-octave levels by band name) mask each other."""
    shared = [name for name in a_bands if name in b_bands]
    strong_a = _significant(a_bands)
    strong_b = _significant(b_bands)
    collide = [n for n in shared if n in strong_a and n in strong_b
               and abs(a_bands[n] - b_bands[n]) <= COLLIDE_DB]
    a_masked = [n for n in shared if n in strong_a and b_bands[n] - a_bands[n] >= MASKED_DB]
    b_masked = [n for n in shared if n in strong_b and a_bands[n] - b_bands[n] >= MASKED_DB]
    return Masking(a=a, b=b, collide=collide, a_masked=a_masked, b_masked=b_masked,
                   a_masked_share=round(_share(a_bands, a_masked), 3),
                   b_masked_share=round(_share(b_bands, b_masked), 3))


def _significant(bands: dict[str, float]) -> set[str]:
    if not bands:
        return set()
    top = max(bands.values())
    return {name for name, db in bands.items() if db >= top - SIGNIFICANT_DB}


def _share(bands: dict[str, float], names: list[str]) -> float:
    total = sum(10 ** (db / 10) for db in bands.values())
    part = sum(10 ** (bands[n] / 10) for n in names)
    return part / total if total > 0 and math.isfinite(total) else 0.0


def _ranges(names: list[str]) -> str:
    """Band names as runs of neighbours: ``50-80 Hz, 2k Hz``."""
    order = {name: i for i, name in enumerate(THIRD_NAMES)}
    runs: list[list[str]] = []
    for name in sorted(names, key=lambda n: order.get(n, 0)):
        if runs and order.get(name, -9) == order.get(runs[-1][-1], -9) + 1:
            runs[-1].append(name)
        else:
            runs.append([name])
    return ", ".join(f"{r[0]}-{r[-1]} Hz" if len(r) > 1 else f"{r[0]} Hz" for r in runs)
