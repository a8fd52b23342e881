"""Notes from audio: basic-pitch's note model (Spotify, ICASSP 2022), from its bundled ONNX file.

basic-pitch ships its trained model inside its package, so nothing is downloaded;
its ONNX form runs on onnxruntime, without the TensorFlow its package metadata asks
for (the Makefile installs it with ``--no-deps`` beside the ``transcribe`` extra).
Where it is not installed, :func:`missing` says what to install. Everything heavy
(basic-pitch, librosa, onnxruntime) is imported on the first transcription only.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import logging
import sys
import threading
from pathlib import Path
from typing import Any

from scorch.errors import AudioFileError
from scorch.notes.capture import Note

log = logging.getLogger(__name__)

#: What the transcription needs, by import name.
NEEDS = ("basic_pitch", "onnxruntime", "librosa")
INSTALL = ("pip install --no-deps basic-pitch==0.4.0 && pip install 'scorch[transcribe]' "
           "(or `make` in a checkout)")
#: The model inside basic-pitch's package.
MODEL = Path("saved_models") / "icassp_2022" / "nmp.onnx"
#: basic-pitch's own defaults, named: a note's onset and frame probability thresholds, and
#: the shortest note kept (ms).
ONSET_THRESHOLD = 0.5
FRAME_THRESHOLD = 0.3
MIN_NOTE_MS = 58.0

_lock = threading.Lock()
"""One transcription at a time: onnxruntime's session is shared, and each uses every core."""


def missing() -> str | None:
    """Why notes cannot be transcribed here (None: they can)."""
    absent = [name for name in NEEDS if importlib.util.find_spec(name) is None]
    if not absent:
        return None
    return f"notes from audio need {', '.join(absent)}: {INSTALL}"


@functools.cache
def _model() -> Any:
    # basic-pitch warns through the root logger about the back ends it lacks (TensorFlow,
    # TFLite, CoreML) on import; the ONNX one is all it needs here.
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        import basic_pitch
        from basic_pitch.inference import Model
    finally:
        root.setLevel(level)
    return Model(Path(basic_pitch.__file__).parent / MODEL)


def transcribe(path: Path, source: str) -> list[Note]:
    """The notes in the audio file at ``path``, timed from its start, in onset order.

    Velocity is the model's amplitude scaled to 1-127; the channel is 0. A file that is
    not audio libsndfile reads raises :class:`AudioFileError`.
    """
    import soundfile
    from basic_pitch.inference import predict

    try:
        soundfile.info(str(path))
    except (RuntimeError, OSError) as err:  # libsndfile's error is a RuntimeError
        raise AudioFileError(f"{path}: cannot hear notes in it: {err}") from None
    with _lock:
        model = _model()
        # predict() prints its progress: never on stdout, the MCP server's protocol stream
        with contextlib.redirect_stdout(sys.stderr):
            try:
                _, _, events = predict(str(path), model, onset_threshold=ONSET_THRESHOLD,
                                       frame_threshold=FRAME_THRESHOLD,
                                       minimum_note_length=MIN_NOTE_MS)
            except Exception as err:  # the model's own failure, whatever its library raises
                log.exception("transcribing %s failed", path)
                raise AudioFileError(f"{path}: cannot hear notes in it: {err}") from None
    notes = [Note(float(start), max(0.0, float(end) - float(start)), int(pitch),
                  max(1, min(127, round(float(amplitude) * 127))), 0, source)
             for start, end, pitch, amplitude, *_ in events]
    notes.sort()
    return notes
