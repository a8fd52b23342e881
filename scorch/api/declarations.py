"""What an operation declares of itself beyond its function: typed declarations, one per concern.

:func:`scorch.api.operation.operation` takes them: :class:`Access` (what it does to the
installation), :class:`CliForm` (how the operator's command spells it), :class:`Changes`
(what of a session it changes, so the journal keeps it for ``undo``), and
``Spread`` (how it runs on several hosts, in ``operation.py`` beside the coordinator's
types). :class:`Where` is where one call goes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class Access:
    """What an operation does to the installation (MCP tool annotations derive from it)."""

    read_only: bool
    destructive: bool
    idempotent: bool
    runs_code: bool = False
    """It runs code the caller gave (sclang's, under its guard): destructive and open world,
    since the code may do whatever SuperCollider can."""
    writes_files: bool = False
    """It writes a file at a path or under a name the caller gives."""

    @property
    def word(self) -> str:
        """How a person says it: read-only, destructive, idempotent change or change, then
        whether it runs code or writes files."""
        if self.read_only:
            return "read-only"
        word = ("destructive" if self.destructive else
                "idempotent change" if self.idempotent else "change")
        return ", ".join([word, *(["runs code"] if self.runs_code else []),
                          *(["writes files"] if self.writes_files else [])])

    @staticmethod
    def most(accesses: Sequence[Access]) -> Access:
        """The most dangerous of ``accesses``: read-only if all are, destructive if any is."""
        return Access(read_only=all(a.read_only for a in accesses),
                      destructive=any(a.destructive for a in accesses),
                      idempotent=all(a.idempotent for a in accesses),
                      runs_code=any(a.runs_code for a in accesses),
                      writes_files=any(a.writes_files for a in accesses))


READ = Access(read_only=True, destructive=False, idempotent=True)
CHANGE = Access(read_only=False, destructive=False, idempotent=False)
SET = Access(read_only=False, destructive=False, idempotent=True)
DESTROY = Access(read_only=False, destructive=True, idempotent=False)
SILENCE = Access(read_only=False, destructive=True, idempotent=True)
CODE = Access(read_only=False, destructive=True, idempotent=False, runs_code=True)
WRITE = Access(read_only=False, destructive=False, idempotent=False, writes_files=True)
WRITE_OVER = Access(read_only=False, destructive=True, idempotent=False, writes_files=True)
"""Writes a file, over one that is there when asked to (``overwrite``)."""


@dataclass(frozen=True)
class Where:
    """Where a request goes on several hosts: the rooms it names, or a host by name."""

    rooms: str | None = None
    """A selector: a room, a group or ``*``."""
    host: str | None = None
    """A host named outright (a MIDI route goes where its controller is)."""


@dataclass(frozen=True)
class CliForm:
    """The operator's command (see ``scorch/cli/commands.py``): its word, and what it adds to
    the derived form."""

    command: str | None = None
    """The CLI subcommand (``scorch COMMAND``), None for none."""
    positional: tuple[str, ...] = ()
    """Arguments the CLI takes by position, in order."""
    short: Mapping[str, str] = field(default_factory=dict)
    """One-letter options by argument name: ``{"lines": "n"}`` gives ``-n``."""
    follow: str | None = None
    """The argument that takes the previous answer's ``cursor``: ``-f`` follows."""
    aliases: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """More commands for the same operation with some arguments fixed:
    ``{"boot": {"action": "boot"}}`` makes ``scorch boot ROOM``."""
    files: tuple[str, ...] = ()
    """Text arguments that may be ``-`` (read stdin) or the path of a file to read."""


@dataclass(frozen=True)
class Changes:
    """What a call changes of the state a session holds: the journal captures just that before
    it runs, so that ``undo`` takes the call back (and a session file keeps the result)."""

    rooms: Literal["named", "every"] | None = "named"
    """The rooms whose named nodes, values and buffers it may change: those its rooms argument
    names, every room of this host, or none."""
    patterns: bool = False
    """It may change the rooms' patterns (Pdef, Pbindef, Tdef, Ndef)."""
    tempo: bool = False
    """It may change the tempo."""
    routes: bool = False
    """It may change the MIDI routes."""
    given: str | None = None
    """An argument without which a call changes nothing a session holds (None: always
    journaled): ``play`` without ``node`` starts an unnamed synth."""


ROOMS_NAMED = Changes()
"""Changes the named nodes of the rooms it names (``set``, ``release``, a scene's recall)."""
PATTERNS = Changes(patterns=True)
"""Changes the patterns of the rooms it names, and their nodes."""
EVERYTHING = Changes(rooms="every", patterns=True, tempo=True, routes=True)
"""Changes all a session holds (loading a session, going back to a checkpoint)."""


@dataclass(frozen=True)
class Patience:
    """How long an attached caller waits for the answer."""

    seconds: float = 30.0
    """Seconds it waits, beyond ``argument``'s."""
    argument: str | None = None
    """The argument holding the operation's own timeout, added to ``seconds``."""


@dataclass(frozen=True)
class Tool:
    """The operation as an MCP tool."""

    listed: bool = True
    """False for operations Claude has no use for (the control socket's ``ping``)."""
    panel: str | None = None
    """The MCP Apps panel: ``show`` (the tool shows it), ``only`` (only it calls the tool)."""
