"""The operations, grouped by what they act on; importing a module registers its operations.

Each operation is a plain function over the :class:`~scorch.app.orchestra.Orchestra`
facade, decorated with :func:`scorch.api.operation.operation`: the function's
argument model, result model and docstring are the whole definition.

Importing this package imports no operation (a command of the CLI needs one module,
:mod:`scorch.cli.command_modules`): :func:`load_all`, :func:`lookup` and
``OPERATIONS`` import every module first.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from typing import Any

from scorch.api import operation
from scorch.errors import NotFound

__all__ = ["OPERATIONS", "load_all", "lookup"]

_loading = threading.Lock()
_loaded = False


def load_all() -> dict[str, operation.Operation[Any, Any]]:
    """Every operation by name, once every module of this package is imported."""
    global _loaded
    with _loading:
        if not _loaded:
            modules = [m.name for m in pkgutil.walk_packages(__path__, prefix=f"{__name__}.")]
            for name in modules:
                importlib.import_module(name)
            # In the modules' order, whatever imported one of them first (a CLI command, a
            # test): the MCP tools and the docs' table of them list the same order always.
            rank = {name: at for at, name in enumerate(modules)}
            ordered = sorted(operation.OPERATIONS.items(),
                             key=lambda item: rank.get(item[1].run.__module__, len(rank)))
            operation.OPERATIONS.clear()
            operation.OPERATIONS.update(ordered)
            _loaded = True
    return operation.OPERATIONS


def lookup(name: str) -> operation.Operation[Any, Any]:
    """The operation called ``name``; NotFound lists the others."""
    operations = load_all()
    try:
        return operations[name]
    except KeyError:
        raise NotFound(f"no operation {name[:60]!r}; operations: "
                       f"{', '.join(sorted(operations))}", name=name,
                       known=operations) from None


def __getattr__(name: str) -> Any:
    """``OPERATIONS``: every operation, all loaded."""
    if name == "OPERATIONS":
        return load_all()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
