"""Hear what a room plays: measure audio, draw it, and keep recordings readable.

Nothing here needs a running room: every function takes samples or a file.

Import cost: importing ``scorch.audio`` or any module the package exposes
(:mod:`~scorch.audio.analysis`, :mod:`~scorch.audio.picture`,
:mod:`~scorch.audio.recording_file`, :mod:`~scorch.audio.report`,
:mod:`~scorch.audio.notes`) loads no numpy, scipy, soundfile, pyloudnorm or
matplotlib; those load on the first call that needs them, so ``scorch run``
does not pay for them at start-up. The number-crunching helpers
(:mod:`~scorch.audio.levels`, :mod:`~scorch.audio.spectrum`,
:mod:`~scorch.audio.pitch`, :mod:`~scorch.audio.onsets`) import numpy at the
top and are themselves imported only inside those calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.audio.analysis import analyse, read_audio
    from scorch.audio.recording_file import probe, repair
    from scorch.audio.reference import Comparison, Reference, compare
    from scorch.audio.report import Figures, SoundReport

__all__ = [
    "Comparison", "Figures", "Reference", "SoundReport", "analyse", "compare", "probe",
    "read_audio", "repair",
]
__getattr__ = lazy_face(__name__, __file__)
