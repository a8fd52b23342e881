"""Measure a stretch of audio: levels, loudness, pitch, partials, onsets, stereo.

:func:`analyse` takes samples; :func:`analyse_file` reads any file soundfile
reads (WAV, AIFF, FLAC, scsynth's float WAV). Both return a
:class:`~scorch.audio.report.SoundReport` with plain numbers and one sentence.

numpy, scipy, soundfile and pyloudnorm are imported inside the functions, so
importing this module costs nothing at ``scorch run`` start-up.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scorch.audio.notes import nearest_note
from scorch.audio.report import SILENCE_DBFS, Partial, SoundReport
from scorch.audio.summary import describe
from scorch.errors import AudioFileError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from scorch.audio.music import Grid
    from scorch.audio.pitch import Pitch
    from scorch.audio.spectrum import Peak

# Mixing to mono cancels sound whose channels are in opposite phase; below this
# share of the channels' own level, the loudest channel stands in for the mix.
_CANCELLED = 0.25
# Pitched frames further apart than a semitone: a melody or a glide, no one pitch.
_GLIDE_CENTS = 100.0
# Each onset's note is measured on this many frames (the whole sound on 24)
# within this many seconds of it, where the new sound outweighs what goes on.
_FRAMES_PER_NOTE = 6
_NOTE_SECONDS = 0.2
# An onset whose strongest new peak rises less than this (dB) above what was there is a
# wobble of what plays (a filter, a beat between partials), not a new sound.
_MIN_RISE_DB = 15.0
# ...unless the whole sound rises this much (dB): a hit over the tail of the same hit.
_MIN_LEVEL_RISE_DB = 3.0
# An onset's own pitch (YIN) names its note only where the spectrum rose this much (dB).
_OWN_RISE_DB = 6.0


def analyse(samples: Any, sample_rate: int, grid: Grid | None = None) -> SoundReport:
    """Measure ``samples`` shaped (frames,) or (frames, channels), floats in [-1, 1].

    Integer samples are scaled to [-1, 1] by their type's range. Samples that
    are not finite (NaN, inf) count as clipped and are measured as zero. ``grid``: the
    beats the onsets are placed on (None: the sound's own tempo).
    """

    from scorch.audio import layers, levels, onsets, pitch, spectrum
    from scorch.audio.meter import figures
    from scorch.audio.music import harmony, rhythm

    data, not_finite = levels.sanitise(_as_frames(samples, sample_rate))
    frames, channels = data.shape
    peak, beyond = levels.peak_and_clipped(data)
    clipped = beyond + not_finite
    peak_db = levels.dbfs(peak)
    silent = peak_db is None or peak_db < SILENCE_DBFS
    measured: dict[str, Any] = {
        "seconds": round(frames / sample_rate, 6),
        "sample_rate": sample_rate,
        "channels": channels,
        "frames": frames,
        "peak_dbfs": _round(peak_db, 1),
        "rms_dbfs": _round(levels.dbfs(levels.rms(data)), 1),
        "clipped_samples": clipped,
        "clipping": clipped > 0,
        "silent": silent,
        "stereo_correlation": _round(levels.stereo_correlation(data), 3),
    }
    loudness, balance = figures.measure(data, sample_rate)
    measured |= {"lufs": loudness.integrated_lufs, "loudness": loudness, "balance": balance}
    percussive = False
    if silent:
        measured |= {"centroid_hz": None, "spectral_flatness": None, "fundamental_hz": None,
                     "note": None, "cents": None, "pitch_confidence": None, "partials": [],
                     "onsets": [], "onset_notes": [], "held": None}
    else:
        mono = _mono(data)
        average = spectrum.average_spectrum(mono, sample_rate)
        candidates = [(o, layers.added(mono, sample_rate, o.seconds))
                      for o in onsets.detect(mono, sample_rate)]
        heard = [(o, hz) for o, (hz, rise) in candidates  # not a wobble of what plays
                 if rise >= _MIN_RISE_DB
                 or layers.rise_db(mono, sample_rate, o.seconds) >= _MIN_LEVEL_RISE_DB]
        found = [o for o, _ in heard]
        percussive = onsets.percussive(found)
        steady = layers.held(mono, sample_rate)
        measured |= _pitch_fields(pitch.estimate(mono, sample_rate))
        bounds = [round(onset.seconds * sample_rate) for onset in found] + [len(mono)]
        attack = round(_NOTE_SECONDS * sample_rate)
        notes = [pitch.estimate(mono[start : min(end, start + attack)], sample_rate,
                                frames=_FRAMES_PER_NOTE)
                 for start, end in itertools.pairwise(bounds)]
        added = [hz for _, hz in heard]
        measured |= {
            "centroid_hz": _round(spectrum.centroid(average), 1),
            "spectral_flatness": _round(spectrum.flatness(average), 3),
            "partials": [_partial(p.hz, p.db) for p in spectrum.peaks(average)],
            "onsets": [round(onset.seconds, 3) for onset in found],
            "onset_notes": [_onset_note(hz, p, steady, layers.rise_at(
                mono, sample_rate, o.seconds, p.hz) if p is not None and p.hz else 0.0)
                            for o, hz, p in zip(found, added, notes, strict=True)],
            "held": _partial(steady.hz, steady.db) if steady is not None else None,
        }
        timing = rhythm(measured["onsets"], grid)
        measured |= {"rhythm": timing[0] if timing else None,
                     "harmony": harmony(mono, sample_rate, measured["onsets"],
                                        timing[1] if timing else None)}
    report = SoundReport(**measured, summary="")
    return report.model_copy(update={"summary": describe(report, percussive)})


def _onset_note(added: float | None, own: Pitch | None, held: Peak | None,
                own_rise: float) -> str | None:
    """The note an onset starts: what it adds to the spectrum, unless that is a harmonic
    (2nd to 8th) of the note's own pitch (YIN over its first moments) and that pitch is not
    the held tone under it: a plucked string's added spectrum is led by an overtone.

    The own pitch counts only where the spectrum rose at it (``own_rise`` dB): over a
    drone, YIN may hear a period common to the drone and the note (C5 over A2 heard as
    G#2, C5's fifth subharmonic), which the onset added nothing to."""
    own_hz = own.hz if own is not None and own.hz else None
    if added is None:
        return nearest_note(own_hz).name if own_hz else None
    if own_hz is not None and own_rise >= _OWN_RISE_DB \
            and not (held is not None and _same_pitch(own_hz, held.hz)):
        ratio = added / own_hz
        if 2 <= round(ratio) <= 8 and abs(ratio - round(ratio)) <= 0.03 * ratio:
            return nearest_note(own_hz).name
    return nearest_note(added).name


def _same_pitch(a: float, b: float) -> bool:
    return abs(12 * math.log2(a / b)) < 0.5


def read_audio(path: Path | str, max_seconds: float | None = None,
               ) -> tuple[NDArray[np.float32], int]:
    """Read ``path`` with soundfile: float32 samples shaped (frames, channels), and the rate.

    ``max_seconds`` reads only that much from the start (a long recording stays cheap).
    """
    import soundfile

    try:
        if max_seconds is None:
            data, sample_rate = soundfile.read(str(path), dtype="float32", always_2d=True)
        else:
            with soundfile.SoundFile(str(path)) as sound:
                sample_rate = sound.samplerate
                data = sound.read(round(max_seconds * sample_rate), dtype="float32",
                                  always_2d=True)
    except (soundfile.LibsndfileError, RuntimeError, ValueError, MemoryError) as err:
        # A FLAC whose writer was killed claims 2**63 - 1 frames: repair it first.
        raise AudioFileError(f"{path}: cannot read audio: {err}") from err
    return data, int(sample_rate)


def analyse_file(path: Path | str) -> SoundReport:
    """Read ``path`` with soundfile and measure it."""
    return analyse(*read_audio(path))


def _as_frames(samples: Any, sample_rate: int) -> NDArray[np.float64]:
    import numpy as np

    if sample_rate <= 0:
        raise ValueError(f"sample_rate must be positive, not {sample_rate}")
    data = np.asarray(samples)
    if np.issubdtype(data.dtype, np.integer):
        data = data / float(-np.iinfo(data.dtype).min)
    data = np.asarray(data, dtype=np.float64)
    if data.ndim == 1:
        data = data[:, np.newaxis]
    if data.ndim != 2:
        raise ValueError(
            f"samples must be shaped (frames,) or (frames, channels), not {data.shape}"
        )
    if 0 < data.shape[0] < data.shape[1]:
        raise ValueError(
            f"samples shaped {data.shape} have more channels than frames: "
            "pass (frames, channels), not (channels, frames)"
        )
    return data


def _mono(data: NDArray[np.float64]) -> NDArray[np.float64]:
    import numpy as np

    mix = data.mean(axis=1)
    energies = np.mean(data**2, axis=0)
    if np.mean(mix**2) < _CANCELLED**2 * energies.mean():
        return np.ascontiguousarray(data[:, int(np.argmax(energies))])
    return mix


def _pitch_fields(found: Any) -> dict[str, Any]:
    if found is None:
        return {"fundamental_hz": None, "note": None, "cents": None, "pitch_confidence": None}
    fields: dict[str, Any] = {"pitch_confidence": round(found.confidence, 3)}
    if found.hz is None or found.spread_cents > _GLIDE_CENTS:
        return fields | {"fundamental_hz": None, "note": None, "cents": None}
    note = nearest_note(found.hz)
    return fields | {"fundamental_hz": round(found.hz, 2), "note": note.name, "cents": note.cents}


def _partial(hz: float, db: float) -> Partial:
    note = nearest_note(hz)
    return Partial(hz=round(hz, 2), note=note.name, cents=note.cents, db=round(db, 1))


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None or not math.isfinite(value) else round(value, digits)
