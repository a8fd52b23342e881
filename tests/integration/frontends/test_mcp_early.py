"""The handshake answered before the SDK loads (issue 19: initialize at once, from spawn).

Differential: the early answers must be the SDK's own. A cold start lets the
SDK answer and fills the cache; a warm start answers early; both are compared,
and the session must still work (the SDK saw the whole handshake) with exactly
one answer per request.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mcp_server.early import (
    SNAPSHOT,
    SNAPSHOT_ENV,
    AnswerFilter,
    HandshakeCache,
    shipped_answers,
    sources_digest,
)
from mcp_server.instructions import instructions
from mcp_server.tools import choose
from tests.conftest import jack_name
from tests.support.mcp.stdio import INITIALIZE, INITIALIZED, TOOLS, Session, one_room_config


def handshake(config: Path, cache: Path, snapshot: str | None = "",
              args: tuple[str, ...] = ()) -> tuple[dict[Any, Any], str]:
    """Initialize, tools/list and a tool call; the answers by id, and the log."""
    session = Session(config, cache, snapshot, args)
    try:
        session.send(INITIALIZE, INITIALIZED, TOOLS)
        got = {a["id"]: a for a in session.answers(2)}
        session.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": "synthdefs", "arguments": {"action": "list"}}})
        got.update({a["id"]: a for a in session.answers(1)})
        assert session.nothing_more(1.0), "a request was answered twice"
    finally:
        log = session.close()
    return got, log


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return one_room_config(tmp_path, jack_name("early"))


@pytest.mark.integration
def test_a_warm_start_answers_the_handshake_early_with_the_sdks_own_answers(
        config: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cold, cold_log = handshake(config, cache)
    assert "from the handshake cache" not in cold_log
    assert list(cache.glob("scorch/handshake-*.json")), "the SDK's answers were not kept"
    warm, warm_log = handshake(config, cache)
    assert "answered initialize 2025-06-18 early" in warm_log
    assert "answered tools/list early" in warm_log
    assert warm[1]["result"] == cold[1]["result"]
    assert warm[2]["result"] == cold[2]["result"]
    assert "result" in warm[3] and not warm[3]["result"].get("isError")
    assert "differently" not in warm_log


@pytest.mark.integration
def test_a_stale_cache_is_set_right_by_the_sdk(config: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    sdk, _ = handshake(config, cache)
    (stored,) = cache.glob("scorch/handshake-*.json")
    answers = json.loads(stored.read_text())
    answers["tools/list"] = {"tools": []}
    stored.write_text(json.dumps(answers))
    _, log = handshake(config, cache)
    assert "answered tools/list differently from the SDK" in log
    assert json.loads(stored.read_text())["tools/list"] == sdk[2]["result"]


@pytest.mark.integration
def test_a_cold_start_answers_early_with_the_shipped_handshake_which_is_the_sdks_own(
        config: Path, tmp_path: Path) -> None:
    """The first start after an install: no cache, the shipped answers; they must be the
    SDK's own for these sources (else `make handshake` records them again)."""
    recorded = json.loads(SNAPSHOT.read_text())
    assert recorded["digest"] == sources_digest(recorded["sources"]), (
        "mcp_server/handshake.json was recorded from other sources: run `make handshake`")
    assert shipped_answers() == recorded["answers"]
    sdk, sdk_log = handshake(config, tmp_path / "sdk")  # no shipped answers: the SDK's
    assert "early, from" not in sdk_log  # nothing answered early: the SDK answered
    cold, cold_log = handshake(config, tmp_path / "cold", snapshot=None)
    assert "answered initialize 2025-06-18 early, from the shipped handshake" in cold_log
    assert "answered tools/list early, from the shipped handshake" in cold_log
    assert cold[1]["result"] == sdk[1]["result"] == recorded["answers"]["initialize 2025-06-18"]
    assert cold[2]["result"] == sdk[2]["result"] == recorded["answers"]["tools/list"]
    assert "result" in cold[3] and not cold[3]["result"].get("isError")
    assert "differently" not in cold_log


@pytest.mark.integration
@pytest.mark.parametrize(("written", "args", "profile"), [
    ('tools = "play"', (), "play"), ("", ("--tools", "code"), "code")])
def test_a_profile_answers_early_with_its_own_shipped_handshake_which_is_the_sdks_own(
        tmp_path: Path, written: str, args: tuple[str, ...], profile: str) -> None:
    """A profile's handshake (its tools, its instructions) is kept apart from all the tools'
    and shipped too: chosen in the config or by --tools, it is answered early and is the
    SDK's own. The config has a mistake elsewhere, so no room starts."""
    config = tmp_path / "config.toml"
    config.write_text(f"[instances.a]\nnot_a_key = 1\n\n[mcp]\n{written}\n")
    recorded = json.loads(SNAPSHOT.read_text())["profiles"][profile]
    sdk, sdk_log = handshake(config, tmp_path / "sdk", args=args)
    assert "early, from" not in sdk_log
    cold, cold_log = handshake(config, tmp_path / "cold", snapshot=None, args=args)
    assert "answered tools/list early, from the shipped handshake" in cold_log
    assert cold[2]["result"] == sdk[2]["result"] == recorded["tools/list"]
    assert cold[1]["result"] == sdk[1]["result"] == recorded["initialize 2025-06-18"]
    listed = [tool["name"] for tool in cold[2]["result"]["tools"]]
    assert listed == choose(profile, "test")
    assert cold[1]["result"]["instructions"] == instructions(listed)
    assert "differently" not in cold_log
    cache = tmp_path / "cold" / "scorch"
    assert [p.name.endswith(f"-{profile}.json") for p in cache.glob("handshake-*.json")] == [
        True], "each choice of tools keeps its own answers"


def test_shipped_answers_of_other_sources_are_not_used(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    recorded = json.loads(SNAPSHOT.read_text())
    stale = tmp_path / "handshake.json"
    stale.write_text(json.dumps({**recorded, "digest": "0" * 64}))
    monkeypatch.setenv(SNAPSHOT_ENV, str(stale))
    assert shipped_answers() == {}
    assert HandshakeCache(tmp_path, key="k").get("tools/list") is None
    monkeypatch.setenv(SNAPSHOT_ENV, str(SNAPSHOT))
    assert HandshakeCache(tmp_path, key="k").get("tools/list") == recorded["answers"]["tools/list"]


def test_the_filter_drops_only_answers_given_early_and_keeps_partial_lines(
        tmp_path: Path) -> None:
    front = SimpleNamespace(cache=HandshakeCache(tmp_path, key="k"),
                            answered={"1": ("initialize 2025-06-18", {"v": 1})})
    answers = AnswerFilter(front)  # type: ignore[arg-type]
    answers.saw(json.dumps(TOOLS))
    first = answers.passes('{"jsonrpc": "2.0", "id": 1, "result": {"v": 1}}\n{"jsonrpc": "2.0",')
    assert first == ""  # the early one dropped; the next line is not whole yet
    rest = answers.passes(' "id": 2, "result": {"tools": ["x"]}}\n')
    assert json.loads(rest) == {"jsonrpc": "2.0", "id": 2, "result": {"tools": ["x"]}}
    assert front.cache.get("tools/list") == {"tools": ["x"]}
    assert answers.passes('{"jsonrpc": "2.0", "id": 1, "result": {"v": 1}}\n') != ""  # once
    assert HandshakeCache.slot({"method": "tools/list", "params": {"cursor": "c"}}) is None
    assert HandshakeCache.slot({"method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}) == "server/discover 2026-07-28"
