"""The operations, grouped by what they act on; importing a module registers its operations.

Each operation is a plain function over the :class:`~scorch.app.orchestra.Orchestra`
facade, decorated with :func:`scorch.api.operation.operation`: the function's
argument model, result model and docstring are the whole definition.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from scorch.api.operation import OPERATIONS, Operation
from scorch.errors import NotFound

__all__ = ["OPERATIONS", "lookup"]


def lookup(name: str) -> Operation[Any, Any]:
    """The operation called ``name``; NotFound lists the others."""
    try:
        return OPERATIONS[name]
    except KeyError:
        raise NotFound(f"no operation {name[:60]!r}; operations: "
                       f"{', '.join(sorted(OPERATIONS))}") from None


for _module in pkgutil.walk_packages(__path__, prefix=f"{__name__}."):
    importlib.import_module(_module.name)
