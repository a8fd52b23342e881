"""The MIDI router's typed proxy: what callers may ask of it, checked by mypy.

``MidiRouter.start(...).proxy()`` is cast to :class:`MidiRouterProxy` where the
router starts.
"""

from __future__ import annotations

import pykka
from pykka.typing import ActorMemberMixin, proxy_method

from actors.router.actor import MidiRouter


class MidiRouterProxy(ActorMemberMixin, pykka.ActorProxy[MidiRouter]):
    """The router's proxy, as the supervisor and the facade ask it."""

    ports = proxy_method(MidiRouter.ports)
    routes = proxy_method(MidiRouter.routes)
    map = proxy_method(MidiRouter.map)
    unmap = proxy_method(MidiRouter.unmap)
    learn = proxy_method(MidiRouter.learn)
    send = proxy_method(MidiRouter.send)
    panic = proxy_method(MidiRouter.panic)
    observe = proxy_method(MidiRouter.observe)
    forget = proxy_method(MidiRouter.forget)
    refresh_targets = proxy_method(MidiRouter.refresh_targets)
    stats = proxy_method(MidiRouter.stats)
    profiles = proxy_method(MidiRouter.profiles)
    switch_page = proxy_method(MidiRouter.switch_page)
    capture = proxy_method(MidiRouter.capture)
