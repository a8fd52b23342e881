"""Keep BENCHMARKS.md current: each benchmark replaces its own ``## `` section."""

from __future__ import annotations

import re
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "BENCHMARKS.md"


def write_section(section: str, path: Path = BENCHMARKS) -> None:
    """Replace the section with ``section``'s heading (its first line), or append it."""
    heading = section.splitlines()[0]
    assert heading.startswith("## "), f"a section starts with '## ', not {heading!r}"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n\n"
    pattern = re.compile(rf"^{re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _m: section.rstrip("\n") + "\n\n", text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
