"""The safety stage: the last synth of every room, between its code and its loudspeakers.

``scorch_stage_N`` (``scorch_stage_lufs_N`` with a loudness limit) reads the room's N
output buses and writes them back (``ReplaceOut``), each channel in turn:

1. Non-finite samples (NaN, infinities) become 0 (``Sanitize``) before any filter
   sees them (a filter fed a NaN stays NaN for ever); the rest is held to +-1e5.
2. DC is taken out only while there is some: a two-pole 2 Hz low-pass of the signal
   (its ripple for any full-scale tone above 20 Hz stays under 0.01) opens a gate
   between 0.01 and 0.02 that blends in a 40 Hz ``LeakDC``. A clean signal passes
   bit for bit; a DC of 10 is under -60 dBFS 40 ms later.
3. The master gain (``gain``, dB), faded linearly in dB over ``fade`` seconds.
4. The short-term loudness (ITU-R BS.1770 K-weighting, 3 s) of all channels is
   measured; with ``max_lufs``, loudness above ``lufs`` turns the gain down by the
   difference (feed-forward).
5. A true-peak look-ahead limiter, one gain for all channels: each channel is
   interpolated 4x (a 49-tap Kaiser-windowed sinc) to find the peaks between
   samples; the gain each needs (0.3 dB under the ceiling, for what 12 taps a
   phase miss near Nyquist) is held as a minimum over the look-ahead, released
   over ``RELEASE``, and smoothed by a moving average as long as the look-ahead,
   so it is down before the peak comes out of the delay line, without a step.
   A last clip at the ceiling and ``Sanitize`` stand behind it.

Every ``1 / report`` seconds it sends ``[STAGE_REPLY, node, 1, peak in, peak out,
least gain, loudness gain dB, non-finite, mean square in, DC in, short-term loudness
out]`` (:class:`StageReading`)
to scsynth's registered clients. The latency is :data:`LATENCY` samples at any rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scorch.primitives.osc import OscMessage
from scorch.primitives.synthdefs.graph import Graph, Sig
from scorch.primitives.synthdefs.scgf import AUDIO, CONTROL, SCALAR

#: The OSC address of the stage's readings.
STAGE_REPLY = "/scorch_stage"
#: The most output channels a stage covers (a room's ``outputs``).
MAX_CHANNELS = 128
#: Samples the limiter looks ahead (a power of two): 2.7 ms at 48 kHz.
LOOKAHEAD = 128
#: Taps of each of the interpolator's 4 phases.
TAPS = 12
#: The interpolator's Kaiser window.
KAISER_BETA = 5.0
#: How far under the ceiling the limiter aims (dB): what TAPS taps a phase under-read of
#: a true peak made of content near Nyquist (white noise at +40 dB: +0.33 dB without it).
MARGIN_DB = 0.3
#: Seconds the gain takes to come back up by 60 dB once the peaks are gone.
RELEASE = 0.3
#: The DC gate: its detector's corner (Hz), where it starts to open and the blocker's corner.
DC_DETECT_HZ, DC_OPEN, DC_BLOCK_HZ = 2.0, 0.01, 40.0
#: Samples louder than this (+100 dBFS) are held to it: the gains' arithmetic stays finite.
INPUT_LIMIT = 1e5
#: The master gain's range (dB); at the floor the stage is silent.
GAIN_FLOOR_DB, GAIN_MAX_DB = -120.0, 12.0
#: The loudness window (s) and the smoothing of the loudness limit's gain (s).
LUFS_WINDOW, LUFS_LAG = 3.0, 0.5
#: Samples between what comes in and what goes out.
LATENCY = LOOKAHEAD - 1 + TAPS // 2 + 1
#: The corner (Hz) of the smoothing of the input's power the readings carry.
POWER_HZ = 5.0
#: Readings a second unless told.
REPORT_HZ = 4.0
#: The loudness a stage reports for silence (its mean square floored at 1e-12).
SILENT_LUFS = -120.691
_LN001 = math.log(0.001)


def stage_name(channels: int, lufs: bool = False) -> str:
    """The SynthDef of a stage over ``channels`` outputs (``lufs``: with a loudness limit)."""
    if not 1 <= channels <= MAX_CHANNELS:
        raise ValueError(f"a safety stage covers 1 to {MAX_CHANNELS} channels, not {channels}")
    return f"scorch_stage_{'lufs_' if lufs else ''}{channels}"


def interpolator() -> list[float]:
    """The 4x interpolation filter (4 * TAPS + 1 taps, symmetric, phase 0 the sample itself)."""
    length = 4 * TAPS + 1
    middle = (length - 1) / 2
    taps = [_sinc((n - middle) / 4) * _kaiser(n, length) for n in range(length)]
    total = sum(taps)
    return [4 * t / total for t in taps]


def _sinc(x: float) -> float:
    return 1.0 if x == 0 else math.sin(math.pi * x) / (math.pi * x)


def _kaiser(n: int, length: int) -> float:
    ratio = 2 * n / (length - 1) - 1
    return _bessel_i0(KAISER_BETA * math.sqrt(max(0.0, 1 - ratio * ratio))) / _bessel_i0(
        KAISER_BETA)


def _bessel_i0(x: float) -> float:
    term, total, k = 1.0, 1.0, 0
    while term > 1e-12 * total:
        k += 1
        term *= (x / (2 * k)) ** 2
        total += term
    return total


def stage_synthdef(channels: int, lufs: bool = False) -> bytes:
    """The stage over ``channels`` outputs: params ``gain`` (dB), ``fade`` (s), ``ceiling``
    (dBFS), ``lufs`` (the loudness limit, with ``lufs``) and ``report`` (readings/s)."""
    name = stage_name(channels, lufs)
    g = Graph()
    gain, fade, ceiling, target, report = g.controls(
        gain=0.0, fade=0.0, ceiling=-1.0, lufs=-14.0, report=REPORT_HZ)
    rate = g.one("SampleRate", SCALAR)
    raw = g.ugen("In", AUDIO, (0.0,), outputs=channels)
    clean = [g.binary("clip2", g.one("Sanitize", AUDIO, x, 0.0), INPUT_LIMIT) for x in raw]
    bad = _largest(g, [g.binary("!=", x, x) + g.binary(">", abs(x), 3.0e38) for x in raw])
    amp = _master_gain(g, gain, fade)
    blocked = [_block_dc(g, x, rate) for x in clean]
    sound = [x * amp for x, _ in blocked]
    loudness = _loudness(g, sound, rate)
    loudness_db: Sig | float = 0.0
    if lufs:
        loudness_db = g.one("Lag", CONTROL, g.min(target - loudness, 0.0), LUFS_LAG)
        sound = [x * g.unary("dbamp", loudness_db) for x in sound]
    ceiling = g.min(ceiling, 0.0)
    gains = _limiter_gain(g, sound, rate, g.unary("dbamp", ceiling - MARGIN_DB))
    limit = g.unary("dbamp", ceiling)
    delay = (LATENCY + 0.25) / rate  # DelayN truncates its delay in samples: a quarter over
    out = [g.one("Sanitize", AUDIO, g.binary("clip2", g.one(
        "DelayN", AUDIO, x, delay, delay) * gains, limit), 0.0) for x in sound]
    g.ugen("ReplaceOut", AUDIO, (0.0, *out), outputs=0)
    tick = g.one("Impulse", AUDIO, report, 0.0)
    values = [
        g.one("Peak", AUDIO, _largest(g, [abs(x) for x in clean]), tick),
        g.one("Peak", AUDIO, _largest(g, [abs(x) for x in out]), tick),
        1.0 - g.one("Peak", AUDIO, 1.0 - gains, tick),
        loudness_db,
        g.one("Peak", AUDIO, bad, tick),
        # The loudest channel's power, smoothed: with the peak, how tone-like it is (a howl).
        g.one("OnePole", AUDIO, _largest(g, [x * x for x in clean]), _coef(g, POWER_HZ, rate)),
        g.one("Peak", AUDIO, _largest(g, [dc for _, dc in blocked]), tick),
        loudness + loudness_db,  # as it leaves (the limiter aside): the loudness gain is in dB
    ]
    address = [float(c) for c in STAGE_REPLY.encode("ascii")]
    g.ugen("SendReply", AUDIO, (tick, 1.0, float(len(address)), *address, *values), outputs=0)
    return g.synthdef(name)


def _largest(g: Graph, sigs: list[Sig]) -> Sig:
    top = sigs[0]
    for sig in sigs[1:]:
        top = g.max(top, sig)
    return top


def _coef(g: Graph, hz: float, rate: Sig) -> Sig:
    """A one-pole's coefficient for a corner at ``hz``."""
    return g.unary("exp", -2 * math.pi * hz / rate)


def _block_dc(g: Graph, x: Sig, rate: Sig) -> tuple[Sig, Sig]:
    """``x`` as it is, or through a 40 Hz DC blocker while a DC or infrasound is there;
    and the DC level that came in (linear)."""
    detect = _coef(g, DC_DETECT_HZ, rate)
    level = abs(g.one("OnePole", AUDIO, g.one("OnePole", AUDIO, x, detect), detect))
    opened = g.min(g.max(level / DC_OPEN - 1.0, 0.0), 1.0)
    blocked = g.one("LeakDC", AUDIO, x, 1.0 - 2 * math.pi * DC_BLOCK_HZ / rate)
    return x - opened * (x - blocked), level


def _master_gain(g: Graph, gain: Sig, fade: Sig) -> Sig:
    """The master gain as an amplitude: faded linearly in dB, silent at its floor."""
    wanted = g.min(g.max(gain, GAIN_FLOOR_DB), GAIN_MAX_DB)
    level = g.one("VarLag", CONTROL, wanted, g.max(fade, 0.0), wanted)  # starts where it is
    return g.unary("dbamp", level) * g.binary(">", level, GAIN_FLOOR_DB + 0.01)


def _loudness(g: Graph, sound: list[Sig], rate: Sig) -> Sig:
    """The short-term loudness of ``sound`` (LUFS, BS.1770 over the last LUFS_WINDOW s)."""
    power: Sig | None = None
    for x in sound:
        k = _biquad(g, _biquad(g, x, _shelf(g, rate)), _high_pass(g, rate))
        square = k * k
        power = square if power is None else power + square
    assert power is not None
    block = g.one("BlockSize", SCALAR)
    per_block = g.one("A2K", CONTROL, g.one("RunningSum", AUDIO, power, block))
    blocks = g.one("ControlRate", SCALAR) * LUFS_WINDOW
    mean = g.one("RunningSum", CONTROL, per_block, blocks) / (blocks * block)
    return -0.691 + 10.0 * g.unary("log10", g.max(mean, 1e-12))


def _biquad(g: Graph, x: Sig, coefs: tuple[Sig, Sig, Sig, Sig, Sig, Sig]) -> Sig:
    b0, b1, b2, a0, a1, a2 = coefs
    return g.one("SOS", AUDIO, x, b0 / a0, b1 / a0, b2 / a0, -a1 / a0, -a2 / a0)


def _shelf(g: Graph, rate: Sig) -> tuple[Sig, Sig, Sig, Sig, Sig, Sig]:
    """BS.1770's high shelf (+4 dB above 1.5 kHz), as pyloudnorm computes it for any rate."""
    a, root = 10 ** (4.0 / 40), 10 ** (4.0 / 80)
    w0 = 2 * math.pi * 1500.0 / rate
    cos, alpha = g.unary("cos", w0), g.unary("sin", w0) / (2 / math.sqrt(2))
    return (a * ((a + 1) + (a - 1) * cos + 2 * root * alpha),
            -2 * a * ((a - 1) + (a + 1) * cos),
            a * ((a + 1) + (a - 1) * cos - 2 * root * alpha),
            (a + 1) - (a - 1) * cos + 2 * root * alpha,
            2 * ((a - 1) - (a + 1) * cos),
            (a + 1) - (a - 1) * cos - 2 * root * alpha)


def _high_pass(g: Graph, rate: Sig) -> tuple[Sig, Sig, Sig, Sig, Sig, Sig]:
    """BS.1770's high-pass (38 Hz, Q 0.5), as pyloudnorm computes it for any rate."""
    w0 = 2 * math.pi * 38.0 / rate
    cos, alpha = g.unary("cos", w0), g.unary("sin", w0) / 1.0
    return ((1 + cos) / 2, -(1 + cos), (1 + cos) / 2, 1 + alpha, -2 * cos, 1 - alpha)


def _limiter_gain(g: Graph, sound: list[Sig], rate: Sig, aim: Sig) -> Sig:
    """The gain (0..1) that keeps every channel's true peak under ``aim``, LATENCY late."""
    phases = [interpolator()[k::4] for k in range(1, 4)]
    peaks = []
    for x in sound:
        taps = [x]
        for _ in range(TAPS - 1):
            taps.append(g.one("Delay1", AUDIO, taps[-1]))
        points = [abs(taps[TAPS // 2])]
        for phase in phases:
            acc: Sig | float = 0.0
            for tap, c in zip(taps, phase, strict=True):
                acc = g.one("MulAdd", AUDIO, tap, c, acc)
            points.append(abs(acc))  # type: ignore[arg-type]
        peaks.append(_largest(g, points))
    peak = _largest(g, peaks)
    peak = g.max(peak, g.one("Delay1", AUDIO, peak))  # a peak between two samples binds both
    # Reductions (1 - gain) rather than gains travel the delay lines, which start at 0: a
    # new stage passes its sound at once, instead of releasing from silence.
    cut = 1.0 - aim / g.max(peak, aim)
    span = 1
    while span < LOOKAHEAD:
        cut = g.max(cut, _delay(g, cut, span, rate))
        span *= 2
    released = 1.0 - g.one("LagUD", AUDIO, 1.0 - cut, RELEASE, 0.0)
    total, span = released, 1
    while span < LOOKAHEAD:
        total = total + _delay(g, total, span, rate)
        span *= 2
    return 1.0 - total * (1.0 / LOOKAHEAD)


def _delay(g: Graph, x: Sig, samples: int, rate: Sig) -> Sig:
    if samples == 1:
        return g.one("Delay1", AUDIO, x)
    time = (samples + 0.25) / rate
    return g.one("DelayN", AUDIO, x, time, time)


@dataclass(frozen=True)
class StageReading:
    """What a stage measured over one report period."""

    node: int
    peak_in: float
    """The largest sample that came in (NaN and infinities aside), linear."""
    peak_out: float
    """The largest sample that went out, linear."""
    least_gain: float
    """The limiter's lowest gain (1: it did nothing), linear."""
    loudness_db: float
    """The loudness limit's gain in dB (0: not limiting, or no limit)."""
    non_finite: bool
    """A NaN or an infinity came in (and was replaced by silence)."""
    power_in: float = 0.0
    """The loudest channel's mean square coming in, smoothed over about 1 / (2 pi POWER_HZ) s."""
    dc_in: float = 0.0
    """The largest DC level that came in (a channel's 2 Hz low-pass, linear): the stage
    blocks it, but the room's code sends it."""
    loudness_lufs: float = SILENT_LUFS
    """The short-term loudness going out (LUFS, the last 3 s; :data:`SILENT_LUFS`: none)."""

    @property
    def rms_in(self) -> float:
        """The loudest channel's RMS coming in, linear."""
        return math.sqrt(max(self.power_in, 0.0))

    @property
    def reduction_db(self) -> float:
        """The limiter's deepest gain reduction, in dB (0 or more)."""
        return -20 * math.log10(max(self.least_gain, 1e-9))


def reading(msg: OscMessage) -> StageReading | None:
    """A stage's reply as a reading; None for anything else or malformed."""
    args = msg.args
    if msg.address != STAGE_REPLY or len(args) != 10:
        return None
    if not all(isinstance(a, (int, float)) and not isinstance(a, bool) for a in args):
        return None
    node, _, peak_in, peak_out, gain, loudness, bad, power, dc, lufs = (float(a) for a in args)  # type: ignore[arg-type]
    if not all(math.isfinite(v) for v in (peak_in, peak_out, gain, loudness, power, dc, lufs)):
        return None
    return StageReading(int(node), peak_in, peak_out, gain, loudness, bad > 0, power, dc,
                        max(lufs, SILENT_LUFS))
