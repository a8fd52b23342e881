"""The tempo: the installation's beat grid (and groups' own), and timed requests on it."""

from __future__ import annotations

import time
from typing import Any

from scorch.app.tree import ASK, RESTORE_WAIT, Tree
from scorch.errors import InvalidRequest
from scorch.state import INSTALLATION
from scorch.state import tempo as timing


class Tempo:
    """Read and set the tempo; say when a beat or bar falls (any thread)."""

    def __init__(self, tree: Tree) -> None:
        self._tree = tree

    def _scope(self, group: str | None) -> str:
        """The tempo scope of a group or room (checked), or the installation's."""
        if group is None:
            return ""
        self._tree.resolve(group)  # RoomNotFound names the known ones
        return self._tree.config.tempo_scope(group)

    def state(self, group: str | None = None) -> dict[str, Any]:
        """The beat grid of the installation (or of a group with its own tempo) now."""
        scope = self._scope(group)
        return self._tree.tempo_owner().state(scope).get(timeout=ASK)

    def set(self, group: str | None, bpm: float | None = None, beat: float | None = None,
            transport: str | None = None) -> dict[str, Any]:
        """Set the tempo, move the beat, or start/stop/continue the transport."""
        scope = self._scope(group)
        if group is not None and scope == "":
            raise InvalidRequest(f"{group!r} plays at the installation's tempo: leave group out "
                                 f"to change that, or add [tempo.groups.<group>] to the config")
        owner = self._tree.tempo_owner()
        return owner.set(scope, bpm, beat, transport).get(timeout=ASK)

    def when(self, at: float | timing.Quantum | None, delay: float | None,
             selector: str | None = None) -> float | None:
        """The Unix time of a timed request to ``selector``'s rooms (None: now).

        A beat or bar is on the grid those rooms play at: a group's own tempo, or the
        installation's; rooms on different grids have no common next bar (refused).
        See ``scorch.state.tempo``.
        """
        scope = INSTALLATION
        if isinstance(at, str):  # a beat: the grid is there once scorch has started
            self._tree.await_ready((), time.monotonic() + RESTORE_WAIT, f"at {at}")
        if isinstance(at, str) and selector is not None:
            config = self._tree.config
            scopes = {config.tempo_scope(room) for room in self._tree.resolve(selector)}
            if len(scopes) > 1:
                raise InvalidRequest(
                    f"{selector!r} spans rooms at different tempos ("
                    f"{', '.join(sorted(s or 'the installation' for s in scopes))}): "
                    f"{at} is not one moment for them; time them apart, or give a time")
            scope = scopes.pop()
        return timing.resolve(at, delay, time.time(), self.grid(scope))

    def grid(self, scope: str = INSTALLATION) -> timing.TempoGrid | None:
        """A beat grid in Unix time, for ``at = "next_beat"`` / ``"next_bar"``.

        The installation's, or a group's own (``scope``). None until the tempo runs
        (scorch is starting): beats are refused with a message, times and delays
        work. With Link the installation's grid is the Link session's, so the next
        bar is the same moment on every host.
        """
        view = self._tree.tempo
        if view is None:
            return None
        line = view.get(scope)
        mono, wall = time.monotonic(), time.time()
        return timing.TempoGrid(line.bpm, line.beats_per_bar,
                                wall - line.beat_at(mono) * 60.0 / line.bpm)

    def bpms(self) -> dict[str, float]:
        """bpm by tempo scope, leaving out one that follows a MIDI clock coming in."""
        conductor = self._tree.conductor
        if conductor is None:
            return {}
        tempos = {}
        for scope in [INSTALLATION, *self._tree.config.tempo.groups]:
            state = conductor.state(scope).get(timeout=ASK)
            if state["source"] != "midi clock in":
                tempos[scope] = float(state["bpm"])
        return tempos
