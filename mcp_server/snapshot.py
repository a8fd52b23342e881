"""Record the SDK's own handshake answers with scorch: ``python -m mcp_server.snapshot``.

``scorch mcp`` answers ``initialize`` and ``tools/list`` before the SDK loads
(``mcp_server.early``); on the first start after an install it has no answers of
its own yet, so it takes these, shipped in ``mcp_server/handshake.json``, when
they were recorded from the same sources. Run this after changing an operation,
the tools or the instructions (``make handshake``; ``make`` runs it at install):
the differential test fails while the file is not the SDK's answers for the tree.

The answers are the SDK's, taken as a client gets them: ``scorch mcp`` is started
with no handshake of its own for each protocol version, asked, and what it wrote
to its cache is kept; so for all the tools, and for each profile (``--tools``, whose
handshake lists its own tools and says them in its instructions). Its config is one
with a mistake, so that no room starts (the handshake does not depend on the rest of
the config).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from mcp_server.early import (
    ROOT,
    SNAPSHOT,
    SNAPSHOT_ENV,
    VERSION_META,
    sources_digest,
    versions,
)
from scorch.config import PROFILES

#: scorch's own packages: the libraries are named by version instead (``versions``), since
#: a virtualenv inside the checkout would put their files under the repository too, where
#: an installed wheel has none.
OWN = ("scorch", "mcp_server", "actors", "midi")


def sources() -> list[str]:
    """Every module of scorch's own packages that the SDK's answers are built from (what
    building the server imports; not this one), as paths under the repository."""
    from mcp_server.server import build_server
    from scorch.api import LocalService

    build_server(LocalService())
    found = set()
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if not file:
            continue
        path = Path(file).resolve()
        if path.suffix != ".py" or not path.is_relative_to(ROOT):
            continue
        relative = path.relative_to(ROOT)
        if relative.parts[0] in OWN and path != Path(__file__).resolve():
            found.add(relative.as_posix())
    return sorted(found)


def sessions() -> list[list[dict[str, Any]]]:
    """The requests of each session that fills the cache: one per protocol version.

    Modern versions too (``server/discover``, then ``tools/list`` with the envelope):
    a client that probes ``server/discover`` and gets no answer within its timeout
    (a first start on a busy machine) falls back to ``initialize`` while the SDK
    still takes the probe, and the session's eras disagree.
    """
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    hello = {"name": "snapshot", "version": "1"}
    classic: list[list[dict[str, Any]]] = [
        [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": hello}},
         {"jsonrpc": "2.0", "method": "notifications/initialized"},
         {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
        for version in HANDSHAKE_PROTOCOL_VERSIONS]
    modern = [[_modern(1, "server/discover", version), _modern(2, "tools/list", version)]
              for version in MODERN_PROTOCOL_VERSIONS]
    return classic + modern


def _modern(request_id: int, method: str, version: str) -> dict[str, Any]:
    """A modern-era request: its protocol version and capabilities in ``_meta``."""
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {"_meta": {
        VERSION_META: version, "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "snapshot", "version": "1"}}}}


def sdk_answers(folder: Path, tools: str = "") -> dict[str, Any]:
    """The SDK's answers to every session's requests, as ``scorch mcp`` kept them (``tools``:
    a profile's name, "" for all). The sessions run side by side, each with a cache of its
    own (two writing one cache file would each keep only their own answers)."""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        kept = pool.map(lambda job: _session(folder / str(job[0]), tools, job[1]),
                        enumerate(sessions()))
        return {slot: answer for answers in kept for slot, answer in answers.items()}


def _session(folder: Path, tools: str, requests: list[dict[str, Any]]) -> dict[str, Any]:
    """One ``scorch mcp`` asked ``requests``: what it kept in its cache."""
    folder.mkdir(parents=True)
    config = folder / "config.toml"
    config.write_text("[instances.snapshot]\nnot_a_key = 1\n")
    env = {**os.environ, "XDG_CACHE_HOME": str(folder / "cache"), SNAPSHOT_ENV: "",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    ids = [r["id"] for r in requests if "id" in r]
    chosen = ["--tools", tools] if tools else []
    proc = subprocess.Popen([sys.executable, "-m", "scorch.cli.main", "mcp", "--config",
                             str(config), *chosen], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
    proc.stdin.flush()
    answered = [json.loads(proc.stdout.readline()).get("id") for _ in ids]
    proc.stdin.close()
    proc.wait(timeout=120)
    if sorted(answered) != sorted(ids):
        raise RuntimeError(f"scorch mcp answered {answered}, not {ids}")
    answers: dict[str, Any] = {}
    for kept in (folder / "cache" / "scorch").glob("handshake-*.json"):
        answers.update(json.loads(kept.read_text(encoding="utf-8")))
    return answers


def record(path: Path = SNAPSHOT) -> bool:
    """Write the snapshot for the tree as it is; True if it changed."""
    listed = sources()
    with tempfile.TemporaryDirectory() as tmp:
        answers = sdk_answers(Path(tmp) / "all")
        profiles = {name: sdk_answers(Path(tmp) / name, name) for name in PROFILES}
    snapshot = {"digest": sources_digest(listed), "versions": versions(), "sources": listed,
                "answers": answers, "profiles": profiles}
    text = json.dumps(snapshot, indent=1, sort_keys=True) + "\n"
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except OSError:
        pass
    path.write_text(text, encoding="utf-8")
    return True


def up_to_date(path: Path = SNAPSHOT) -> bool:
    """True if ``path`` was recorded from the sources as they are (its digest still holds).

    A module newly imported by the server is imported from a listed one, which then
    changed: so the listed files alone tell.
    """
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
        return bool(recorded["digest"] == sources_digest(recorded["sources"]))
    except (OSError, ValueError, KeyError, TypeError):
        return False


def main() -> int:
    """Record the snapshot unless it is up to date (``--force``: record it anyway)."""
    if "--force" not in sys.argv[1:] and up_to_date():
        sys.stderr.write(f"{SNAPSHOT}: up to date\n")
        return 0
    changed = record()
    sys.stderr.write(f"{SNAPSHOT}: {'recorded' if changed else 'unchanged'}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
