"""docs/architecture.md's drawing of the layers names what the code has, and nothing else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "architecture.md").read_text()


def layers() -> str:
    """The code block under "## The layers"."""
    section = DOC.split("## The layers", 1)[1]
    return section.split("```", 2)[1]


def test_the_layers_drawing_names_every_package_and_each_it_names_exists() -> None:
    drawn = layers()
    named = set(re.findall(r"\b((?:scorch/)?[a-z_]+)/\s", drawn))
    named |= set(re.findall(r"\b(scorch/[a-z_]+\.py)\b", drawn))
    packages = {str(d.relative_to(ROOT)) for d in (ROOT / "scorch").iterdir()
                if (d / "__init__.py").exists() or d.name == "bundled"}
    packages |= {"actors", "midi", "mcp_server"}
    files = {f"scorch/{f.name}" for f in (ROOT / "scorch").glob("*.py")} - {"scorch/__init__.py"}
    top = {n for n in named if n.startswith("scorch/") or n in {"actors", "midi", "mcp_server"}}
    assert packages | files <= top, f"not drawn: {sorted((packages | files) - top)}"
    for name in top:
        assert (ROOT / name).exists(), f"drawn but gone: {name}"


@pytest.mark.parametrize(("package", "ends"), [("app", "scorch/machine/"),
                                               ("primitives", "──")])
def test_every_module_and_subpackage_is_named_on_its_packages_line(package: str,
                                                                   ends: str) -> None:
    line = layers().split(f"scorch/{package}/", 1)[1].split(ends, 1)[0]
    words = set(re.findall(r"[a-z_]+/?", line))
    here = ROOT / "scorch" / package
    parts = {f.stem for f in here.glob("*.py") if f.name != "__init__.py"}
    parts |= {f"{d.name}/" for d in here.iterdir() if (d / "__init__.py").exists()}
    named = words | {w.rstrip("/") + "/" for w in words}  # "sclang" or "sclang/"
    assert parts <= named, f"not named: {sorted(parts - named)}"
