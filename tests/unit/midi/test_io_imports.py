"""MIDI I/O is reached through one contract and backends by name (docs/architecture.md).

Read from the source (AST): only the backends' own modules import python-rtmidi or
scorch's JACK input client, and only ``midi/io/`` names a backend's module; the router
and everything else import :mod:`midi.io`. The tests and benchmarks may import rtmidi
for their stand-in devices and bare baselines.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
#: The code that runs the installation.
TREES = ("scorch", "actors", "midi", "mcp_server")
BACKENDS = "midi/io/backends/"
#: What only a backend imports: the libraries of MIDI I/O, and the C client's old home.
LIBRARIES = ("rtmidi", "midi.io.jack_in")


def imported(tree: ast.Module) -> Iterator[str]:
    """Every module a module imports, by full name (``from a import b``: ``a`` and ``a.b``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


@functools.cache
def modules() -> dict[str, list[str]]:
    """Every module of the trees (its path) and what it imports."""
    return {str(path.relative_to(ROOT)): list(imported(ast.parse(path.read_text("utf-8"))))
            for tree in TREES for path in sorted((ROOT / tree).rglob("*.py"))
            if "__pycache__" not in path.parts}


def under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_only_the_backends_import_rtmidi_or_scorchs_jack_input() -> None:
    found = {where: [n for n in names if any(under(n, lib) for lib in LIBRARIES)]
             for where, names in modules().items()}
    # the rtmidi backend's own import shows the probe sees one
    assert {w for w, names in found.items() if names} == {f"{BACKENDS}rtmidi.py"}


def test_only_midi_io_names_a_backends_module() -> None:
    """The router opens backends by name through the registry, never a backend's module."""
    reach = {where: [n for n in names if n.startswith("midi.io.backends.")
                     and n.split(".")[3] in {"rtmidi", "scorch_jack"}]
             for where, names in modules().items()}
    assert {w for w, names in reach.items() if names and not w.startswith("midi/io/")} == set()
    # the probe sees a real import: the package's face imports the registry
    assert "midi.io.backends" in modules()["midi/io/__init__.py"]


def test_importing_midi_io_and_the_router_loads_no_backend() -> None:
    """A backend's library loads when a port opens, not with midi/ or the router."""
    probe = ("import sys, midi, midi.io, actors.router.actor, scorch.machine.doctor; "
             "print(' '.join(sorted(m for m in sys.modules if m == 'rtmidi' or "
             "m.startswith(('rtmidi.', 'midi.io')))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT)})
    loaded = out.stdout.split()
    assert "midi.io.ports" in loaded and "midi.io.backends" in loaded  # the probe sees modules
    assert not [m for m in loaded if m == "rtmidi" or m.startswith("rtmidi.")]
    assert "midi.io.backends.rtmidi" not in loaded
    assert "midi.io.backends.scorch_jack" not in loaded
