"""The errors scorch raises, named after what went wrong in the domain."""

from __future__ import annotations


class ScorchError(Exception):
    """Base of every error scorch reports to a person."""


class ConfigError(ScorchError):
    """The configuration file is missing, unreadable or invalid."""


class InstanceNotFound(ScorchError, KeyError):
    """A name matches no instance and no group."""

    def __init__(self, name: str, known: list[str], groups: list[str] | None = None) -> None:
        self.name = name
        self.known = known
        groups_text = f"; groups: {', '.join(groups)}" if groups else ""
        super().__init__(
            f"no instance or group named {name!r}; known instances: "
            f"{', '.join(known) or '(none)'}{groups_text}"
        )

    def __str__(self) -> str:
        return str(self.args[0])


class InstanceNotReady(ScorchError):
    """The instance exists but cannot take the request in its current state."""


class InstanceFailed(InstanceNotReady):
    """The instance exhausted its restart budget and stays down until booted again."""


class BootError(ScorchError):
    """A process could not be started (missing binary, busy port, bad option)."""


class BootTimeout(BootError):
    """A process started but did not say it was ready in time."""


class PortInUse(BootError):
    """The UDP port asked for is taken by another program."""


class NodeNotFound(ScorchError, KeyError):
    """A named persistent node does not exist on that instance."""

    def __str__(self) -> str:
        return str(self.args[0])


class InvalidRequest(ScorchError, ValueError):
    """A request's arguments are invalid; the message says which and why."""


class MidiUnavailable(ScorchError):
    """MIDI is off: no MIDI backend could be opened."""
