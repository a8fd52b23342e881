"""The Room actor's typed proxy: what callers may ask of it, checked by mypy.

``Room.start(...).proxy()`` is cast to :class:`RoomProxy` where the actor
starts; its traversable parts (``proxy.nodes``, ``proxy.code``, ``proxy.buffers``)
are typed by the classes below, never instantiated.
"""

from __future__ import annotations

import pykka
from pykka.typing import ActorMemberMixin, proxy_method

from actors.room.actor import Room
from actors.room.buffers import Buffers
from actors.room.code import Code
from actors.room.gain import StageControl
from actors.room.nodes import Nodes
from actors.room.patterns import Patterns


class NodesProxy:
    """``proxy.nodes``: the named nodes."""

    play = proxy_method(Nodes.play)
    set_params = proxy_method(Nodes.set_params)
    set_many = proxy_method(Nodes.set_many)
    place = proxy_method(Nodes.place)
    release = proxy_method(Nodes.release)
    load_synthdef = proxy_method(Nodes.load_synthdef)


class CodeProxy:
    """``proxy.code``: code to sclang."""

    submit = proxy_method(Code.submit)
    execute_timed_out = proxy_method(Code.execute_timed_out)


class BuffersProxy:
    """``proxy.buffers``: the sample buffers."""

    load = proxy_method(Buffers.load)
    free = proxy_method(Buffers.free)


class PatternsProxy:
    """``proxy.patterns``: Pdef, Tdef, Ndef... as sclang reported them."""

    recorded = proxy_method(Patterns.recorded)
    restore = proxy_method(Patterns.restore)
    publish = proxy_method(Patterns.publish)


class StageProxy:
    """``proxy.stage``: the master gain in the room's safety stage."""

    set_gain = proxy_method(StageControl.set_gain)


class RoomProxy(ActorMemberMixin, pykka.ActorProxy[Room]):
    """An Room's proxy, as the facade, the supervisor and the watchdog ask it."""

    boot = proxy_method(Room.boot)
    quit = proxy_method(Room.quit)
    silence = proxy_method(Room.silence)
    reconfigure = proxy_method(Room.reconfigure)
    hung = proxy_method(Room.hung)
    jack_restarted = proxy_method(Room.jack_restarted)
    jack_failed = proxy_method(Room.jack_failed)
    nodes: NodesProxy
    code: CodeProxy
    buffers: BuffersProxy
    patterns: PatternsProxy
    stage: StageProxy
