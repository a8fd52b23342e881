"""Every package shows its face in its ``__init__.py`` and callers use it (scorch/faces.py).

A face lists in ``__all__`` the names other packages use, loads each from its module on first
use, and costs nothing to import; a module outside a package imports those names from the
face, never from the module behind it.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from scorch.faces import face_of

ROOT = Path(__file__).resolve().parents[2]
TOPS = ("scorch", "actors", "midi", "mcp_server")


def _name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


INITS = sorted(p for top in TOPS for p in (ROOT / top).rglob("__init__.py")
               if "__pycache__" not in p.parts)
PACKAGES = {_name(p): p for p in INITS}
LAZY = {name: init for name, init in PACKAGES.items() if face_of(init)}


def _listed(init: Path) -> list[str] | None:
    for node in ast.parse(init.read_text()).body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) else None)
        if isinstance(target, ast.Name) and target.id == "__all__" and node.value is not None:
            return list(ast.literal_eval(node.value))
    return None


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_package_lists_its_face(package: str) -> None:
    assert _listed(PACKAGES[package]) is not None, f"{package}/__init__.py has no __all__"


@pytest.mark.parametrize("package", sorted(LAZY))
def test_a_lazy_faces_two_lists_agree_and_each_name_is_there(package: str) -> None:
    listed = _listed(LAZY[package])
    assert listed is not None and sorted(listed) == sorted(face_of(LAZY[package])), package
    module = importlib.import_module(package)
    for name in listed:
        assert getattr(module, name) is getattr(
            importlib.import_module(face_of(LAZY[package])[name]), name), (package, name)
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        module.nothing_here  # noqa: B018


def test_importing_every_face_loads_none_of_the_modules_behind_it() -> None:
    behind = sorted({m for init in LAZY.values() for m in face_of(init).values()})
    code = (f"import importlib, json, sys\nfor p in {sorted(LAZY)!r}: "
            "importlib.import_module(p)\n"
            f"print(json.dumps([m for m in {behind!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True, timeout=120)
    assert json.loads(out.stdout) == []


def deep_imports(path: Path) -> list[str]:
    """``from P.m import N`` in ``path`` where ``N`` is on the face of ``P``, a package the
    file is not in: each should import from ``P``."""
    me = _name(path)
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom) or not node.module or node.level:
            continue
        package = node.module.rpartition(".")[0]
        if package not in LAZY or me == package or me.startswith(package + "."):
            continue
        face = face_of(LAZY[package])
        found += [f"{path.relative_to(ROOT)}:{node.lineno}: {a.name} from {package}"
                  for a in node.names if face.get(a.name) == node.module]
    return found


def test_callers_import_a_faces_names_from_the_face() -> None:
    sources = [p for top in TOPS for p in (ROOT / top).rglob("*.py")
               if "__pycache__" not in p.parts]
    assert [line for path in sources for line in deep_imports(path)] == []


def test_the_check_finds_a_deep_import() -> None:
    package, init = next(iter(sorted(LAZY.items())))
    name, module = next(iter(sorted(face_of(init).items())))
    planted = ROOT / "mcp_server" / "_planted_face_check.py"
    planted.write_text(f"from {module} import {name}\n")
    try:
        assert deep_imports(planted) == [
            f"mcp_server/_planted_face_check.py:1: {name} from {package}"]
    finally:
        planted.unlink()
