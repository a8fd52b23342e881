"""What scsynth posted about the commands a piece of code sent: its ``FAILURE`` lines.

scsynth answers a failing command on its console only (``FAILURE IN SERVER /s_new
SynthDef not found``, after a ``*** ERROR`` line naming what). Code that sent
commands is fenced: a ``/sync`` from scorch's own client reaches scsynth after
them (one socket, one queue), and ``/synced`` comes once they were performed and
their asynchronous parts done. The lines they caused were printed before that;
scorch's reader thread has them by then too (measured on a loaded 2-core machine:
20 of 20 already in the console when ``/synced`` arrived, 0.6 to 11 ms before it);
:data:`GRACE` is the margin for a reader thread not scheduled yet. Of the failure
lines posted from the request's start to the fence, only those of the commands the
code sent are its own (a pattern failing meanwhile with other commands is not).

Commands the code scheduled for later (a bundle with latency, a pattern) are not
waited for: what they cause comes after the code returned.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from scorch.errors import OscFailure, OscTimeout
from scorch.primitives.scsynth.client import OscClient
from scorch.primitives.system import Console

#: Lines of scsynth's about a command that failed.
FAILURE = re.compile(r"^(FAILURE IN SERVER|\*\*\* ERROR)")
_FAILED_COMMAND = re.compile(r"^FAILURE IN SERVER (/\S+)")
#: Seconds to wait after ``/synced`` for a failure line still on its way (none usually is).
GRACE = 0.002
#: Seconds a fence waits for ``/synced`` (scsynth hung: the failures so far are given).
FENCE_TIMEOUT = 1.0
#: scsynth's command numbers (Server Command Reference), as sclang's Synth, Group... send them.
COMMANDS = (
    "none", "notify", "status", "quit", "cmd", "d_recv", "d_load", "d_loadDir", "d_freeAll",
    "s_new", "n_trace", "n_free", "n_run", "n_cmd", "n_map", "n_set", "n_setn", "n_fill",
    "n_before", "n_after", "u_cmd", "g_new", "g_head", "g_tail", "g_freeAll", "c_set",
    "c_setn", "c_fill", "b_alloc", "b_allocRead", "b_read", "b_write", "b_free", "b_close",
    "b_zero", "b_set", "b_setn", "b_fill", "b_gen", "dumpOSC", "c_get", "c_getn", "b_get",
    "b_getn", "s_get", "s_getn", "n_query", "b_query", "n_mapn", "s_noid", "g_deepFree",
    "clearSched", "sync", "d_free", "b_allocReadChannel", "b_readChannel", "g_dumpTree",
    "g_queryTree", "error", "s_newargs", "n_mapa", "n_mapan", "n_order", "p_new", "version",
)


def command_name(sent: str) -> str:
    """The address scsynth names a command by: ``9``, ``s_new`` and ``/s_new`` are ``/s_new``."""
    if sent.isdigit() and int(sent) < len(COMMANDS):
        return "/" + COMMANDS[int(sent)]
    return sent if sent.startswith("/") or sent == "*" else "/" + sent


def select(lines: Iterable[str], sent: Iterable[str]) -> tuple[str, ...]:
    """The failure lines of the commands in ``sent`` (``*``: any), each after its ``*** ERROR``."""
    names = {command_name(x) for x in sent}
    kept: list[str] = []
    before: list[str] = []
    for text in lines:
        if text.startswith("*** ERROR"):
            before.append(text)
            continue
        found = _FAILED_COMMAND.match(text)
        if found and ("*" in names or found.group(1) in names):
            kept += [*before, text]
        before = []
    return tuple(kept)


def failures_since(osc: OscClient, console: Console, since: int, sent: Iterable[str],
                   grace: float = GRACE, timeout: float = FENCE_TIMEOUT) -> tuple[str, ...]:
    """Wait until scsynth performed what was sent before; the failures of ``sent`` since."""
    sent = tuple(sent)
    try:
        osc.sync(timeout=timeout)
    except (OscTimeout, OscFailure, OSError):  # gone or hung: the console is all we know
        pass
    else:
        console.wait_for(_failure_of(sent), grace, since=since, source="scsynth")
    return select((line.text for line in console.since(since, source="scsynth")), sent)


def _failure_of(sent: Iterable[str]) -> re.Pattern[str]:
    """A failure line of one of these commands (of any, for a raw packet)."""
    names = {command_name(x) for x in sent}
    if "*" in names:
        return _FAILED_COMMAND
    alternatives = "|".join(map(re.escape, sorted(names)))
    return re.compile(rf"^FAILURE IN SERVER ({alternatives})(\s|$)")
