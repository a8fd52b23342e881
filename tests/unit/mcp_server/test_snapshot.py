from __future__ import annotations

import json

from mcp_server.early import SNAPSHOT
from mcp_server.snapshot import OWN


def test_the_shipped_handshake_depends_on_scorchs_own_files_only() -> None:
    # A library file under the checkout (a .venv inside it) is absent from an installed
    # wheel: its digest would never match there, and the first start after an install
    # would load the SDK (8 s on this machine) instead of answering from the snapshot.
    recorded = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert recorded["sources"], "the snapshot names the sources it was recorded from"
    assert {source.split("/")[0] for source in recorded["sources"]} <= set(OWN)
