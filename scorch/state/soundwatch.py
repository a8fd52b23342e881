"""Faults of a room's sound, found in what its safety stage measures: pure, no clock.

A :class:`Detector` takes the stage's readings (a few a second, in time order) and
says when a fault begins and ends: :data:`SILENT` (expected to sound, every peak out
below ``silence_dbfs`` for ``silence_s``), :data:`LIMITING` (the limiter taking at
least :data:`LIMIT_DB` off in every reading for ``limit_s``: loud code held at the
ceiling, or clipping before the stage) and :data:`NAN` (a NaN or infinity came in).
A fault ends after :data:`CLEAR_S` without its condition, so one reading does not
flap it. A gap in the readings (scsynth restarting) forgets what had not yet become
a fault; a fault raised stays until readings show it gone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from scorch.state.events import Kind

#: The limiter's gain reduction (dB) that counts as limiting.
LIMIT_DB = 0.5
#: Seconds a fault's condition must be gone before the fault ends.
CLEAR_S = 1.0
#: Seconds without a reading after which the onsets not yet faults are forgotten.
GAP_S = 2.0
#: Peak levels reported as this when there is no sound at all (dBFS).
FLOOR_DB = -200.0

SILENT, LIMITING, NAN = "silent", "limiting", "nan"
#: Each fault's event kind, and its rank when a room has several (the worst shows).
KINDS = {NAN: Kind.SOUND_NAN, LIMITING: Kind.SOUND_LIMITING, SILENT: Kind.SOUND_SILENT}


def dbfs(amplitude: float) -> float:
    """A linear amplitude in dBFS (:data:`FLOOR_DB` for silence), rounded to 0.1 dB."""
    if not amplitude > 0 or not math.isfinite(amplitude):
        return FLOOR_DB
    return max(FLOOR_DB, round(20.0 * math.log10(amplitude), 1))


@dataclass(frozen=True)
class Thresholds:
    """What a room's watch counts as a fault (its ``[watch]`` keys)."""

    expect_sound: bool = False
    silence_s: float = 10.0
    silence_dbfs: float = -60.0
    limit_s: float = 5.0


@dataclass(frozen=True)
class Measured:
    """One reading of a room's stage, as the watch reads it."""

    time: float
    peak_in: float
    """The largest sample the room's code sent (linear)."""
    peak_out: float
    """The largest sample that left the stage (linear)."""
    reduction_db: float
    """The limiter's deepest gain reduction in the reading (dB, 0 or more)."""
    non_finite: bool = False


@dataclass(frozen=True)
class Finding:
    """A fault began (its kind) or ended (:attr:`Kind.SOUND_OK`), with what was measured."""

    fault: str
    kind: Kind
    message: str
    details: dict[str, Any]


@dataclass
class _Fault:
    since: float | None = None
    """When its condition began (None: it does not hold)."""
    raised: float | None = None
    """When it became a fault (None: it is not one)."""
    clear_since: float | None = None
    worst: dict[str, float] = field(default_factory=dict)


@dataclass
class Detector:
    """The faults of one room's sound, fed its readings in time order."""

    watch: Thresholds
    _faults: dict[str, _Fault] = field(default_factory=lambda: {f: _Fault() for f in KINDS})
    _last: float | None = None

    @property
    def sound(self) -> str:
        """``ok``, or the worst fault that lasts (``nan``, ``limiting``, ``silent``)."""
        return next((f for f in KINDS if self._faults[f].raised is not None), "ok")

    def feed(self, m: Measured) -> list[Finding]:
        """Take one reading; the faults that began or ended with it."""
        if self._last is not None and m.time - self._last > GAP_S:
            for fault in self._faults.values():
                if fault.raised is None:
                    fault.since = None
        self._last = m.time
        w = self.watch
        reduction = m.reduction_db if math.isfinite(m.reduction_db) else 0.0
        m = Measured(m.time, m.peak_in, m.peak_out, max(0.0, reduction), m.non_finite)
        held = {
            SILENT: w.expect_sound and dbfs(m.peak_out) < w.silence_dbfs,
            LIMITING: m.reduction_db >= LIMIT_DB,
            NAN: m.non_finite,
        }
        after = {SILENT: w.silence_s, LIMITING: w.limit_s, NAN: 0.0}
        found = []
        for name, holds in held.items():
            change = self._step(name, holds, after[name], m)
            if change is not None:
                found.append(change)
        return found

    def _step(self, name: str, holds: bool, after: float, m: Measured) -> Finding | None:
        fault = self._faults[name]
        if holds:
            fault.clear_since = None
            if fault.since is None:
                fault.since, fault.worst = m.time, {}
            _note(fault.worst, m)
            if fault.raised is None and m.time - fault.since >= after:
                fault.raised = m.time
                return Finding(name, KINDS[name], _said(name, self.watch, m.time - fault.since),
                               _details(fault, m.time, m))
            return None
        if fault.raised is None:
            fault.since = None
            return None
        if fault.clear_since is None:
            fault.clear_since = m.time
        if m.time - fault.clear_since < CLEAR_S:
            return None
        lasted = round(fault.clear_since - (fault.since or fault.clear_since), 2)
        details = {"fault": name, "lasted_s": lasted, "peak_out_dbfs": dbfs(m.peak_out)}
        self._faults[name] = _Fault()
        return Finding(name, Kind.SOUND_OK, f"the sound is {name} no more (it was for "
                       f"{lasted:g} s)", details)


def _note(worst: dict[str, float], m: Measured) -> None:
    """Keep the loudest peaks and the deepest reduction while a condition holds."""
    worst["peak_in_dbfs"] = max(worst.get("peak_in_dbfs", FLOOR_DB), dbfs(m.peak_in))
    worst["peak_out_dbfs"] = max(worst.get("peak_out_dbfs", FLOOR_DB), dbfs(m.peak_out))
    worst["reduction_db"] = max(worst.get("reduction_db", 0.0), round(m.reduction_db, 1))


def _details(fault: _Fault, now: float, m: Measured) -> dict[str, Any]:
    return {**fault.worst, "for_s": round(now - (fault.since or now), 2),
            "non_finite": m.non_finite}


def _said(name: str, w: Thresholds, lasted: float) -> str:
    if name == SILENT:
        return (f"silent for {lasted:.1f} s (every peak below {w.silence_dbfs:g} dBFS) "
                "though it is expected to sound")
    if name == LIMITING:
        return f"the safety stage has limited for {lasted:.1f} s without a pause"
    return "a NaN or an infinity came from the room's code (the safety stage silenced it)"
