"""Name each Python thread's native thread after it (Linux, 15 characters), for bench.idle.

On ``PYTHONPATH`` of the measured process only: /proc/PID/task/*/comm then says
which thread wakes, where it would say "python" for all of them.
"""

import ctypes
import threading

_PR_SET_NAME = 15
_libc = ctypes.CDLL(None)
_bootstrap = getattr(threading.Thread, "_bootstrap_inner")  # noqa: B009 (private: no stub)


def _named(self: threading.Thread) -> None:
    _libc.prctl(_PR_SET_NAME, self.name.encode()[:15], 0, 0, 0)
    _bootstrap(self)


setattr(threading.Thread, "_bootstrap_inner", _named)  # noqa: B010
