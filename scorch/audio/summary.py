"""Say in one sentence what a report heard. Pure: reads the numbers, nothing else."""

from __future__ import annotations

from scorch.audio.notes import format_cents
from scorch.audio.report import SILENCE_DBFS, Partial, SoundReport

_COUNTS = ("No", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine",
           "Ten", "Eleven", "Twelve")
_MAX_TIMES = 8
# Spectral flatness above this is noise whatever peaks stand out of it.
_NOISY_FLATNESS = 0.3
# A partial within this fraction of an integer multiple of a lower one is its harmonic.
_HARMONIC_TOLERANCE = 0.015
_OPPOSITE_PHASE = -0.5
# Shorter than this (in seconds) there is no room for pitch or onsets.
_SHORT = 0.05
# An onset this early (in seconds) is the start of what was heard.
_AT_START = 0.1


def describe(report: SoundReport, percussive: bool = False) -> str:
    """Return one sentence about ``report``; ``percussive`` if its onsets decay like hits."""
    if report.frames == 0:
        return "Nothing to hear: the audio is empty."
    if report.silent:
        if report.peak_dbfs is None:
            return "Silence: every sample is zero."
        return f"Silence: peak {report.peak_dbfs:.1f} dBFS, below {SILENCE_DBFS:g} dBFS."
    what, level = _what(report, percussive)
    return f"{what}, {level}, {_clipping(report)}{_stereo(report)}."


def _what(report: SoundReport, percussive: bool) -> tuple[str, str]:
    rms = f"{_db(report.rms_dbfs)} dBFS RMS"
    pitch = _pitch(report)
    if report.seconds < _SHORT:
        return f"A very short sound ({report.seconds * 1000:.0f} ms)", rms
    held = report.held
    one_start = (len(report.onsets) == 1 and report.onsets[0] < _AT_START and held is not None
                 and report.onset_notes[0] in (None, held.note))  # a held note from its start
    if report.onsets and (percussive or len(report.onsets) > 1) and not one_start:
        count = len(report.onsets)
        kind = "percussive hit" if percussive else "note"
        text = f"{_count(count)} {kind}{'s' if count > 1 else ''} at {_times(report.onsets)} s"
        notes = {n for n in report.onset_notes if n}
        over = ""
        if held is not None and held.note not in notes:
            over = (f", over a held tone at {held.hz:.1f} Hz ({held.note} "
                    f"{format_cents(held.cents)} cents)")
            if report.note == held.note:
                pitch = None  # the fundamental is the held tone's
        if pitch:
            text += f", pitched near {pitch}"
        elif len(notes) == 1 and all(report.onset_notes):
            text += f", pitched near {notes.pop()}"
        elif len(notes) > 1:
            text += f", playing {_notes(report.onset_notes)}"
        text += over
        return text, f"{_db(report.peak_dbfs)} dBFS peak" if percussive else rms
    chord = _chord_notes(report)
    if chord:
        names = ", ".join(p.note for p in chord)
        freqs = ", ".join(f"{p.hz:.1f}" for p in chord)
        return f"A chord of {names} ({freqs} Hz)", rms
    if pitch:
        harmonics = _harmonic_count(report)
        kind = "harmonic-rich tone" if harmonics >= 3 else "tone"
        return f"A steady {kind} at {pitch}", rms
    noisy = report.spectral_flatness is not None and report.spectral_flatness >= _NOISY_FLATNESS
    if len(report.partials) == 1 and not noisy:
        only = report.partials[0]
        cents = format_cents(only.cents)
        return f"A steady tone at {only.hz:.1f} Hz ({only.note} {cents} cents)", rms
    centre = _hz(report.centroid_hz) if report.centroid_hz else "?"
    return f"Noisy, unpitched sound centred near {centre}", rms


def _pitch(report: SoundReport) -> str | None:
    if report.fundamental_hz is None or report.note is None or report.cents is None:
        return None
    return f"{report.fundamental_hz:.1f} Hz ({report.note} {format_cents(report.cents)} cents)"


def _is_harmonic(hz: float, of: float) -> bool:
    ratio = hz / of
    return round(ratio) >= 1 and abs(ratio - round(ratio)) <= _HARMONIC_TOLERANCE * ratio


def _harmonic_count(report: SoundReport) -> int:
    """Count the partials that are harmonics of the fundamental (itself included)."""
    f0 = report.fundamental_hz
    return sum(_is_harmonic(p.hz, f0) for p in report.partials) if f0 else 0


def _chord_notes(report: SoundReport) -> list[Partial]:
    """Return the partials that are no harmonic of a lower one, if they make a chord.

    Three or more such notes far above the fundamental (which, for an
    equal-tempered chord, is a low common divisor nobody hears) make a chord;
    so do two with no fundamental at all. A tone missing only its first
    harmonic still starts at twice the fundamental and stays a tone.
    """
    if report.spectral_flatness is not None and report.spectral_flatness >= _NOISY_FLATNESS:
        return []
    roots: list[Partial] = []
    for partial in report.partials:
        if not any(_is_harmonic(partial.hz, root.hz) for root in roots):
            roots.append(partial)
    if len({p.note for p in roots}) < 2:
        return []
    f0 = report.fundamental_hz
    if f0 is None or (len(roots) >= 3 and roots[0].hz >= 2.5 * f0):
        return roots
    return []


def _db(value: float | None) -> str:
    return "?" if value is None else f"{round(value) + 0:d}"  # + 0: no "-0"


def _notes(notes: list[str | None]) -> str:
    shown = ", ".join(n or "unpitched" for n in notes[:_MAX_TIMES])
    return f"{shown}..." if len(notes) > _MAX_TIMES else shown


def _count(count: int) -> str:
    return _COUNTS[count] if count < len(_COUNTS) else str(count)


def _times(times: list[float]) -> str:
    shown = ", ".join(f"{t:.2f}" for t in times[:_MAX_TIMES])
    more = len(times) - _MAX_TIMES
    return f"{shown} and {more} more" if more > 0 else shown


def _hz(hz: float) -> str:
    return f"{hz / 1000:.1f} kHz" if hz >= 1000 else f"{hz:.0f} Hz"


def _clipping(report: SoundReport) -> str:
    if not report.clipping:
        return "no clipping"
    peak = f", peak {report.peak_dbfs:+.1f} dBFS" if report.peak_dbfs is not None else ""
    return f"CLIPPING on {report.clipped_samples:,} samples{peak}"


def _stereo(report: SoundReport) -> str:
    correlation = report.stereo_correlation
    if correlation is not None and correlation <= _OPPOSITE_PHASE:
        return f", left and right in opposite phase (correlation {correlation:.2f})"
    return ""
