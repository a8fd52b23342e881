"""A package's face: the names its callers use, each loaded from its module on first use.

A package's ``__init__.py`` names its face twice, once for readers and type checkers and
once for Python: the names are imported under ``if TYPE_CHECKING:`` (``from
scorch.state.bus import Bus as Bus``) and listed in ``__all__``; ``__getattr__ =
lazy_face(__name__, __file__)`` then loads a name's module when a caller first asks for it
(PEP 562). Importing a package so costs nothing but its ``__init__``: ``scorch run`` and the
MIDI path load only the modules they use. tests/unit/test_faces.py checks that every
package's two lists agree and that every name resolves.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def face_of(init: Path) -> dict[str, str]:
    """The names an ``__init__.py`` imports under ``if TYPE_CHECKING:``, each to its module."""
    names: dict[str, str] = {}
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for found in node.body:
                if isinstance(found, ast.ImportFrom) and found.module:
                    names.update({a.asname or a.name: found.module for a in found.names})
    return names


def lazy_face(package: str, init: str) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package`` whose ``__init__.py`` is ``init``."""
    table: dict[str, str] = {}

    def __getattr__(name: str) -> Any:
        if not table:
            table.update(face_of(Path(init)))
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # the next lookup finds it at once
        return value

    return __getattr__
