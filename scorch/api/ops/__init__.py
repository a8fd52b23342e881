"""The operations, grouped by what they act on, and their one ordered registry.

Each operation is a plain function over the :class:`~scorch.app.orchestra.Orchestra`
facade, made an :class:`~scorch.api.operation.Operation` by
:func:`scorch.api.operation.operation`: the function's argument model, result model,
docstring and declarations are the whole definition. Importing a module of this package
registers nothing: :data:`REGISTRY` lists every operation, in the order the MCP tools,
the docs' table of them and ``scorch --help`` show them, by the module that defines it.
A command of the CLI imports the one module of its operation (:func:`lookup`,
:func:`of_command`); :func:`load_all` and ``OPERATIONS`` import every module.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

from scorch.api.operation import Operation
from scorch.errors import NotFound

__all__ = ["COMMANDS", "OPERATIONS", "REGISTRY", "load_all", "lookup", "of_command"]

REGISTRY: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("audio", ("record", "listen", "render")),
    ("buffers", ("buffer",)),
    ("code", ("execute", "stop", "console", "wait_for")),
    ("cues", ("cue",)),
    ("gain", ("gain",)),
    ("hearing.reference", ("reference",)),
    ("hearing.sweep", ("sweep",)),
    ("rooms", ("ping", "list_instances", "status", "instance", "events", "reload",
               "doctor")),
    ("knowledge", ("docs", "history")),
    ("logs", ("logs",)),
    ("midi", ("midi",)),
    ("music.notes", ("notes",)),
    ("music.partner", ("partner",)),
    ("music.patterns", ("pattern",)),
    ("music.playing", ("playing",)),
    ("music.tempo", ("tempo",)),
    ("panel", ("live", "fader")),
    ("scenes", ("scene",)),
    ("schedule", ("schedule",)),
    ("sessions", ("session",)),
    ("snippets", ("snippet",)),
    ("sound", ("synthdefs", "play", "set", "release")),
    ("undo", ("undo",)),
)
"""Every operation: (its module under ``scorch.api.ops``, the names of its operations)."""

COMMANDS: dict[str, str] = {
    "exec": "execute", "wait-for": "wait_for", "list": "list_instances",
    "boot": "instance", "quit": "instance", "restart": "instance", "go": "cue",
}
"""The commands and aliases of the CLI not named after their operation (its ``command``
and ``CliForm.aliases`` say them; ``tests/unit/api/test_registry.py`` holds them equal)."""


def _modules() -> dict[str, str]:
    """Each operation's module, by the operation's name."""
    return {name: module for module, names in REGISTRY for name in names}


@functools.cache
def _module(module: str) -> dict[str, Operation[Any, Any]]:
    """The operations a module of this package defines, by name."""
    loaded = importlib.import_module(f"{__name__}.{module}")
    return {value.name: value for value in vars(loaded).values()
            if isinstance(value, Operation) and value.run.__module__ == loaded.__name__}


@functools.cache
def load_all() -> dict[str, Operation[Any, Any]]:
    """Every operation by name, in the registry's order."""
    operations: dict[str, Operation[Any, Any]] = {}
    for module, names in REGISTRY:
        defined = _module(module)
        unlisted = set(defined) - set(names)
        if unlisted:
            raise RuntimeError(f"{module} defines {', '.join(sorted(unlisted))}: list them in "
                               f"scorch.api.ops.REGISTRY")
        operations.update((name, defined[name]) for name in names)
    return operations


def lookup(name: str) -> Operation[Any, Any]:
    """The operation called ``name`` (its module imported); NotFound lists the others."""
    modules = _modules()
    if name not in modules:
        raise NotFound(f"no operation {name[:60]!r}; operations: "
                       f"{', '.join(sorted(modules))}", name=name, known=modules)
    module = modules[name]
    return _module(module)[name]


def of_command(command: str) -> Operation[Any, Any] | None:
    """The operation a CLI command or alias runs, importing its module only (None: none)."""
    name = COMMANDS.get(command, command)
    return lookup(name) if name in _modules() else None


def __getattr__(name: str) -> Any:
    """``OPERATIONS``: every operation, all loaded."""
    if name == "OPERATIONS":
        return load_all()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
