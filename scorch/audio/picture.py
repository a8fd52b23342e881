"""Draw a sound as one PNG: waveform on top, log-frequency spectrogram below.

Sized for a chat window (1000 x 600 px). Drawn with matplotlib's Agg canvas
through :class:`matplotlib.figure.Figure`, without pyplot: no display is
needed and no global matplotlib state changes. numpy and matplotlib are
imported inside :func:`picture`, so importing this module costs nothing.
"""

from __future__ import annotations

import io
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from matplotlib.axes import Axes
    from numpy.typing import NDArray

#: The picture's size in pixels.
WIDTH, HEIGHT = 1000, 600
_DPI = 100
#: The spectrogram's frequency axis starts here and ends at Nyquist.
LOW_HZ = 20.0
#: Colour range of the spectrogram, in dBFS: a full-scale sine is 0 dB.
FLOOR_DB, TOP_DB = -100.0, 0.0
_COLUMNS = 800  # spectrogram time steps, about one per pixel
_ROWS = 320  # spectrogram frequency rows, log-spaced
_WAVE_COLUMNS = 1500
_CHANNEL_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")
_HZ_TICKS = (20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000)
_MARGINS = {"left": 0.075, "right": 0.93, "top": 0.91, "bottom": 0.085, "hspace": 0.06,
            "wspace": 0.025}

_lock = threading.Lock()
_kept: _Canvas | None = None


def picture(samples: Any, sample_rate: int, title: str) -> bytes:
    """Return a PNG of ``samples`` shaped (frames,) or (frames, channels)."""
    import numpy as np

    data = np.asarray(samples, dtype=np.float64)
    data = data[:, np.newaxis] if data.ndim == 1 else data
    data = np.nan_to_num(data, nan=0.0, posinf=0.0, neginf=0.0)
    global _kept
    with _lock:  # one figure, drawn by one thread at a time
        if _kept is None:
            _kept = _Canvas()
        return _kept.draw(data, sample_rate, title)


class _Canvas:
    """One figure kept from picture to picture, redrawn with each sound.

    Building the axes, their ticks and the colour bar cost more than drawing
    them; they stay, and only the waveform, the spectrogram's pixels, the
    limits and the title change.
    """

    def __init__(self) -> None:
        import numpy as np
        from matplotlib.figure import Figure

        # Fixed margins, not a layout engine: constrained layout measured every
        # label twice and cost a quarter of the picture's time.
        self.figure = Figure(figsize=(WIDTH / _DPI, HEIGHT / _DPI), dpi=_DPI)
        grid = self.figure.add_gridspec(2, 2, height_ratios=(1, 2), width_ratios=(50, 1),
                                        **_MARGINS)
        self.wave = self.figure.add_subplot(grid[0, 0])
        self.spectrogram = self.figure.add_subplot(grid[1, 0], sharex=self.wave)
        self.figure.add_subplot(grid[0, 1]).set_axis_off()
        self.title = self.figure.suptitle("", fontsize=13)
        self.image = self.spectrogram.imshow(
            np.full((2, 2), FLOOR_DB), origin="lower", aspect="auto", cmap="magma",
            vmin=FLOOR_DB, vmax=TOP_DB, interpolation="nearest")
        bar = self.figure.colorbar(self.image, cax=self.figure.add_subplot(grid[1, 1]))
        bar.set_label("Level (dBFS)")
        self.wave.set_ylabel("Amplitude (FS = 1)")
        self.wave.grid(True, alpha=0.3)
        self.wave.tick_params(labelbottom=False)
        self.spectrogram.set_ylabel("Frequency (Hz, log)")
        self.spectrogram.set_xlabel("Time (s)")

    def draw(self, data: NDArray[np.float64], sample_rate: int, title: str) -> bytes:
        """The PNG of ``data`` (frames, channels)."""
        import numpy as np

        self.title.set_text(title)
        for artist in [*self.wave.collections, *self.wave.lines]:
            artist.remove()
        if self.wave.legend_ is not None:
            self.wave.legend_.remove()
        _draw_wave(self.wave, data, sample_rate)
        rows, extent = _spectrogram(data.mean(axis=1), sample_rate)
        self.image.set_data(rows)
        self.image.set_extent(extent)
        nyquist = sample_rate / 2
        ticks = [hz for hz in _HZ_TICKS if LOW_HZ <= hz <= nyquist]
        self.spectrogram.set_yticks([np.log10(hz) for hz in ticks],
                                    [_hz_label(hz) for hz in ticks])
        self.spectrogram.set_ylim(extent[2], extent[3])
        self.wave.set_xlim(0, max(len(data) / sample_rate, 1 / sample_rate))
        out = io.BytesIO()
        # Light compression: a third of the encoding time for a file a little larger.
        self.figure.savefig(out, format="png", dpi=_DPI, pil_kwargs={"compress_level": 1})
        return out.getvalue()


def _envelope(channel: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Return per-column minima and maxima, so a long sound draws in a few thousand points."""
    step = max(1, len(channel) // _WAVE_COLUMNS)
    count = len(channel) // step
    blocks = channel[: count * step].reshape(count, step)
    return blocks.min(axis=1), blocks.max(axis=1)


def _draw_wave(axes: Axes, data: NDArray[np.float64], sample_rate: int) -> None:
    import numpy as np

    channels = data.shape[1]
    names = ("L", "R") if channels == 2 else tuple(f"ch {i + 1}" for i in range(channels))
    for index in range(channels):
        low, high = _envelope(data[:, index])
        step = max(1, len(data) // _WAVE_COLUMNS)
        times = (np.arange(len(low)) + 0.5) * step / sample_rate
        colour = _CHANNEL_COLOURS[index % len(_CHANNEL_COLOURS)]
        axes.fill_between(times, low, high, color=colour, alpha=0.6 if channels > 1 else 0.9,
                          linewidth=0.6, label=names[index] if channels > 1 else None)
    peak = float(np.max(np.abs(data))) if data.size else 0.0
    limit = max(1.05, peak * 1.05)
    axes.set_ylim(-limit, limit)
    if peak >= 1.0 - 1e-6:
        for level in (-1.0, 1.0):
            axes.axhline(level, color="red", linestyle="--", linewidth=0.8)
    if channels > 1:
        axes.legend(loc="upper right", fontsize=9, ncols=channels)


def _log_rows(power: NDArray[np.float64], bin_hz: float, nyquist: float) -> NDArray[np.float64]:
    """Resample (bins, columns) power onto log-spaced rows, in dB.

    A row holding several bins gets their mean power, so white noise draws
    evenly; a row narrower than a bin is interpolated between its neighbours.
    """
    import numpy as np

    edges = np.geomspace(LOW_HZ, nyquist, _ROWS + 1)
    centres = np.sqrt(edges[:-1] * edges[1:])
    bins = power.shape[0]
    first = np.minimum(np.ceil(edges[:-1] / bin_hz).astype(int), bins - 1)
    last = np.minimum(np.ceil(edges[1:] / bin_hz).astype(int), bins)
    positions = centres / bin_hz
    below = np.floor(positions).astype(int).clip(0, bins - 2)
    fraction = (positions - below)[:, np.newaxis]
    rows = power[below] * (1 - fraction) + power[below + 1] * fraction
    # reduceat sums each row's bins, from its first to the next row's first.
    sums = np.add.reduceat(power, first, axis=0)
    wide = last > first
    rows[wide] = sums[wide] / (last - first)[wide, np.newaxis]
    return 10 * np.log10(np.maximum(rows, 10 ** (FLOOR_DB / 10)))


def _spectrogram(mono: NDArray[np.float64], sample_rate: int,
                 ) -> tuple[NDArray[np.float64], tuple[float, float, float, float]]:
    """The spectrogram's rows (dB, log-spaced) and where they lie (time and log10 Hz)."""
    import numpy as np
    import scipy.fft

    # 4096 at 48 kHz (11.7 Hz bins), shorter for a short sound so it fills the width.
    size = 1 << int(np.log2(min(0.085 * sample_rate, max(len(mono) / 4, 256))) + 0.5)
    # No padding: zeros around the sound would draw onsets that were never played.
    # A sound shorter than one window is drawn as that one window, zero-filled.
    signal = mono if len(mono) >= size else np.concatenate([mono, np.zeros(size - len(mono))])
    hop = max(1, (len(signal) - size) // _COLUMNS)
    count = 1 + (len(signal) - size) // hop
    strides = (signal.strides[0] * hop, signal.strides[0])
    frames = np.lib.stride_tricks.as_strided(signal, (count, size), strides, writeable=False)
    window = np.hanning(size).astype(np.float32)
    # float32 is plenty for a picture of 100 dB and halves the FFT's time (scipy keeps it).
    spectrum = scipy.fft.rfft(frames.astype(np.float32) * window, axis=1, overwrite_x=True)
    amplitude = np.abs(spectrum).astype(np.float64) * 2 / float(window.sum())
    nyquist = sample_rate / 2
    rows = _log_rows((amplitude**2).T, sample_rate / size, nyquist)
    # Each column shows its window's centre: the first and last half window stay blank.
    half = size / 2 / sample_rate
    start, end = half - hop / 2 / sample_rate, half + (count - 0.5) * hop / sample_rate
    return rows, (start, end, float(np.log10(LOW_HZ)), float(np.log10(nyquist)))


def _hz_label(hz: float) -> str:
    return f"{hz / 1000:g}k" if hz >= 1000 else f"{hz:g}"
