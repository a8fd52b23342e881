"""A ``scorch`` command imports the one module of operations it runs (issue 29).

Every operation's models took about a second of a core to import on every
``scorch status``, and before the first room of ``scorch run`` booted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scorch.api.ops import OPERATIONS
from scorch.cli.command_index import TABLE, made, text
from scorch.cli.main import OWN_COMMANDS, build_parser

ROOT = Path(__file__).resolve().parents[2]


def loaded_after(argv: list[str]) -> list[str]:
    """The modules of ``scorch.api.ops`` a fresh interpreter holds once it parsed ``argv``."""
    code = ("import json, sys; from scorch.cli.main import build_parser; "
            f"build_parser({argv!r}).parse_args({argv!r}); "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('scorch.api.ops.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT)})
    return list(json.loads(out.stdout))


def test_the_command_table_is_the_one_the_operations_make() -> None:
    assert TABLE.read_text(encoding="utf-8") == text(), "run: python -m scorch.cli.command_index"
    commands = {op.command for op in OPERATIONS.values() if op.command} | {
        alias for op in OPERATIONS.values() for alias in op.cli.aliases}
    assert set(made()) == commands and not commands & OWN_COMMANDS


def test_a_command_imports_only_its_own_module_and_scorch_run_none() -> None:
    assert loaded_after(["status", "--json"]) == ["scorch.api.ops.instances"]
    assert loaded_after(["run"]) == []
    assert loaded_after(["--verbose", "doctor"]) == []  # scorch's own: no operation either


def test_without_a_known_command_the_parser_offers_every_command(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser(["stauts"]).parse_args(["stauts"])
    error = capsys.readouterr().err
    for command in ("status", "exec", "run", "undo"):
        assert f"'{command}'" in error, error
    every = build_parser([])  # no command (``scorch --help``): every one
    for argv in (["status"], ["exec", "lobby", "1"], ["undo"], ["run"]):
        assert every.parse_args(argv).command == argv[0]
