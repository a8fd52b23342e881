"""Make the calling thread wake on time: a 1 ns timer slack, realtime priority where allowed.

For the few threads whose lateness a musician hears (the MIDI input thread, the
MIDI clock threads). Linux only; elsewhere, and without the rights, it does
what it can and nothing else.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import sys
import threading

_PR_SET_TIMERSLACK = 29
#: SCHED_FIFO priority: above every ordinary thread, below JACK's own (70 and up).
PRIORITY = 10


def tighten_current_thread(priority: int = PRIORITY) -> None:
    """Give the calling thread a 1 ns timer slack and SCHED_FIFO ``priority`` where allowed.

    A sleep then ends within microseconds of its time instead of the default 50 us
    slack, and a loaded machine's ordinary threads do not delay the wake-up.
    """
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_TIMERSLACK, 1, 0, 0, 0)  # the calling thread's own slack
    with contextlib.suppress(OSError, AttributeError, PermissionError):
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))  # 0: this thread


@functools.cache
def realtime_granted(priority: int = PRIORITY) -> bool:
    """True when this process may give a thread SCHED_FIFO ``priority``.

    Tried on a short-lived thread of its own, the only sure answer: root in a
    container without CAP_SYS_NICE, or a cgroup with no realtime budget, is refused
    whatever its limits say. Asked once per process.
    """
    if not sys.platform.startswith("linux"):
        return False
    granted: list[bool] = []

    def attempt() -> None:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
        except OSError:
            granted.append(False)
        else:
            granted.append(True)

    probe = threading.Thread(target=attempt, name="realtime-probe", daemon=True)
    probe.start()
    probe.join()
    return granted == [True]
