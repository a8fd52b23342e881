"""The layout rules of docs/architecture.md that no linter checks: small modules, small folders."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Every folder of Python that people read: the code, its tests and its benchmarks.
TREES = ("scorch", "actors", "midi", "mcp_server", "tests", "bench")
MAX_LINES = 450
MAX_MODULES = 16


def modules() -> list[Path]:
    return sorted(path for tree in TREES for path in (ROOT / tree).rglob("*.py")
                  if "__pycache__" not in path.parts)


def test_the_trees_hold_python() -> None:
    assert len(modules()) > 100  # the rules below would pass on an empty tree


def test_no_module_is_over_450_lines() -> None:
    long = {str(path.relative_to(ROOT)): lines for path in modules()
            if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}, "split these by concern (docs/architecture.md)"


def test_no_folder_holds_more_than_16_modules_of_its_own() -> None:
    counts = Counter(str(path.parent.relative_to(ROOT)) for path in modules()
                     if path.name != "__init__.py")
    crowded = {folder: count for folder, count in counts.items() if count > MAX_MODULES}
    assert crowded == {}, "group these by what they are (docs/architecture.md)"
