"""A JACK client that records what leaves a room: its ports read sample by sample into memory.

It connects its inputs to scsynth's output ports (``scorch-ROOM:out_1``...) and
connects them again whenever they come back (a scsynth restart makes new ports of the
same names). Each cycle's frame time is checked against the last: a cycle this client
missed (an xrun, a late callback) is counted in :attr:`Capture.gaps`, so a test knows
whether what it read is whole.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType

import jack
import numpy as np

#: Seconds of sound kept (older samples are overwritten).
KEEP = 120.0


class Capture:
    """Record ``sources`` (JACK port names) on the JACK server ``server``."""

    def __init__(self, server: str, sources: list[str], name: str = "scorch-capture") -> None:
        self.sources = list(sources)
        self.client = jack.Client(name, servername=server, no_start_server=True)
        self.rate = self.client.samplerate
        self._size = int(KEEP * self.rate)
        self._data = np.zeros((len(sources), self._size), dtype=np.float32)
        self._written = 0
        self._next: int | None = None
        self.gaps: list[tuple[int, int]] = []
        """(sample index, frames missed) of each cycle this client did not see."""
        self.inputs = [self.client.inports.register(f"in_{i + 1}") for i in range(len(sources))]
        self.client.set_process_callback(self._process)
        self._stop = threading.Event()
        self.client.activate()
        self._keeper = threading.Thread(target=self._connect, daemon=True)
        self._connect_once()
        self._keeper.start()

    def _process(self, frames: int) -> None:
        now = self.client.last_frame_time
        if self._next is not None and now != self._next:
            self.gaps.append((self._written, now - self._next))
        self._next = now + frames
        start = self._written % self._size
        end = start + frames
        for row, port in enumerate(self.inputs):
            block = port.get_array()
            if end <= self._size:
                self._data[row, start:end] = block
            else:
                cut = self._size - start
                self._data[row, start:] = block[:cut]
                self._data[row, :end - self._size] = block[cut:]
        self._written += frames

    def _connect_once(self) -> None:
        for source, port in zip(self.sources, self.inputs, strict=True):
            try:
                if not self.client.get_all_connections(port) and self.client.get_ports(source):
                    self.client.connect(source, port)
            except jack.JackError:
                pass  # the source went away meanwhile: the next look connects it

    def _connect(self) -> None:
        while not self._stop.wait(0.005):
            self._connect_once()

    def mark(self) -> int:
        """Where the recording is now (a sample index for :meth:`since`)."""
        return self._written

    def wait(self, seconds: float) -> None:
        """Wait until ``seconds`` more of sound were read."""
        until = self._written + int(seconds * self.rate)
        deadline = time.monotonic() + seconds * 4 + 5
        while self._written < until:
            assert time.monotonic() < deadline, "JACK stopped calling the capture client"
            time.sleep(0.01)

    def since(self, mark: int, until: int | None = None) -> np.ndarray:
        """The samples read from ``mark`` on (channels x samples, float32)."""
        end = self._written if until is None else until
        assert end - mark <= self._size, "asked for more than the capture keeps"
        index = np.arange(mark, end) % self._size
        return self._data[:, index].copy()

    def gaps_since(self, mark: int) -> list[tuple[int, int]]:
        """The cycles missed after ``mark``."""
        return [gap for gap in self.gaps if gap[0] >= mark]

    def close(self) -> None:
        """Stop connecting, leave the graph (deactivate first: no callback is cut short)."""
        self._stop.set()
        self._keeper.join(timeout=2)
        self.client.deactivate()
        self.client.close()

    def __enter__(self) -> Capture:
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()
