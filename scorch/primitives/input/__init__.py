"""What comes from outside, checked before it is parsed so that none can stall or exhaust
scorch: a person's regular expressions (RE2, linear time) and TOML files' size and depth."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorch.faces import lazy_face

if TYPE_CHECKING:
    from scorch.primitives.input.regex import compile_pattern
    from scorch.primitives.input.toml_limits import TooDeep, check_toml

__all__ = [
    "TooDeep", "check_toml", "compile_pattern",
]
__getattr__ = lazy_face(__name__, __file__)
