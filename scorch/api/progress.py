"""How far a long call has come, told to whoever asked for it (an MCP client's progress).

A front end that can pass progress on (the MCP server, for a ``tools/call`` that
carries a progress token) sets :data:`PROGRESS` around the call; an operation that
takes long (a sweep) calls :func:`report` after each step. Nothing is told when no
one listens, and a listener that fails never fails the call. The variable is a
context variable: a call's worker thread gets its own copy, so calls running at
once tell their own clients only.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable

log = logging.getLogger(__name__)

Listener = Callable[[float, float | None, str | None], None]
"""``listener(done, total, message)``."""

PROGRESS: contextvars.ContextVar[Listener | None] = contextvars.ContextVar(
    "scorch_progress", default=None)


def report(done: float, total: float | None = None, message: str | None = None) -> None:
    """Tell the caller's listener, if any, that ``done`` of ``total`` is done."""
    listener = PROGRESS.get()
    if listener is None:
        return
    try:
        listener(done, total, message)
    except Exception:  # a client gone or slow must not fail the work it asked for
        log.debug("progress not told", exc_info=True)
