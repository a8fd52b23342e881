"""Faults of a room's sound, found in what its safety stage measures: pure, no clock.

A :class:`Detector` takes the stage's readings (a few a second, in time order) and says
when a fault begins and ends: :data:`SILENT` (expected to sound, every peak out below
``silence_dbfs`` for ``silence_s``), :data:`LIMITING` (the limiter taking at least
:data:`LIMIT_DB` off in every reading for ``limit_s``: loud code held at the ceiling, or
clipping before the stage), :data:`NAN` (a NaN or infinity came in), :data:`DC` (a DC
level of at least :data:`DC_LEVEL`, and :data:`DC_SHARE` of the input's RMS, came in for
:data:`DC_S`: the stage blocks it, the code is at fault), :data:`XRUNS` (with
``xruns_per_min``: more xruns of the room's JACK server in the last minute, at once) and
:data:`HOWL` (with ``howl``: for :data:`HOWL_S` the input is tone-like, its peak at most
:data:`HOWL_CREST_DB` over its RMS as a sine's is, and its peak has risen by at least
:data:`HOWL_RISE_DB` over the audible peaks of the last :data:`HOWL_LOOKBACK_S`: a
narrow-band peak that grew, as feedback does; a tone that fades in, or comes in that
much louder than what sounded just before, reads the same. One from silence does not). A
fault ends after :data:`CLEAR_S` without its condition, so one reading does not flap it.
A gap in the readings (scsynth restarting) forgets what had not yet become a fault; a
fault raised stays until readings show it gone.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from scorch.state import Kind

#: The limiter's gain reduction (dB) that counts as limiting.
LIMIT_DB = 0.5
#: Seconds a fault's condition must be gone before the fault ends.
CLEAR_S = 1.0
#: Seconds without a reading after which the onsets not yet faults are forgotten.
GAP_S = 2.0
#: Peak levels reported as this when there is no sound at all (dBFS).
FLOOR_DB = -200.0
#: The most a peak may stand over its RMS (dB) and be tone-like (a sine: 3.01).
HOWL_CREST_DB = 4.5
#: Seconds tone-like, and dB its peak must have risen over the lookback, to be a howl.
HOWL_S, HOWL_RISE_DB = 2.0, 6.0
#: Seconds back the howl's rise is measured from (its growth may be quicker than the
#: RMS follows, so before it reads as tone-like).
HOWL_LOOKBACK_S = HOWL_S + 2.0
#: The most audible peaks kept for the lookback (readings far quicker than a few a
#: second shorten it rather than cost time).
HEARD_MAX = 64
#: Input quieter than this (peak, dBFS) is not heard as a howl yet.
HOWL_FLOOR_DB = -50.0
#: The DC level (linear, -34 dBFS) at which the stage's blocker is fully in, and the
#: seconds it must last to be a fault (an infrasonic swell or a kick's first cycle is not).
DC_LEVEL, DC_S = 0.02, 2.0
#: The least part of the input's RMS a DC level must be to be an offset: loud noise's own
#: slow wander through the 2 Hz low-pass reads above DC_LEVEL (white noise at 10x: 0.05-0.15
#: of an RMS of 5.8), a real offset is most of what comes in.
DC_SHARE = 0.25

SILENT, LIMITING, NAN, HOWL, DC, XRUNS = "silent", "limiting", "nan", "howl", "dc", "xruns"
#: Each fault's event kind, and its rank when a room has several (the worst shows).
KINDS = {NAN: Kind.SOUND_NAN, HOWL: Kind.SOUND_HOWL, DC: Kind.SOUND_DC,
         LIMITING: Kind.SOUND_LIMITING, XRUNS: Kind.SOUND_XRUNS, SILENT: Kind.SOUND_SILENT}


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
    howl: bool = True
    xruns_per_min: int = 0
    """More xruns than this in the last minute is a fault (0: not watched)."""


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
    rms_in: float = 0.0
    """The loudest channel's RMS coming in (linear; 0: not measured)."""
    dc_in: float = 0.0
    """The largest DC level coming in (linear; 0: none, or not measured)."""
    xruns_last_min: int = 0
    """xruns the room's JACK server reported in the minute before the reading."""


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
    _heard: deque[tuple[float, float]] = field(default_factory=lambda: deque(maxlen=HEARD_MAX))
    """The audible peaks in (time, dBFS) of the last :data:`HOWL_LOOKBACK_S`."""

    @property
    def sound(self) -> str:
        """``ok``, or the worst fault that lasts (``nan``, ``howl``, ``dc``, ``limiting``,
        ``xruns``, ``silent``)."""
        return next((f for f in KINDS if self._faults[f].raised is not None), "ok")

    def lasting(self, now: float) -> dict[str, float]:
        """Each fault raised and not yet ended, with the seconds since its condition began."""
        return {name: max(0.0, now - f.since) for name, f in self._faults.items()
                if f.raised is not None and f.since is not None}

    def feed(self, m: Measured) -> list[Finding]:
        """Take one reading; the faults that began or ended with it."""
        if self._last is not None and m.time - self._last > GAP_S:
            for fault in self._faults.values():
                if fault.raised is None:
                    fault.since = None
            self._heard.clear()
        self._last = m.time
        while self._heard and m.time - self._heard[0][0] > HOWL_LOOKBACK_S:
            self._heard.popleft()
        if dbfs(m.peak_in) >= HOWL_FLOOR_DB:
            self._heard.append((m.time, dbfs(m.peak_in)))
        w = self.watch
        reduction = m.reduction_db if math.isfinite(m.reduction_db) else 0.0
        m = Measured(m.time, m.peak_in, m.peak_out, max(0.0, reduction), m.non_finite,
                     m.rms_in, m.dc_in, m.xruns_last_min)
        held = {
            SILENT: w.expect_sound and dbfs(m.peak_out) < w.silence_dbfs,
            LIMITING: m.reduction_db >= LIMIT_DB,
            NAN: m.non_finite,
            HOWL: w.howl and tone_like(m),
            DC: m.dc_in >= max(DC_LEVEL, DC_SHARE * m.rms_in),
            XRUNS: 0 < w.xruns_per_min < m.xruns_last_min,
        }
        after = {SILENT: w.silence_s, LIMITING: w.limit_s, NAN: 0.0, HOWL: HOWL_S, DC: DC_S,
                 XRUNS: 0.0}
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
            _note(fault.worst, m, name)
            if fault.raised is None and m.time - fault.since >= after:
                if name == HOWL:
                    risen = fault.worst["peak_in_dbfs"] - min(p for _, p in self._heard)
                    if risen < HOWL_RISE_DB:
                        return None
                    fault.worst["risen_db"] = round(risen, 1)
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


def tone_like(m: Measured) -> bool:
    """Whether the input is loud enough and its peak within a sine's crest of its RMS (a DC
    offset, whose crest is none, making half its peak or more, is no tone)."""
    peak = dbfs(m.peak_in)
    return (peak >= HOWL_FLOOR_DB and m.rms_in > 0 and m.dc_in < 0.5 * m.peak_in
            and peak - dbfs(m.rms_in) <= HOWL_CREST_DB)


def _note(worst: dict[str, float], m: Measured, name: str) -> None:
    """Keep the loudest peaks and the deepest reduction (and DC) while a condition holds."""
    worst["peak_in_dbfs"] = max(worst.get("peak_in_dbfs", FLOOR_DB), dbfs(m.peak_in))
    worst["peak_out_dbfs"] = max(worst.get("peak_out_dbfs", FLOOR_DB), dbfs(m.peak_out))
    worst["reduction_db"] = max(worst.get("reduction_db", 0.0), round(m.reduction_db, 1))
    if name == DC:
        worst["dc_dbfs"] = max(worst.get("dc_dbfs", FLOOR_DB), dbfs(m.dc_in))
    if name == XRUNS:
        worst["xruns_last_min"] = max(worst.get("xruns_last_min", 0), m.xruns_last_min)


def _details(fault: _Fault, now: float, m: Measured) -> dict[str, Any]:
    return {**fault.worst, "for_s": round(now - (fault.since or now), 2),
            "non_finite": m.non_finite}


def _said(name: str, w: Thresholds, lasted: float) -> str:
    if name == SILENT:
        return (f"silent for {lasted:.1f} s (every peak below {w.silence_dbfs:g} dBFS) "
                "though it is expected to sound")
    if name == LIMITING:
        return f"the safety stage has limited for {lasted:.1f} s without a pause"
    if name == XRUNS:
        return (f"the JACK server reported more than {w.xruns_per_min} xruns in a minute: "
                "the sound has gaps (is the machine or the period too tight?)")
    if name == DC:
        return (f"a DC offset came from the room's code for {lasted:.1f} s (the safety stage "
                "blocks it; a filter or an offset in the code is off)")
    if name == HOWL:
        return (f"a howl: one tone, rising, for {lasted:.1f} s (feedback?); the safety "
                "stage holds it at the ceiling")
    return "a NaN or an infinity came from the room's code (the safety stage silenced it)"
