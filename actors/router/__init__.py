"""The MIDI router: keyboards into voices and controllers into params, straight to scsynth."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from actors.router.actor import MidiRouter
    from actors.router.answer import Answerer, Kept, MidiVoices, ScsynthVoices, Voices
    from actors.router.outgoing import encode
    from actors.router.proxy import MidiRouterProxy
    from actors.router.targets import OrchestraTargets, RemoteRooms, SceneCue

__all__ = [
    "Answerer", "Kept", "MidiRouter", "MidiRouterProxy", "MidiVoices", "OrchestraTargets",
    "RemoteRooms", "SceneCue", "ScsynthVoices", "Voices", "encode",
]
__getattr__ = lazy_face(__name__, __file__)
