"""``scorch run`` imports only what runs: no numerics, no MCP SDK, no web stack (issue 29)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: Packages ``scorch run`` must not load before a call needs them: each costs megabytes
#: of RSS in a process that stays up for months (numpy alone about 15 MB).
HEAVY = ("numpy", "scipy", "soundfile", "pyloudnorm", "matplotlib", "mcp", "mcp_server",
         "starlette", "uvicorn", "sse_starlette", "anyio", "httpx", "websockets",
         "jsonschema", "re2", "music21",
         # mido: only to write or read a .mid and to send a named message to an output
         # (the router's hot path works on bytes); about 3 MB
         "mido", "basic_pitch", "onnxruntime", "librosa",
         # the schedule's (docs/schedule.md): only where a config has one
         "croniter", "astral", "holidays", "dateutil")

#: What ``scorch run`` imports before its first room boots: the command, the runner
#: (orchestra, facade, control socket) and the supervision tree with the MIDI router.
RUN_PATH = ("scorch.cli.main", "scorch.cli.running", "scorch.config.locate",
            "scorch.config.installation", "actors.supervisor", "actors.router.actor")


def test_the_run_path_loads_no_heavy_package() -> None:
    # pydantic is in the probe as a package the run path does load: a probe that saw
    # nothing at all would otherwise pass.
    code = (f"import sys, {', '.join(RUN_PATH)}; "
            f"print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}} & "
            f"{{'pydantic', *{HEAVY!r}}})))")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=root, env={"PYTHONPATH": str(root)})
    assert out.stdout.split() == ["pydantic"], f"scorch run now imports {out.stdout.strip()}"
