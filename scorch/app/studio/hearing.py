"""Hear a sound file: measure it and draw it, at once, and keep the first call cheap.

The analysis and the picture (``scorch.audio``) run side by side, the analysis
in a helper thread, so a listen costs the longer of the two, not their sum.
Their libraries (numpy, scipy, soundfile, pyloudnorm, matplotlib) load on first
use; :func:`warm_up` loads them in a background thread of low priority once the
rooms are READY (and, should a listen come first, as its capture starts), so the
first answer does not wait for them; ``scorch run``'s start and the MIDI path never
import them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING

from scorch.primitives.disk import write_atomically

if TYPE_CHECKING:
    from scorch.audio import SoundReport
    from scorch.audio.music import Grid

log = logging.getLogger(__name__)

#: At most this much of a file is heard (a three-hour recording stays cheap).
MAX_FILE_SECONDS = 120.0

_warm = threading.Lock()
_begin: threading.Event | None = None
"""Set when the warm-up should begin at once (None: none was asked for yet)."""
_thread: threading.Thread | None = None
_settled = threading.Event()
"""Set when the process stops: a warm-up not begun never begins."""
#: Seconds :func:`settle` waits for a warm-up under way (its imports cannot be interrupted).
SETTLE_WAIT = 30.0
#: The warm-up thread's niceness: it gives way to anything else this process does.
WARM_NICE = 10


def warm_up(delay: float = 0.0) -> None:
    """Load the analysis and drawing libraries in a background thread, once per process:
    after ``delay`` seconds (the first answers after READY go out first), or at once when
    asked again without one (a listen has begun)."""
    global _begin, _thread
    with _warm:
        begin, first = _begin or threading.Event(), _begin is None
        _begin = begin
        if first:
            _thread = threading.Thread(target=_warm_up, args=(begin, delay),
                                       name="audio-warm-up", daemon=True)
            _thread.start()
    if delay <= 0:
        begin.set()


def settle() -> None:
    """Cancel a warm-up not begun and wait for one under way, before the process exits.

    A daemon thread still importing numpy or logging while the interpreter finalizes
    can abort the process (SIGABRT instead of a clean exit status under systemd).
    """
    global _begin, _thread
    _settled.set()
    with _warm:
        thread, begin = _thread, _begin
    if begin is not None:
        begin.set()
    if thread is not None:
        thread.join(SETTLE_WAIT)
        if thread.is_alive():
            log.warning("listen's libraries still loading after %.0f s at exit", SETTLE_WAIT)
            return
    with _warm:  # an orchestra started again in this process warms up again
        _begin = _thread = None
        _settled.clear()


def _warm_up(begin: threading.Event, delay: float) -> None:
    begin.wait(delay)
    if _settled.is_set():
        return
    with contextlib.suppress(OSError, AttributeError):  # this thread only, where it can
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WARM_NICE)
    started = time.monotonic()
    try:
        import numpy as np
        import soundfile  # noqa: F401  (read_audio's, imported when a file is read)

        from scorch.audio import analyse
        from scorch.audio.picture import picture

        tone = np.sin(np.arange(4800) * 0.0576).astype(np.float32)
        analyse(tone, 48000)
        picture(tone, 48000, "warm-up")
    except Exception:  # a failure here shows up, with its cause, on the first real call
        log.debug("audio warm-up failed", exc_info=True)
        return
    log.info("listen's libraries loaded in the background in %.1f s",
             time.monotonic() - started)


def hear(audio: Path, picture: Path | None, label: str, grid: Grid | None = None,
         ) -> SoundReport:
    """Measure ``audio`` (its onsets against ``grid``) and draw it to ``picture`` (PNG)
    titled ``label``; ``picture`` None: measure only."""
    from scorch.audio import analyse, read_audio
    from scorch.audio.picture import picture as draw

    samples, rate = read_audio(audio, MAX_FILE_SECONDS)
    if picture is None:
        return analyse(samples, rate, grid)
    measured: Future[SoundReport] = Future()

    def measure() -> None:
        try:
            measured.set_result(analyse(samples, rate, grid))
        except BaseException as err:
            measured.set_exception(err)

    helper = threading.Thread(target=measure, name="audio-analysis", daemon=True)
    helper.start()
    png = draw(samples, rate, label)
    write_atomically(picture, png, durable=False)
    return measured.result()


def prune(folder: Path, keep: int) -> None:
    """Keep the ``keep`` newest files of each kind in ``folder`` (listens are not recordings)."""
    def age(path: Path) -> float:
        try:
            return path.stat().st_mtime
        except OSError:  # removed meanwhile by another listen's prune
            return 0.0

    for pattern in ("*.wav", "*.png"):
        files = sorted(folder.glob(pattern), key=age, reverse=True)
        for old in files[keep:]:
            old.unlink(missing_ok=True)
