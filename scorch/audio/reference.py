"""A reference sound's figures, and what a sound differs from it by. Pure.

A reference keeps what a mix is judged by: loudness, the octave and third-octave
balance, tilt, crest, stereo width, brightness, tempo and key. A comparison gives
each figure's difference, the balance's difference per band in dB once both sounds
are matched in level (so "4 dB more at 63 Hz" means a change of balance, not of
volume), and one sentence saying what to change, largest first.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from scorch.audio.meter import Balance, LoudnessFigures
from scorch.audio.report import SoundReport

#: Differences under these are not worth a word: loudness (LU), a band (dB), width.
LOUDNESS_STEP, BAND_STEP, WIDTH_STEP, RANGE_STEP = 1.0, 3.0, 0.1, 3.0
#: A band counts in a comparison when it is within this much (dB) of either sound's
#: loudest band: balance far below the music is not balance.
BAND_RANGE_DB = 30.0
#: True peaks above this (dBTP) risk clipping once encoded (EBU R 128 asks -1).
TRUE_PEAK_LIMIT = -1.0
_ADVICE_BANDS = 2  # band changes one sentence names at most


class Reference(BaseModel):
    """A named sound's figures, kept to compare others with."""

    model_config = ConfigDict(frozen=True)

    name: str
    source: str = Field(description="What it was captured from.")
    captured_at: float = Field(description="Unix time.")
    seconds: float
    loudness: LoudnessFigures | None
    balance: Balance | None
    centroid_hz: float | None
    tempo_bpm: float | None
    key: str | None

    @classmethod
    def of(cls, name: str, source: str, captured_at: float, report: SoundReport) -> Reference:
        """The figures of ``report`` kept as reference ``name``."""
        return cls(name=name, source=source, captured_at=captured_at, seconds=report.seconds,
                   loudness=report.loudness, balance=report.balance,
                   centroid_hz=report.centroid_hz,
                   tempo_bpm=report.rhythm.tempo_bpm if report.rhythm else None,
                   key=report.harmony.key if report.harmony else None)

    def line(self) -> str:
        """One line: its name, source and main figures."""
        loud = self.loudness
        parts = [f"{self.name}: {self.seconds:g} s of {self.source}"]
        if loud is not None and loud.integrated_lufs is not None:
            parts.append(f"{loud.integrated_lufs:.1f} LUFS, range {loud.range_lu} LU, "
                         f"true peak {loud.true_peak_dbtp} dBTP")
        if self.balance is not None:
            parts.append(f"tilt {self.balance.tilt_db_per_octave} dB/octave")
            if self.balance.width is not None:
                parts.append(f"width {self.balance.width:.2f}")
        if self.centroid_hz is not None:
            parts.append(f"centroid {self.centroid_hz:.0f} Hz")
        if self.tempo_bpm is not None:
            parts.append(f"{self.tempo_bpm:g} bpm")
        if self.key:
            parts.append(self.key)
        return ", ".join(parts)


class Difference(BaseModel):
    """One figure of the sound heard against the reference's."""

    model_config = ConfigDict(frozen=True)

    figure: str
    heard: float | None
    reference: float | None
    difference: float | None = Field(description="heard - reference (None: either missing).")
    unit: str


class Comparison(BaseModel):
    """How a sound differs from a reference, and what to change."""

    model_config = ConfigDict(frozen=True)

    reference: str
    figures: list[Difference]
    octaves: dict[str, float] = Field(description="Balance difference per octave band, dB "
                                      "(heard - reference, level matched by the median band).")
    thirds: dict[str, float] = Field(description="The same per third-octave band.")
    key: str | None = Field(description="The keys heard and of the reference, if they differ.")
    advice: str = Field(description="One sentence: what to change, largest first.")

    def lines(self) -> list[str]:
        """The comparison as lines of text."""
        shown = [f"{d.figure} {d.difference:+.1f} {d.unit}" for d in self.figures
                 if d.difference is not None]
        bands = ", ".join(f"{name} {db:+.0f}" for name, db in self.octaves.items())
        lines = [f"against {self.reference}: {'; '.join(shown)}"]
        if bands:
            lines.append(f"balance against {self.reference} (octaves, dB, level matched): "
                         f"{bands}")
        if self.key:
            lines.append(f"key: {self.key}")
        return [*lines, f"to match {self.reference}: {self.advice}"]


def compare(report: SoundReport, reference: Reference) -> Comparison:
    """What ``report`` differs from ``reference`` by, figure by figure and band by band."""
    heard_loudness, ref_loudness = report.loudness, reference.loudness
    heard_balance, ref_balance = report.balance, reference.balance

    def loud(field: str, heard: LoudnessFigures | None) -> float | None:
        return None if heard is None else getattr(heard, field)

    def shape(field: str, balance: Balance | None) -> float | None:
        return None if balance is None else getattr(balance, field)

    figures = [
        _difference("integrated loudness", loud("integrated_lufs", heard_loudness),
                    loud("integrated_lufs", ref_loudness), "LU"),
        _difference("loudness range", loud("range_lu", heard_loudness),
                    loud("range_lu", ref_loudness), "LU"),
        _difference("true peak", loud("true_peak_dbtp", heard_loudness),
                    loud("true_peak_dbtp", ref_loudness), "dB"),
        _difference("tilt", shape("tilt_db_per_octave", heard_balance),
                    shape("tilt_db_per_octave", ref_balance), "dB/octave"),
        _difference("crest", shape("crest_db", heard_balance), shape("crest_db", ref_balance),
                    "dB"),
        _difference("width", shape("width", heard_balance), shape("width", ref_balance), ""),
        _difference("centroid", report.centroid_hz, reference.centroid_hz, "Hz"),
        _difference("tempo", report.rhythm.tempo_bpm if report.rhythm else None,
                    reference.tempo_bpm, "bpm"),
    ]
    octaves = _balance(heard_balance.octaves if heard_balance else {},
                       ref_balance.octaves if ref_balance else {})
    thirds = _balance(heard_balance.thirds if heard_balance else {},
                      ref_balance.thirds if ref_balance else {})
    heard_key = report.harmony.key if report.harmony else None
    key = (f"{heard_key or 'unclear'} against {reference.key or 'unclear'}"
           if heard_key != reference.key else None)
    return Comparison(reference=reference.name, figures=figures, octaves=octaves,
                      thirds=thirds, key=key,
                      advice=advice(figures, octaves, report.loudness))


def _difference(figure: str, heard: float | None, reference: float | None,
                unit: str) -> Difference:
    diff = None if heard is None or reference is None else round(heard - reference, 2) + 0.0
    return Difference(figure=figure, heard=heard, reference=reference, difference=diff,
                      unit=unit)


def _balance(heard: dict[str, float], reference: dict[str, float]) -> dict[str, float]:
    """Per band, heard - reference in dB once both are matched in level, over the bands
    either sound has within :data:`BAND_RANGE_DB` of its loudest.

    The level is matched by the median of the bands' differences, not by the total power:
    a boost in one band then shows in that band alone, instead of the rest seeming cut.
    """
    shared = [name for name in heard if name in reference]
    if not shared:
        return {}
    top_heard, top_ref = max(heard[n] for n in shared), max(reference[n] for n in shared)
    kept = [n for n in shared
            if heard[n] >= top_heard - BAND_RANGE_DB or reference[n] >= top_ref - BAND_RANGE_DB]
    differences = sorted(heard[n] - reference[n] for n in kept)
    middle = len(differences) // 2
    offset = (differences[middle] if len(differences) % 2
              else (differences[middle - 1] + differences[middle]) / 2)
    return {name: round(heard[name] - reference[name] - offset, 1) + 0.0 for name in kept}


def advice(figures: list[Difference], octaves: dict[str, float],
           loudness: LoudnessFigures | None) -> str:
    """One sentence saying what to change, largest first; or that it is close enough."""
    by_name = {d.figure: d for d in figures}
    steps: list[tuple[float, str]] = []
    level = by_name["integrated loudness"].difference
    if level is not None and abs(level) >= LOUDNESS_STEP:
        steps.append((abs(level) / LOUDNESS_STEP,
                      f"turn it {'down' if level > 0 else 'up'} {abs(level):.1f} dB"))
    for name, db in sorted(octaves.items(), key=lambda item: -abs(item[1]))[:_ADVICE_BANDS]:
        if abs(db) >= BAND_STEP:
            steps.append((abs(db) / BAND_STEP, f"{'cut' if db > 0 else 'boost'} around "
                          f"{name} Hz by {abs(db):.0f} dB"))
    width = by_name["width"]
    if width.difference is not None and abs(width.difference) >= WIDTH_STEP:
        steps.append((abs(width.difference) / WIDTH_STEP,
                      f"{'narrow' if width.difference > 0 else 'widen'} the stereo (width "
                      f"{width.heard:.2f} against {width.reference:.2f})"))
    spread = by_name["loudness range"].difference
    if spread is not None and abs(spread) >= RANGE_STEP:
        steps.append((abs(spread) / RANGE_STEP,
                      f"{'compress more' if spread > 0 else 'compress less'} (range "
                      f"{by_name['loudness range'].heard:.1f} against "
                      f"{by_name['loudness range'].reference:.1f} LU)"))
    peak = loudness.true_peak_dbtp if loudness is not None else None
    if peak is not None and peak > TRUE_PEAK_LIMIT:
        steps.append((peak - TRUE_PEAK_LIMIT + 1, f"limit the peaks ({peak:.1f} dBTP, keep "
                      f"under {TRUE_PEAK_LIMIT:g})"))
    if not steps:
        return (f"Close to it: loudness within {LOUDNESS_STEP:g} LU and every band within "
                f"{BAND_STEP:g} dB.")
    ordered = [text for _, text in sorted(steps, key=lambda step: -step[0])]
    said = ordered[0] if len(ordered) == 1 else f"{', '.join(ordered[:-1])} and {ordered[-1]}"
    return f"{said[0].upper()}{said[1:]}."
