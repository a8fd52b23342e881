"""Which module of ``scorch/api/ops`` defines each command, so that a command imports one.

``python -m scorch.cli.command_index`` writes :mod:`scorch.cli.command_modules` from the
operations; ``tests/unit/cli/test_command_index.py`` fails when that file differs from it.
A command missing from it (a stale file) still works: every module is imported then.
"""

from __future__ import annotations

import sys
from pathlib import Path

TABLE = Path(__file__).with_name("command_modules.py")
HEAD = '''"""Each command's module (made by ``python -m scorch.cli.command_index``; do not edit)."""

MODULES: dict[str, str] = {
'''


def made() -> dict[str, str]:
    """Every command and alias of the operations, with the module that defines it."""
    from scorch.api.ops import load_all

    modules: dict[str, str] = {}
    for op in load_all().values():
        for command in ([op.command] if op.command else []) + list(op.cli.aliases):
            modules[command] = op.run.__module__
    return dict(sorted(modules.items()))


def text() -> str:
    """The source of :mod:`scorch.cli.command_modules`."""
    rows = "".join(f'    "{command}": "{module}",\n' for command, module in made().items())
    return f"{HEAD}{rows}}}\n"


def main() -> int:
    """Write the table."""
    TABLE.write_text(text(), encoding="utf-8")
    sys.stderr.write(f"{TABLE}: written\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
