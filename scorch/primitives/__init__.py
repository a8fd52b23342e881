"""SuperCollider and the OS beneath everything: OSC, scsynth, sclang, SynthDefs, system, disk."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.primitives.osc import (
        IMMEDIATELY,
        OscArg,
        OscMessage,
        decode_packet,
        encode_bundle,
        encode_message,
    )

__all__ = [
    "IMMEDIATELY", "OscArg", "OscMessage", "decode_packet", "encode_bundle", "encode_message",
]
__getattr__ = lazy_face(__name__, __file__)
