"""SynthDefs: the library, its compiler, warps, and scorch's own defs built without sclang."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.primitives.synthdefs.capture import (
        MAX_CHANNELS,
        pass_name,
        pass_synthdef,
        record_name,
        record_synthdef,
    )
    from scorch.primitives.synthdefs.library import ParamSpec, SynthDefInfo, SynthDefLibrary
    from scorch.primitives.synthdefs.meter import (
        DEFAULT_RATE,
        MAX_RATE,
        METER_REPLY,
        levels,
        meter_name,
        meter_synthdef,
    )
    from scorch.primitives.synthdefs.scgf import param_names
    from scorch.primitives.synthdefs.stage import GAIN_FLOOR_DB, GAIN_MAX_DB, StageReading
    from scorch.primitives.synthdefs.warps import WARP_ALIASES, Warp

__all__ = [
    "DEFAULT_RATE",
    "GAIN_FLOOR_DB",
    "GAIN_MAX_DB",
    "MAX_CHANNELS",
    "MAX_RATE",
    "METER_REPLY",
    "WARP_ALIASES",
    "ParamSpec",
    "StageReading",
    "SynthDefInfo",
    "SynthDefLibrary",
    "Warp",
    "levels",
    "meter_name",
    "meter_synthdef",
    "param_names",
    "pass_name",
    "pass_synthdef",
    "record_name",
    "record_synthdef",
]
__getattr__ = lazy_face(__name__, __file__)
