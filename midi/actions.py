"""What the MIDI engine asks the router to send: one small immutable action each.

The engine (:mod:`midi.engine`) returns them; the router's sender
(``actors.router.sender``) turns each into an OSC datagram to a room's scsynth.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from midi.schema import CueRoute

Address = tuple[str, int]
"""A scsynth's host and UDP port."""


class SetParam(NamedTuple):
    """Set a named persistent node's parameter (coalescable per node and param)."""

    room: str
    node: str
    param: str
    value: float
    address: Address | None
    """None while the room is not running: the value only goes to desired state."""
    node_id: int | None


class StartVoice(NamedTuple):
    """``/s_new synthdef node_id 0 1 *args``: a key's voice at the head of group 1."""

    address: Address
    node_id: int
    synthdef: str
    args: tuple[str | float, ...]


class BendVoice(NamedTuple):
    """``/n_set node_id freq hz`` on a sounding voice (coalescable)."""

    address: Address
    node_id: int
    freq: float


class ReleaseVoice(NamedTuple):
    """``/n_set node_id gate 0``."""

    address: Address
    node_id: int


class VoiceParam(NamedTuple):
    """``/n_set node_id param value`` on one sounding voice: MPE pressure, timbre (coalescable)."""

    address: Address
    node_id: int
    param: str
    value: float


class SceneCue(NamedTuple):
    """Recall a scene (``value``: seconds to glide) or morph toward it (``value``: 0..1).

    Kind ``cue`` is a cue list button: ``scene`` is the cue operation's action (go, stop,
    standby), ``room`` the cue's number ('': the one on standby). Both are handed off
    to the app by the same path, which never blocks the MIDI thread.
    """

    kind: str
    """``recall``, ``morph`` or ``cue``."""
    scene: str
    room: str
    """The route's room selector (``cue``: the cue's number)."""
    value: float


class PageCue(NamedTuple):
    """Show another page of a controller's routes (a page button was pressed)."""

    port: str
    page: str


Action = SetParam | StartVoice | BendVoice | ReleaseVoice | VoiceParam | SceneCue | PageCue


def cue_presses(routes: Iterable[CueRoute]) -> list[Action]:
    """The cue list calls of the cue buttons pressed (kind ``cue``: see :class:`SceneCue`)."""
    return [SceneCue("cue", r.action, r.cue or "", 0.0) for r in routes]
