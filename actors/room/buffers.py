"""The sample buffers of one room, on its scsynth and in its desired state.

:class:`Buffers` belongs to the Room actor, which exposes it to proxies as a
traversable attribute (``proxy.buffers.load(...)``): every method runs in the
actor's thread. A buffer is recorded only once scsynth said it read the file
(``/done``) and told its size (``/b_info``), so the desired state never holds a
buffer scsynth refused; a restore loads every recorded buffer again under the
same bufnum before the nodes that play it (:func:`actors.room.processes.restore_buffers`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from actors.room.processes import Processes, load_timeout
from scorch.errors import BufferNotFound, InvalidRequest, OscFailure, SampleRejected
from scorch.primitives.scsynth import Cmd, OscClient, Reply, commands
from scorch.state import (
    SAMPLE_BUFFER_BASE,
    SAMPLE_BUFFER_COUNT,
    BufferFreed,
    BufferLoaded,
    BufferState,
    Bus,
    DesiredState,
    RoomView,
)


class Buffers:
    """Sample buffers: load, free, and what they are (actor thread)."""

    def __init__(self, name: str, desired: DesiredState, processes: Processes,
                 view: RoomView, bus: Bus, require_ready: Callable[[], None]) -> None:
        self.name = name
        self._bus = bus
        self.desired = desired
        self._processes = processes
        self._view = view
        self._require_ready = require_ready

    def publish(self) -> None:
        """Show the buffers to readers (copies: they read them unlocked); announce each
        loaded (or read from another file) and freed."""
        before = self._view.buffers
        now = self._view.buffers = {name: replace(buf)
                                    for name, buf in self.desired.buffers.items()}
        for name, buf in now.items():
            old = before.get(name)
            if old is None or (old.bufnum, old.path) != (buf.bufnum, buf.path):
                self._bus.publish(BufferLoaded(self.name, name, buf.bufnum, buf.path))
        for name in before.keys() - now.keys():
            self._bus.publish(BufferFreed(self.name, name))

    def _osc(self) -> OscClient:
        osc = self._processes.osc
        assert osc is not None, "checked by require_ready"
        return osc

    def free_bufnums(self) -> list[int]:
        """Bufnums no buffer of this room uses, lowest first."""
        return self.desired.free_bufnums()

    def load(self, name: str, path: str, bufnum: int | None = None) -> BufferState:
        """Read the sound file at ``path`` (absolute, checked by the caller) into a buffer.

        A name loaded before keeps its bufnum, so synths playing it hear the new file.
        ``bufnum``: this one (a session's), else the name's own, else the lowest free.
        All or nothing: SampleRejected when scsynth cannot read the file as sound.
        """
        self._require_ready()
        old = self.desired.buffers.get(name)
        if bufnum is None:
            bufnum = old.bufnum if old is not None else self._free_bufnum()
        last = SAMPLE_BUFFER_BASE + SAMPLE_BUFFER_COUNT - 1
        if not SAMPLE_BUFFER_BASE <= bufnum <= last:
            raise InvalidRequest(f"bufnum {bufnum} is outside scorch's sample buffers "
                                 f"{SAMPLE_BUFFER_BASE}..{last}")
        holder = self.desired.by_bufnum(bufnum)
        if holder is not None and holder.name != name:
            raise InvalidRequest(f"room {self.name!r}: bufnum {bufnum} holds buffer "
                                 f"{holder.name!r}; free it first")
        osc = self._osc()
        try:
            osc.exchange(commands.b_alloc_read(bufnum, path), Cmd.B_ALLOC_READ, Reply.DONE,
                         timeout=load_timeout([path]),
                         match=lambda m: list(m.args[:2]) == [Cmd.B_ALLOC_READ, bufnum])
        except OscFailure as err:
            raise SampleRejected(f"scsynth could not read {path} as a sound file: "
                                 f"{str(err).removeprefix(Cmd.B_ALLOC_READ + ': ')}") from err
        frames, channels, rate = self._query(osc, bufnum)
        if frames == 0:
            osc.send(commands.b_free(bufnum))
            raise SampleRejected(f"{path} holds no audio frames (an empty sound file)")
        state = BufferState(name, bufnum, path, frames, channels, rate)
        if old is not None and old.bufnum != bufnum:
            osc.send(commands.b_free(old.bufnum))
        self.desired.buffers[name] = state
        self.publish()
        return replace(state)

    def free(self, name: str) -> BufferState:
        """Free a buffer on scsynth and forget it (synths playing it fall silent)."""
        state = self.desired.buffers.pop(name, None)
        if state is None:
            raise BufferNotFound(f"room {self.name!r} has no buffer {name!r}; buffers: "
                                 f"{', '.join(self.desired.buffers) or '(none)'}", name=name,
                                 known=self.desired.buffers)
        osc = self._processes.osc
        if osc is not None:
            osc.send(commands.b_free(state.bufnum))
            osc.sync(timeout=5.0)
        self.publish()
        return state

    def _free_bufnum(self) -> int:
        free = self.desired.free_bufnums()
        if not free:
            raise InvalidRequest(f"room {self.name!r} holds {SAMPLE_BUFFER_COUNT} buffers, "
                                 "all scorch has: free one first")
        return free[0]

    @staticmethod
    def _query(osc: OscClient, bufnum: int) -> tuple[int, int, float]:
        reply = osc.exchange(commands.b_query(bufnum), Cmd.B_QUERY, Reply.B_INFO, timeout=2.0,
                             match=lambda m: bool(m.args) and m.args[0] == bufnum)
        _, frames, channels, rate = reply.args[:4]
        return int(frames), int(channels), float(rate)  # type: ignore[arg-type]
