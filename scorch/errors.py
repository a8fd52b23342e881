"""Every error scorch reports, in one hierarchy named after what went wrong.

Each message says what was wrong, where, and what to do about it: a person
reads it in Claude Desktop, in a terminal or in the journal. Errors cross the
control socket by class name (:func:`by_name`), so an attached client raises
the same kind the installation raised. Third-party errors are wrapped with
``raise ... from err``.

Each class also says, for a program, what kind of failure it is: a stable
``code`` of :data:`CODES`, whether the same request may succeed later
(``retryable``), and the ``argument`` at fault where one is known. They cross
the wire beside the message and reach MCP's error results and the CLI's
``--json`` (docs/errors.md lists them).

The tree, each class with the ones under it (a test keeps it true)::

    ScorchError: BootError, CaptureError, CodeFailed, ConfigError,
        IntrospectionError, InvalidRequest, MidiBackendError, NotFound, OscError,
        OscFailure, OscTimeout, PathRefused, PatternFailed, RemoteError,
        SynthDefError, Unavailable
    BootError: BootTimeout, PortInUse
    InvalidRequest: AudioFileError, FileExists, InvalidSnippet, ReadOnlySnippet,
        SampleRejected, SessionFileError, SnippetExists
    NotFound: BufferNotFound, CueNotFound, DocNotFound, MidiPortNotFound,
        NodeNotFound, PatternNotFound, RecordingNotFound, ReferenceNotFound,
        RoomNotFound, RouteNotFound, SampleNotFound, SceneNotFound, SessionNotFound,
        UnknownSnippet, UnknownSynthDef
    OscTimeout: ServerGone
    Unavailable: CannotListen, ControlBusy, DocsUnavailable, HistoryUnavailable,
        HostUnreachable, MidiUnavailable, NotRunning, RoomNotReady, TempoUnavailable
    RoomNotReady: Booting, NoAnswer, RoomFailed
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

#: Every code an error may carry, and what it means (docs/errors.md lists each).
CODES: dict[str, str] = {
    "INVALID_ARGUMENT": "the request's arguments cannot be used; change them",
    "NOT_FOUND": "a name matches nothing (a room, a node, a buffer, a file...)",
    "PATH_REFUSED": "a path argument names a file outside the folders the installation allows",
    "CONFIG_ERROR": "the configuration file is missing, unreadable or invalid",
    "BOOTING": "the room is booting or restarting; it comes back by itself",
    "UNAVAILABLE": "it exists but cannot take the request now (not running, busy, off)",
    "ROOM_FAILED": "the room used up its restarts and stays down until booted again",
    "TIMEOUT": "no answer came in time",
    "SUPERCOLLIDER_ERROR": "sclang or scsynth refused or failed the work asked of it",
    "PROCESS_ERROR": "a process or device could not be started or used",
    "FAILED": "the request was done in part, or could not be done; the message says why",
    "INTERNAL": "a fault in scorch itself; the log has the details",
}


class ScorchError(Exception):
    """Base of every error scorch reports to a person."""

    code: str = "FAILED"
    """What kind of failure it is, for a program: one of :data:`CODES`."""
    retryable: bool = False
    """Whether the same request, sent again later, may succeed."""
    argument: str | None = None
    """The request's argument at fault, where one is known."""

    def info(self) -> dict[str, str | bool | None]:
        """What a program reads of it: code, retryable, argument, and the text for people."""
        return {"code": self.code, "retryable": self.retryable, "argument": self.argument,
                "message": str(self)}

    def __str__(self) -> str:
        # KeyError subclasses would repr() their message; every scorch error reads as text.
        return str(self.args[0]) if self.args else ""


# --- the request was wrong -----------------------------------------------------


class InvalidRequest(ScorchError, ValueError):
    """A request's arguments cannot be used; the message says which and why."""

    code = "INVALID_ARGUMENT"


class SampleRejected(InvalidRequest):
    """A sound file scorch will not load: too large, or not audio scsynth can read."""


class SessionFileError(InvalidRequest):
    """A session file that cannot be read as a session (file:line in the message)."""


class AudioFileError(InvalidRequest):
    """A file that cannot be read, or repaired, as audio (the message names it and why)."""


class PathRefused(ScorchError, ValueError):
    """A path argument that leads outside the allowed folders (or is no path at all)."""

    code = "PATH_REFUSED"


class FileExists(InvalidRequest):
    """A file to write is there already, and the request did not say to write over it."""


class ConfigError(ScorchError):
    """The configuration file is missing, unreadable or invalid (file:line in the message)."""

    code = "CONFIG_ERROR"


class NotFound(ScorchError, KeyError):
    """A name that matches nothing; the message lists what does exist, and the nearest.

    Every kind of name (a room, a node, a pattern, a SynthDef, a scene...) is refused
    through here: given the ``name`` asked for and the names there are (``known``), the
    message ends with the nearest of them (:func:`nearest`), which a typo most likely meant.
    """

    code = "NOT_FOUND"
    name: str | None = None
    """The name asked for, where the refusal knows it (not across the wire)."""

    def __init__(self, message: str = "", *, name: str | None = None,
                 known: Iterable[str] = ()) -> None:
        self.name = name
        close = nearest(name, known) if name is not None else []
        if close:
            message += f"; did you mean {' or '.join(map(repr, close))}?"
        super().__init__(message)


#: How alike a name must be to one asked for to be offered instead (difflib's ratio).
NEAR = 0.6
#: How many near names a refusal offers at most.
NEAREST = 3


def nearest(name: str, known: Iterable[str]) -> list[str]:
    """The names of ``known`` nearest to ``name`` (at most :data:`NEAREST`, best first, then
    in their order): alike by difflib's ratio, ignoring case; of a very long name only its
    first characters count."""
    matcher = difflib.SequenceMatcher(b=name.casefold()[:200])
    scored: list[tuple[float, int, str]] = []
    for candidate in dict.fromkeys(known):
        matcher.set_seq1(candidate.casefold())
        if candidate != name and matcher.real_quick_ratio() >= NEAR \
                and matcher.quick_ratio() >= NEAR and (ratio := matcher.ratio()) >= NEAR:
            scored.append((-ratio, len(scored), candidate))
    return [candidate for _, _, candidate in sorted(scored)[:NEAREST]]


class RoomNotFound(NotFound):
    """A name matches no room and no group."""

    def __init__(self, name: str, known: Sequence[str] = (),
                 groups: Sequence[str] = ()) -> None:
        groups_text = f"; groups: {', '.join(groups)}" if groups else ""
        shown = name if len(name) <= 60 else name[:57] + "..."
        super().__init__(f"no room or group named {shown!r}; known rooms: "
                         f"{', '.join(known) or '(none)'}{groups_text}", name=name,
                         known=[*known, *groups])


class NodeNotFound(NotFound):
    """A named persistent node does not exist in that room."""


class UnknownSynthDef(NotFound):
    """A SynthDef name that the library does not hold (or that failed to load)."""


class MidiPortNotFound(NotFound):
    """No MIDI port matches a name, or the port went away."""


class RouteNotFound(NotFound):
    """No run-time MIDI route has that id."""


class BufferNotFound(NotFound):
    """No buffer of that name is loaded in that room."""


class SampleNotFound(NotFound):
    """A sound file path that names no readable file (here or in the sample folders)."""


class SessionNotFound(NotFound):
    """No saved session of that name."""


class SceneNotFound(NotFound):
    """No saved scene of that name."""


class PatternNotFound(NotFound):
    """No Pdef, Pbindef, Tdef or Ndef of that name in that room."""


class CueNotFound(NotFound):
    """No cue of that number in the cue list."""


class DocNotFound(NotFound):
    """No class or help page has that name; the message names the closest ones."""


class UnknownSnippet(NotFound):
    """No snippet, built-in or saved, has that name."""


class InvalidSnippet(InvalidRequest):
    """A snippet's name, tag, description or code breaks the rules."""


class ReadOnlySnippet(InvalidRequest):
    """The snippet is one of scorch's built-ins, which cannot be changed or deleted."""


class SnippetExists(InvalidRequest):
    """A saved snippet already has that name and replacing it was not asked for."""


class RecordingNotFound(NotFound):
    """No recording by that name; the message lists the recordings there are."""


class ReferenceNotFound(NotFound):
    """No reference sound by that name; the message lists the references there are."""


# --- the installation cannot do it now -------------------------------------------


class Unavailable(ScorchError):
    """Something exists but cannot take the request now; the message says when it might."""

    code = "UNAVAILABLE"
    retryable = True


class RoomNotReady(Unavailable):
    """The room exists but cannot take the request in its current state."""


class Booting(RoomNotReady):
    """scorch or a room is booting or restarting, past the call's own timeout: it comes
    back by itself; try again shortly, or with a longer timeout."""

    code = "BOOTING"


class NoAnswer(RoomNotReady):
    """Something was asked and did not answer in time (a room, an installation)."""

    code = "TIMEOUT"


class RoomFailed(RoomNotReady):
    """The room used up its restart budget and stays down until booted again."""

    code = "ROOM_FAILED"
    retryable = False


class MidiUnavailable(Unavailable):
    """MIDI is off: disabled in the config, or no MIDI backend could be opened."""

    code = "UNAVAILABLE"
    retryable = False


class ControlBusy(Unavailable):
    """The control socket serves its most connections at once; try again shortly."""


class NotRunning(Unavailable):
    """No ``scorch run`` answers on the control socket of this installation."""


class CannotListen(Unavailable):
    """An HTTP address cannot be listened on (taken, not this machine's, not allowed)."""


class TempoUnavailable(Unavailable):
    """The tempo is not kept now: scorch is starting, stopped, or could not start."""


class HostUnreachable(Unavailable):
    """A host of the installation does not answer (down, cut off, or ssh refused)."""


class DocsUnavailable(Unavailable):
    """The docs index is still being built, or could not be built (the message says why)."""


class HistoryUnavailable(Unavailable):
    """The execution history's database cannot be opened or read."""


# --- processes -----------------------------------------------------------------


class BootError(ScorchError):
    """A process could not be started (missing binary, busy port, bad option)."""

    code = "PROCESS_ERROR"


class BootTimeout(BootError):
    """A process started but did not say it was ready in time."""

    code = "TIMEOUT"
    retryable = True


class PortInUse(BootError):
    """The UDP port asked for is taken by another program."""


class CaptureError(ScorchError):
    """Sound could not be captured or rendered to a file (unwritable folder, full disk...)."""

    code = "PROCESS_ERROR"


class SynthDefError(ScorchError):
    """A SynthDef library file failed to compile or breaks the metadata convention."""

    code = "SUPERCOLLIDER_ERROR"


class CodeFailed(ScorchError):
    """Code scorch itself sent to sclang for a request did not run (the message says why)."""

    code = "SUPERCOLLIDER_ERROR"


class PatternFailed(ScorchError):
    """sclang refused a change to a pattern or proxy (its code threw)."""

    code = "SUPERCOLLIDER_ERROR"


class IntrospectionError(ScorchError):
    """sclang's class library could not be dumped, or its dump could not be read."""

    code = "SUPERCOLLIDER_ERROR"


# --- the wire ------------------------------------------------------------------


class OscError(ScorchError, ValueError):
    """Bytes that are not a well-formed OSC packet."""

    code = "SUPERCOLLIDER_ERROR"


class OscTimeout(ScorchError, TimeoutError):
    """scsynth sent no matching reply in time."""

    code = "TIMEOUT"
    retryable = True


class ServerGone(OscTimeout):
    """The scsynth a reply was awaited from exited: no reply will come."""

    code = "UNAVAILABLE"
    retryable = True


class OscFailure(ScorchError):
    """scsynth answered a command with ``/fail``."""

    code = "SUPERCOLLIDER_ERROR"


class MidiBackendError(ScorchError):
    """The MIDI backend (ALSA, JACK, CoreMIDI, WinMM) could not be opened."""

    code = "PROCESS_ERROR"


class RemoteError(ScorchError):
    """The installation answered with an error of a kind this side does not know."""

    code = "INTERNAL"


#: The names three classes had before "room" became scorch's one word for a room. The
#: control socket still sends them, and reads both, so scorches of either side of the
#: rename raise the same kind from each other's errors.
WIRE_NAMES: dict[str, str] = {"RoomNotFound": "InstanceNotFound",
                              "RoomNotReady": "InstanceNotReady",
                              "RoomFailed": "InstanceFailed"}
_FROM_WIRE = {sent: name for name, sent in WIRE_NAMES.items()}


def wire_name(kind: type[ScorchError]) -> str:
    """The name ``kind`` crosses the control socket by (its former one, where it had one)."""
    return WIRE_NAMES.get(kind.__name__, kind.__name__)


def by_name(kind: str) -> type[ScorchError] | None:
    """The error class called ``kind`` (as sent over the control socket), if scorch has one."""
    found = globals().get(_FROM_WIRE.get(kind, kind))
    if isinstance(found, type) and issubclass(found, ScorchError):
        return found
    return None


def rebuild(kind: str, message: str, code: str | None = None,
            retryable: bool | None = None, argument: str | None = None) -> ScorchError:
    """An error of class ``kind`` carrying ``message``, or a RemoteError naming the kind.

    ``code``, ``retryable`` and ``argument`` are the other side's (an older scorch
    sends none: the class's own stand).
    """
    cls = by_name(kind)
    if cls is None:
        err: ScorchError = RemoteError(f"{kind}: {message}")
    else:
        # Built without __init__: some kinds take structured arguments locally.
        err = cls.__new__(cls)
        err.args = (message,)
    if code in CODES:
        err.code = code
    if retryable is not None:
        err.retryable = retryable
    err.argument = argument
    return err
