"""A JACK client that records what leaves a room: its ports read sample by sample into memory.

It connects its inputs to scsynth's output ports (``scorch-ROOM:out_1``...) and
connects them again whenever they come back (a scsynth restart makes new ports of the
same names). The client runs in a process of its own, writing into shared memory: the
test process's threads (the orchestra's actors, the analysis) never hold the GIL its
JACK callback waits for, and it runs at a higher priority than the rest (nice -10
where allowed), so that a loaded machine does not starve it. The JACK server's xruns
are counted (:meth:`Capture.xruns_since`); they are any client's, and after one
jack2 moves its frame clock on by the time lost, so neither tells whether this
client missed a cycle: a test says how many there were rather than failing on them.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import threading
import time
from multiprocessing.shared_memory import SharedMemory
from multiprocessing.synchronize import Event
from types import TracebackType

import numpy as np

#: Seconds of sound kept (older samples are overwritten).
KEEP = 60.0
_WRITTEN, _XRUNS, _RATE, _READY, _PERIOD = 0, 1, 2, 3, 4
_HEAD = 5


class Capture:
    """Record ``sources`` (JACK port names) on the JACK server ``server``."""

    def __init__(self, server: str, sources: list[str], name: str = "scorch-capture",
                 rate: int = 48000) -> None:
        self.sources = list(sources)
        self._size = int(KEEP * rate)
        self._data_mem = SharedMemory(create=True, size=4 * len(sources) * self._size)
        self._meta_mem = SharedMemory(create=True, size=8 * _HEAD)
        self._data = np.ndarray((len(sources), self._size), np.float32, self._data_mem.buf)
        self._meta = np.ndarray((_HEAD,), np.int64, self._meta_mem.buf)
        self._xruns_at: dict[int, int] = {}
        self._meta[:] = 0
        context = multiprocessing.get_context("spawn")
        self._stop = context.Event()
        self._process = context.Process(
            target=_serve, args=(server, self.sources, name, self._data_mem.name,
                                 self._meta_mem.name, self._size, self._stop), daemon=True)
        self._process.start()
        deadline = time.monotonic() + 10
        while not self._meta[_READY]:
            if not self._process.is_alive() or time.monotonic() > deadline:
                self.close()
                raise RuntimeError("the JACK capture client did not start")
            time.sleep(0.01)
        self.rate = int(self._meta[_RATE])

    def mark(self) -> int:
        """Where the recording is now (a sample index for :meth:`since`)."""
        mark = int(self._meta[_WRITTEN])
        self._xruns_at.setdefault(mark, int(self._meta[_XRUNS]))
        return mark

    def wait(self, seconds: float) -> None:
        """Wait until ``seconds`` more of sound were read."""
        until = self.mark() + int(seconds * self.rate)
        deadline = time.monotonic() + seconds * 4 + 5
        while self.mark() < until:
            assert time.monotonic() < deadline, "JACK stopped calling the capture client"
            time.sleep(0.01)

    def since(self, mark: int, until: int | None = None) -> np.ndarray:
        """The samples read from ``mark`` on (channels x samples, float32)."""
        end = self.mark() if until is None else until
        assert end - mark <= self._size, "asked for more than the capture keeps"
        index = np.arange(mark, end) % self._size
        return self._data[:, index].copy()

    def xruns_since(self, mark: int) -> int:
        """The xruns the JACK server reported since ``mark`` (from :meth:`mark`)."""
        return int(self._meta[_XRUNS]) - self._xruns_at[mark]

    def close(self) -> None:
        """Stop the client (it leaves the graph cleanly) and free the shared memory."""
        self._stop.set()
        self._process.join(timeout=5)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(timeout=2)
        del self._data, self._meta
        for memory in (self._data_mem, self._meta_mem):
            memory.close()
            memory.unlink()

    def __enter__(self) -> Capture:
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


def _serve(server: str, sources: list[str], name: str, data_name: str, meta_name: str,
           size: int, stop: Event) -> None:
    """The capture process: a JACK client writing each cycle into the shared memory."""
    import os

    import jack

    with contextlib.suppress(PermissionError):  # before libjack's thread: it inherits this
        os.setpriority(os.PRIO_PROCESS, 0, -10)  # a loaded machine must not starve the reader
    data_mem, meta_mem = SharedMemory(data_name), SharedMemory(meta_name)
    views = {"data": np.ndarray((len(sources), size), np.float32, data_mem.buf),
             "meta": np.ndarray((_HEAD,), np.int64, meta_mem.buf)}
    client = jack.Client(name, servername=server, no_start_server=True)
    inputs = [client.inports.register(f"in_{i + 1}") for i in range(len(sources))]

    def process(frames: int) -> None:
        data, meta = views["data"], views["meta"]
        written = int(meta[_WRITTEN])
        start = written % size
        end = start + frames
        for row, port in enumerate(inputs):
            block = port.get_array()
            if end <= size:
                data[row, start:end] = block
            else:
                cut = size - start
                data[row, start:] = block[:cut]
                data[row, :end - size] = block[cut:]
        meta[_WRITTEN] = written + frames

    def connect() -> None:
        while not stop.wait(0.005):
            for source, port in zip(sources, inputs, strict=True):
                try:
                    if not client.get_all_connections(port) and client.get_ports(source):
                        client.connect(source, port)
                except jack.JackError:
                    pass  # the source went away meanwhile: the next look connects it

    def xrun(delay: float) -> None:
        views["meta"][_XRUNS] += 1

    client.set_process_callback(process)
    client.set_xrun_callback(xrun)
    client.activate()
    views["meta"][_RATE] = client.samplerate
    views["meta"][_PERIOD] = client.blocksize
    views["meta"][_READY] = 1
    keeper = threading.Thread(target=connect, daemon=True)
    keeper.start()
    stop.wait()
    keeper.join(timeout=2)
    client.deactivate()  # first: no callback is cut short by the close
    client.close()
    views.clear()
    data_mem.close()
    meta_mem.close()
