"""What the router needs from the orchestra, without importing it."""

from __future__ import annotations

from typing import Protocol


class Targets(Protocol):
    """Instances as the router sees them; the orchestra facade implements this.

    The router never calls these from the MIDI callback. It calls ``resolve``,
    ``endpoint`` and ``node_id`` from its actor thread: at start, on every route
    change and on every rescan tick. It calls ``param_changed`` from its sender
    thread, in batches, so that one must be safe to call from any thread.
    """

    def resolve(self, selector: str) -> list[str]:
        """Return the instance names of an instance name, a group name or ``*``.

        Raise KeyError with a clear message if the selector names nothing.
        """
        ...

    def endpoint(self, instance: str) -> tuple[str, int] | None:
        """Return scsynth's UDP address while ``instance`` is READY, else None."""
        ...

    def node_id(self, instance: str, node: str) -> int | None:
        """Return the scsynth node id of a named persistent node, None if unknown."""
        ...

    def param_changed(self, instance: str, node: str, param: str, value: float) -> None:
        """Record a value in the desired state; must not block and must be thread-safe."""
        ...
