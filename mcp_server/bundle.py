"""The MCP Bundle (``.mcpb``) that installs scorch into Claude Desktop in one click.

``python -m mcp_server.bundle FOLDER WHEEL`` lays out the folder ``mcpb pack``
zips: a ``manifest.json`` whose tools come from the operations (as the MCP tool
list does), the built wheel, and a ``pyproject.toml`` that names it. The bundle is
of the ``uv`` type: the host runs ``uv run`` in the unpacked folder, which makes
an environment with scorch and its dependencies (no compiled library is shipped
for one platform only) and starts ``server/main.py``, that is ``scorch mcp``.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

from scorch.api.ops import OPERATIONS

#: The manifest version whose server types include ``uv``.
MANIFEST_VERSION = "0.4"
#: Where the server's entry point is, in the bundle.
ENTRY_POINT = "server/main.py"
#: The user setting that names the config file.
CONFIG_SETTING = "config"
#: The user setting that chooses the tools (``scorch mcp --tools``).
TOOLS_SETTING = "tools"

MAIN = '''\
"""scorch's MCP server as its MCP Bundle starts it: ``scorch mcp`` with the chosen settings."""

import sys

from scorch.cli.main import main


def argv(given: list[str]) -> list[str]:
    """``scorch mcp``, with ``--config`` when the user chose a file and ``--tools`` when
    they chose tools."""
    out = ["mcp"]
    for option, value in zip(["--config", "--tools"], given):
        # An optional setting left unset arrives empty, or as its own placeholder.
        if value and not value.startswith("${"):
            out += [option, value]
    return out


if __name__ == "__main__":
    sys.exit(main(argv(sys.argv[1:])))
'''

DESCRIPTION = ("Named SuperCollider rooms you play from Claude: run code, play and shape "
               "sounds, map MIDI, hear what plays.")
LONG_DESCRIPTION = (
    "scorch runs SuperCollider rooms (scsynth and sclang, kept alive by a watchdog) and "
    "gives Claude tools to play them. It needs SuperCollider 3.13 and JACK (or PipeWire's "
    "JACK) on the machine: `scorch doctor` (and the `doctor` tool) says what is missing and "
    "the command that installs it. With no config file, one room that you hear.")


def tools() -> list[dict[str, str]]:
    """Every MCP tool's name and summary, from the operations (as the server lists them)."""
    return [{"name": op.name, "description": op.summary}
            for op in OPERATIONS.values() if op.tool]


def manifest(version: str, wheel: str) -> dict[str, Any]:
    """The bundle's ``manifest.json`` for scorch ``version`` shipped as ``wheel``."""
    return {
        "manifest_version": MANIFEST_VERSION,
        "name": "scorch",
        "display_name": "scorch: SuperCollider rooms",
        "version": version,
        "description": DESCRIPTION,
        "long_description": LONG_DESCRIPTION,
        "author": {"name": "scorch"},
        "server": {
            "type": "uv",
            "entry_point": ENTRY_POINT,
            "mcp_config": {
                "command": "uv",
                "args": ["run", "--directory", "${__dirname}", "--quiet", ENTRY_POINT,
                         "${user_config." + CONFIG_SETTING + "}",
                         "${user_config." + TOOLS_SETTING + "}"],
            },
        },
        "tools": tools(),
        "keywords": ["supercollider", "music", "audio", "midi", "synthesis"],
        "compatibility": {"platforms": ["darwin", "linux"],
                          "runtimes": {"python": ">=3.11"}},
        "user_config": {
            CONFIG_SETTING: {
                "type": "file",
                "title": "Config file",
                "description": "The installation's config.toml (`scorch init` writes a "
                               "commented one). Empty: your own config folder's, else one "
                               "room that you hear.",
                "required": False,
            },
            TOOLS_SETTING: {
                "type": "string",
                "title": "Tools",
                "description": "The tools Claude carries in every conversation: all, a profile "
                               "(play: a musician's, installation: a technician's, code: a "
                               "live coder's), or tool names separated by commas. Empty: the "
                               "config's [mcp] tools (all by default).",
                "required": False,
            },
        },
        "_meta": {"scorch": {"wheel": wheel}},
    }


def pyproject(wheel: str, requires_python: str = ">=3.11") -> str:
    """The bundle's own project: scorch from the wheel beside it, nothing to build."""
    return (
        "[project]\n"
        'name = "scorch-bundle"\n'
        'version = "0"\n'
        f'requires-python = "{requires_python}"\n'
        'dependencies = ["scorch"]\n\n'
        "[tool.uv]\n"
        "package = false\n\n"
        "[tool.uv.sources]\n"
        f'scorch = {{ path = "wheels/{wheel}" }}\n')


def lay_out(folder: Path, wheel: Path) -> Path:
    """Write the bundle's files into ``folder`` (emptied first); return the manifest."""
    version = wheel.name.split("-")[1]
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "server").mkdir(parents=True)
    (folder / "wheels").mkdir()
    shutil.copy2(wheel, folder / "wheels" / wheel.name)
    (folder / ENTRY_POINT).write_text(MAIN, encoding="utf-8")
    (folder / "pyproject.toml").write_text(pyproject(wheel.name), encoding="utf-8")
    path = folder / "manifest.json"
    path.write_text(json.dumps(manifest(version, wheel.name), indent=2) + "\n",
                    encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    """``python -m mcp_server.bundle FOLDER WHEEL``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or not args[1].endswith(".whl"):
        sys.stderr.write("usage: python -m mcp_server.bundle FOLDER WHEEL.whl\n")
        return 2
    sys.stderr.write(f"{lay_out(Path(args[0]), Path(args[1]))}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
