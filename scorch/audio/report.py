"""What one analysis found: plain numbers that travel as JSON.

Levels that would be minus infinity (digital silence) are ``None``, because
JSON cannot carry ``-inf``. Frequencies are rounded to 0.01 Hz and levels to
0.1 dB: enough for a person, and the report reads the same run after run.
"""

from __future__ import annotations

from typing import Annotated, TypeVar

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from scorch.audio.meter import Balance, LoudnessFigures
from scorch.audio.music import Harmony, Rhythm

F = TypeVar("F")
Figures = Annotated[F | None, WithJsonSchema({"type": ["object", "null"]})]
"""A group of figures, or None; its schema says an object only: the answer's text names
its fields, and listing them in listen's and render's output schemas would outgrow the
tool list's budget (tests/unit/mcp_server/test_tool_list.py)."""

#: A sample at or beyond this magnitude counts as clipped (see ``clipped_samples``).
CLIP_LEVEL = 1.0 - 1e-6

#: Sound whose peak is below this level (in dBFS) counts as silence.
SILENCE_DBFS = -80.0


class Partial(BaseModel):
    """One strong peak of the spectrum."""

    model_config = ConfigDict(frozen=True)

    hz: float = Field(description="Frequency of the peak in Hz.")
    note: str = Field(description="Nearest equal-tempered note, such as 'A4'.")
    cents: int = Field(description="Deviation from that note in cents, -50 to +50.")
    db: float = Field(
        description="Average level of this component in dBFS: a full-scale sine is 0 dB."
    )


class SoundReport(BaseModel):
    """The measurements of one stretch of audio and one sentence about it."""

    model_config = ConfigDict(frozen=True)

    seconds: float = Field(description="Length in seconds.")
    sample_rate: int = Field(description="Sample frames per second.")
    channels: int = Field(description="Number of channels.")
    frames: int = Field(description="Number of sample frames.")
    peak_dbfs: float | None = Field(
        description="Largest sample magnitude over all channels in dBFS (0 = full scale; "
        "above 0 when a float file holds overs). None when every sample is zero."
    )
    rms_dbfs: float | None = Field(
        description="Root mean square over all channels in dBFS (a full-scale sine is "
        "-3 dBFS). None when every sample is zero."
    )
    lufs: float | None = Field(
        description="Integrated loudness (ITU-R BS.1770, gated). None when shorter than "
        "one 0.4 s block, or too quiet to pass the -70 LUFS gate."
    )
    clipped_samples: int = Field(
        description=f"Samples (over all channels) with magnitude >= {CLIP_LEVEL} (full "
        "scale less 1e-6, so a sine normalised to exactly 1.0 counts), beyond it (float "
        "files keep overs as they are), or not a number at all (NaN, inf)."
    )
    clipping: bool = Field(description="True when any sample is clipped.")
    silent: bool = Field(description=f"True when the peak is below {SILENCE_DBFS:g} dBFS.")
    centroid_hz: float | None = Field(
        description="Spectral centroid (magnitude-weighted mean frequency) in Hz: low "
        "for a bass, high for a hi-hat. None for silence."
    )
    spectral_flatness: float | None = Field(
        description="Wiener entropy of the spectrum from 0 (pure tones) to 1 (white "
        "noise). None for silence."
    )
    fundamental_hz: float | None = Field(
        description="Fundamental frequency in Hz (YIN, median over the sound). None when "
        "unpitched, silent, or when the pitch moves by more than a semitone (a melody: "
        "see onset_notes)."
    )
    note: str | None = Field(
        description="Note nearest the fundamental, such as 'A4'; None without a fundamental."
    )
    cents: int | None = Field(
        description="Deviation of the fundamental from that note in cents, -50 to +50."
    )
    pitch_confidence: float | None = Field(
        description="How periodic the sound is, from 0 to 1 (1 - YIN aperiodicity, "
        "weighted by the share of loud frames that are pitched). None for silence."
    )
    partials: list[Partial] = Field(
        description="Up to 8 strongest spectral peaks, lowest frequency first."
    )
    onsets: list[float] = Field(
        description="Times in seconds where a new sound starts (spectral flux peaks). "
        "A sound already playing when the audio begins is not an onset unless it "
        "decays like a hit."
    )
    onset_notes: list[str | None] = Field(
        description="Note of the sound starting at each onset, in the same order; None "
        "where it is unpitched (a drum without a clear pitch, noise)."
    )
    held: Partial | None = Field(
        None, description="The strongest tone that lasts through the whole sound (a drone, a "
        "held note under a beat or a melody); None when nothing holds.")
    stereo_correlation: float | None = Field(
        description="Pearson correlation of the first two channels: 1 mono-compatible, "
        "0 unrelated, -1 opposite phase. None for mono, silence or a silent channel."
    )
    loudness: Figures[LoudnessFigures] = Field(
        None, description="Loudness to ITU-R BS.1770-4 / EBU R 128: integrated, momentary "
        "and short-term maxima, loudness range, true peak.")
    balance: Figures[Balance] = Field(
        None, description="Energy per octave and third-octave band, tilt, crest factor, "
        "stereo correlation and width (overall and per band), mono compatibility.")
    rhythm: Figures[Rhythm] = Field(
        None, description="Tempo and how far the onsets lie from the grid (4 onsets or more).")
    harmony: Figures[Harmony] = Field(
        None, description="Key and chords of what plays (pitched sound only).")
    summary: str = Field(description="One sentence saying what was heard.")
