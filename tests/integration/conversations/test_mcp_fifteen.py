"""Issue 38's fifteen everyday requests as one conversation: one real `mcp.Client` session
against two real rooms (test_mcp_sizes' rooms and session), each request checked where it
shows, on scsynth (/g_queryTree, /s_get, its notifications), in the sound (listen, a
recording) or in the files it wrote; never in the answers' wording."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mido
import pytest
from mcp import Client

from scorch.app.orchestra import Orchestra
from tests.conftest import scsynth_param
from tests.integration.conversations import test_mcp_sizes as sizes
from tests.integration.conversations.test_mcp_sizes import port_of, synths_in_default_group, until
from tests.support.mcp import audio_clock
from tests.support.mcp.calls import call, text
from tests.support.scsynth_listener import Listener

pytestmark = [pytest.mark.integration, pytest.mark.anyio]
#: The sizes test's fixtures: its two rooms (MIDI on their JACK server) and one session.
anyio_backend, orchestra, client = sizes.anyio_backend, sizes.orchestra, sizes.client

#: The keyboard phrase a model plays into scorch: C major up and down, a key every 0.25 s.
PHRASE = [60, 62, 64, 65, 67, 69, 71, 72, 71, 69, 67, 65, 64, 62, 60]
C_MAJOR = {0, 2, 4, 5, 7, 9, 11}
TICKS = 480


def synths(orch: Orchestra, room: str, synthdef: str) -> dict[int, dict[str, float]]:
    """The room's synths of ``synthdef`` on its scsynth now: node id -> controls."""
    return {i: c for i, d, c in synths_in_default_group(port_of(orch, room)) if d == synthdef}


async def heard_on(orch: Orchestra, room: str, synthdef: str, what: str,
                   check: Callable[[int, dict[str, float]], bool] = lambda i, c: True,
                   timeout: float = 15.0
                   ) -> tuple[int, dict[str, float]]:
    """Wait until the room's scsynth plays a synth of ``synthdef`` that passes ``check``."""
    async def found() -> tuple[int, dict[str, float]] | None:
        return next(((i, c) for i, c in synths(orch, room, synthdef).items() if check(i, c)),
                    None)

    return await until(found, what, timeout)


async def events_since(client: Client, room: str, before: int) -> list[dict[str, Any]]:
    """The room's events after the first ``before``."""
    return list((await call(client, "events", instance=room, full=True))["events"])[before:]


def note_ons(path: str | Path) -> list[tuple[int, int]]:
    """(tick, pitch) of each note_on of a .mid's tracks, in order."""
    out = []
    for track in mido.MidiFile(str(path)).tracks:
        tick = 0
        for message in track:
            tick += message.time
            if message.type == "note_on" and message.velocity:
                out.append((tick, message.note))
    return sorted(out)


async def test_fifteen_everyday_requests_each_checked_on_scsynth_in_the_sound_or_in_files(
        client: Client, orchestra: Orchestra) -> None:
    alpha, beta = port_of(orchestra, "alpha"), port_of(orchestra, "beta")
    try:
        await conversation(client, orchestra, alpha, beta)
    finally:
        await call(client, "stop", instance="*")
        for route in (await call(client, "midi", action="routes", full=True))["result"]:
            if route["origin"] == "runtime":
                await call(client, "midi", action="unmap", route_id=route["id"])


async def conversation(client: Client, orch: Orchestra, alpha: int, beta: int) -> None:
    # 1. two rooms: both READY, each its own scsynth answering its own tree
    status = await call(client, "status")
    rooms = {s["name"]: s for s in status["instances"]}
    assert {name: s["state"] for name, s in rooms.items()} == {"alpha": "READY",
                                                               "beta": "READY"}, status
    assert rooms["alpha"]["pids"]["scsynth"] != rooms["beta"]["pids"]["scsynth"]
    assert alpha != beta and synths_in_default_group(alpha) == synths_in_default_group(beta) == []

    # 2. a pad in alpha
    pad = await call(client, "play", instance="alpha", synthdef="ambient", node="pad",
                     params={"freq": 110, "amp": 0.05, "cutoff": 1200})
    assert synths(orch, "alpha", "ambient") and scsynth_param(alpha, pad["node_id"],
                                                              "cutoff") == 1200

    # 3. a kick and a bass as patterns in beta, from the next bar
    bpm = (await call(client, "tempo"))["bpm"]
    beat = 60 / bpm
    for synthdef in ("kick", "acid"):
        await call(client, "synthdefs", action="load", name=synthdef, instance="beta")
    since = time.time()
    kick = await call(client, "pattern", action="define", instance="beta", name="kick",
                      kind="Pdef", source="Pbind(\\instrument, \\kick, \\dur, 1, \\freq, 50, "
                                          "\\decay, 0.2, \\amp, 0.4)")
    await call(client, "pattern", action="define", instance="beta", name="bass", kind="Pdef",
               source="Pbind(\\instrument, \\acid, \\dur, 2, \\midinote, Pseq([33, 36], inf), "
                      "\\cutoff, 2400, \\amp, 0.15, \\legato, 0.5)")
    await heard_on(orch, "beta", "kick", "no kick reached scsynth",
                   lambda i, c: c["freq"] == 50)
    await heard_on(orch, "beta", "acid", "no bass reached scsynth",
                   lambda i, c: c["cutoff"] == 2400)
    await anyio.sleep(max(0.0, kick["lands_in"] - (time.time() - since)) + 4 * beat + 0.6)
    # their notes read back on the grid: each downbeat N|1, the bass on beats 1 and 3
    kicks = await call(client, "notes", action="played", input="beta/Pdef kick", since=since)
    assert [n["beat"] for n in kicks["notes"]][:4] == [1.0, 2.0, 3.0, 4.0], kicks["listing"]
    downbeats = [n["bar"] for n in kicks["notes"] if n["beat"] == 1.0]
    assert all(f"{bar}|1" in kicks["listing"] for bar in downbeats), kicks["listing"]
    basses = await call(client, "notes", action="played", input="beta/Pdef bass", since=since)
    assert basses["notes"] and {n["beat"] for n in basses["notes"]} <= {1.0, 3.0}, basses
    exported = await call(client, "notes", action="export", input="beta/Pdef kick",
                          since=since, path="e2e-kick.mid")
    ons = note_ons(exported["path"])
    # the file begins on its first kick, each after it a beat on
    assert [t for t, _ in ons[:4]] == [0, TICKS, 2 * TICKS, 3 * TICKS], ons
    assert exported["start"] == pytest.approx(kicks["notes"][0]["onset"], abs=1e-3)

    # 4. listen: the beat, heard, a beat apart at the pace the room's audio clock kept (a
    # dummy JACK driver runs slow on a loaded machine; tests/support/mcp/audio_clock.py)
    heard, pace = await audio_clock.listened(client, orch.doors["beta"].scsynth, "beta", 3.0)
    report = heard.structured_content or {}
    # the kick and the bass of a beat count once; within two steps of the analysis or a
    # tenth of the beat: the pace is the listen's mean, and a machine loaded to a third of
    # real time runs in bursts; a beat at another tempo or subdivision lies a third away
    heard_period = audio_clock.period(report["onsets"], apart=beat * pace / 3)
    slack = max(2 * audio_clock.ONSET_HOP, 0.1 * beat * pace)
    assert audio_clock.off_beat(heard_period, beat, pace) <= slack, (
        beat, pace, report["onsets"])

    # 5. darker on the next bar, and undone
    before = set(synths(orch, "beta", "acid"))
    darker = await call(client, "pattern", action="set", instance="beta", name="bass",
                        key="cutoff", value="400")
    lands = time.time() + darker["lands_in"]
    assert 0 < darker["lands_in"] <= 4 * beat + 0.05, darker
    while time.time() < lands - 0.1:  # nothing darker before the bar line
        assert all(c["cutoff"] == 2400 for c in synths(orch, "beta", "acid").values())
        await anyio.sleep(0.05)
    dark_id, _ = await heard_on(orch, "beta", "acid", "the bass never got darker",
                                lambda i, c: c["cutoff"] == 400)
    assert dark_id not in before and time.time() >= lands - 0.1
    undone = await call(client, "undo", instance="beta")
    assert undone["steps"], undone
    await heard_on(orch, "beta", "acid", "undo never brought the bright bass back",
                   lambda i, c: i > dark_id and c["cutoff"] == 2400)

    # 6. a checkpoint: the state kept in a file
    await call(client, "undo", action="checkpoint", name="e2e-fifteen")
    kept, where = orch.sessions.store.read("e2e-fifteen")
    assert Path(where).is_file() and "ambient" in kept and "kick" in kept and "bass" in kept

    # 7. beta's sclang killed: it comes back, its patterns play on, scsynth never stopped
    (room,) = (await call(client, "status", instance="beta"))["instances"]
    counted = len((await call(client, "events", instance="beta", full=True))["events"])
    os.kill(room["pids"]["sclang"], signal.SIGKILL)

    async def restored() -> list[dict[str, Any]] | None:  # the crash seen, sclang back
        events = await events_since(client, "beta", counted)
        kinds = [e["kind"] for e in events]
        return events if "CRASHED" in kinds and "RESTORED" in kinds[
            kinds.index("CRASHED"):] else None

    events = await until(restored, "beta's sclang never came back", timeout=40)
    assert [e["details"].get("process") for e in events if e["kind"] == "CRASHED"] == [
        "sclang"], events
    await anyio.sleep(0.3)  # a kick of the old sclang has ended by now (decay 0.2 s)
    await heard_on(orch, "beta", "kick", "the kick did not come back after the crash")
    (again,) = (await call(client, "status", instance="beta"))["instances"]
    assert again["pids"]["scsynth"] == room["pids"]["scsynth"]  # the sound went on
    assert again["pids"]["sclang"] != room["pids"]["sclang"], again
    assert again["restarts_in_window"] >= 1, again  # the status counts sclang's restart
    assert (await call(client, "execute", instance="beta", code="6 * 7"))["results"][0][
        "value"] == "42"
    assert scsynth_param(alpha, pad["node_id"], "cutoff") == 1200  # the other room untouched

    # 8. a keyboard phrase sent into scorch, continued by the partner, exported
    own = (await call(client, "midi", action="ports"))["result"]["send_to"][0]
    phrase: list[dict[str, Any]] = []
    for pitch in PHRASE:
        phrase += [{"type": "note_on", "note": pitch, "velocity": 90, "time": 0.05},
                   {"type": "note_off", "note": pitch, "time": 0.2}]
    since = time.time()
    await call(client, "midi", action="send", port=own, message=phrase)
    played = await call(client, "notes", action="played", input="scorch", since=since)
    assert [n["pitch"] for n in played["notes"]] == PHRASE, played["listing"]
    everything = await call(client, "notes", action="played", since=since)  # kept once:
    assert [n["pitch"] for n in everything["notes"]  # the inputs' notes, beside beta's beat
            if not n["source"].startswith("beta/")] == PHRASE, everything["listing"]
    listener = Listener(alpha)
    try:
        asked = time.time()
        answer = await call(client, "partner", action="continue", input="scorch",
                            since=since, notes=8, key="C", seed=7, instance="alpha",
                            synthdef="sine", name="answer", path="e2e-answer.mid")
        continued = answer["notes"]
        assert len(continued) == 8 and all(n["pitch"] % 12 in C_MAJOR for n in continued)
        assert asked < continued[0]["onset"] and continued[0]["beat"] == 1.0, answer
        await anyio.sleep(max(0.0, continued[-1]["onset"] - time.time()) + 0.6)
    finally:
        listener.close()
    starts = listener.synth_starts(continued[0]["onset"] - 0.05)
    assert len(starts) == 8, [h.message for h in starts]  # scsynth started each note
    assert [p for _, p in note_ons(answer["path"])] == [n["pitch"] for n in continued]
    phrase_file = await call(client, "notes", action="export", input="scorch", since=since,
                             path="e2e-phrase.mid")
    ons = note_ons(phrase_file["path"])
    assert [p for _, p in ons] == PHRASE
    first = played["notes"][0]["onset"] - phrase_file["start"]
    bar = beat * phrase_file["beats_per_bar"]
    assert 0 <= first < bar + 1e-3  # from the bar line at or before the first key
    assert ons[0][0] == pytest.approx(first / beat * TICKS, abs=2)

    # 9. a CC mapped to the pad's cutoff, moved by a message sent into scorch
    await call(client, "midi", action="map", spec={
        "port": "scorch", "cc": 74, "instance": "alpha", "node": "pad", "param": "cutoff",
        "range": [200, 2000]})

    async def turned() -> float | None:  # sent until the router has the new route
        # the knob turned all the way up: it picks the cutoff up on its way (takeover)
        await call(client, "midi", action="send", port=own, message=[
            {"type": "control_change", "control": 74, "value": v, "time": 0.002}
            for v in range(128)])
        cutoff = scsynth_param(alpha, pad["node_id"], "cutoff")
        return cutoff if cutoff == 2000 else None

    await until(turned, "the CC never moved the pad's cutoff")

    # 10. record the continuation played from its .mid, and transcribe the recording
    take = await call(client, "record", action="start", instance="alpha", seconds=4.0,
                      name="e2e-fifteen")
    await call(client, "notes", action="play", instance="alpha", path=answer["path"],
               synthdef="sine", name="replay", start="now")

    async def done() -> dict[str, Any] | None:
        listed = await call(client, "record", action="list", full=True)
        found = [r for r in listed["recordings"] if r["path"] == take["recordings"][0]["path"]]
        return found[0] if found and found[0]["state"] == "done" else None

    recording = await until(done, "the recording never ended", timeout=20)
    heard_notes = await call(client, "notes", action="transcribe", path=recording["path"])
    transcribed = {n["pitch"] for n in heard_notes["notes"]}
    wanted = {n["pitch"] for n in continued}
    assert len(wanted & transcribed) >= len(wanted) - 1, (wanted, heard_notes["listing"])

    # 11. what plays: as scsynth has it
    playing = await call(client, "playing", instance="*")
    by_room = {r["room"]: r for r in playing["rooms"]}
    assert {n["name"]: n["node_id"] for n in by_room["alpha"]["nodes"]} == {
        "pad": pad["node_id"]}
    assert pad["node_id"] in {i for i, _, _ in synths_in_default_group(alpha)}
    patterns = {p["name"]: p["playing"] for p in by_room["beta"]["patterns"]}
    assert patterns["kick"] and patterns["bass"], by_room["beta"]
    await heard_on(orch, "beta", "kick", "a pattern said playing sent nothing")
    replay = {p["name"]: p["playing"] for p in by_room["alpha"]["patterns"]}
    assert replay.get("replay") is False, by_room["alpha"]  # its .mid ended

    # 12. mistakes: refused with the argument named, and nothing changed
    tree = synths_in_default_group(alpha)
    typo = await client.call_tool("play", {"instance": "alpah", "synthdef": "sine"})
    assert typo.is_error and (typo.structured_content or {}).get("argument") == "instance"
    assert "alpha" in text(typo)  # the rooms there are
    wrong = await client.call_tool("set", {"instance": "alpha", "node": "pad",
                                           "params": {"cutof": 300}})
    assert wrong.is_error and "cutoff" in text(wrong)  # the pad's params
    assert synths_in_default_group(alpha) == tree
    assert scsynth_param(alpha, pad["node_id"], "cutoff") == 2000

    # 13. docs: a class's method with the argument names the running class library has
    names = (await call(client, "execute", instance="alpha", code=(
        "RLPF.class.findMethod(\\ar).argNames.drop(1).join(\",\")")))["results"][0]["value"]
    docs = await call(client, "docs", name="RLPF")
    (ar,) = [m for m in docs["doc"]["class_methods"] if m["name"] == "ar"]
    assert [a["name"] for a in ar["args"]] == names.strip('"').split(","), ar

    # 14. stop one room: beta silent on scsynth and in the sound, alpha's pad plays on
    await call(client, "stop", instance="beta")

    async def empty() -> bool | None:
        return True if not synths_in_default_group(beta) else None

    await until(empty, "beta's synths stayed after stop")
    silence = (await client.call_tool("listen", {"instance": "beta", "seconds": 1.0 + 4 * beat})
               ).structured_content or {}
    assert not [t for t in silence["onsets"] if t > 0.05] and (
        silence["peak_dbfs"] is None or silence["peak_dbfs"] < -60), silence
    assert not synths_in_default_group(beta)
    assert scsynth_param(alpha, pad["node_id"], "cutoff") == 2000

    # 15. back to the checkpoint: beta's patterns play again, the pad as it was kept
    await call(client, "undo", action="back", name="e2e-fifteen")
    await heard_on(orch, "beta", "kick", "the checkpoint's kick never came back")
    await heard_on(orch, "beta", "acid", "the checkpoint's bass never came back",
                   lambda i, c: c["cutoff"] == 2400)

    async def kept_cutoff() -> bool | None:
        node = orch.rooms.nodes("alpha")["pad"].node_id
        return True if scsynth_param(alpha, node, "cutoff") == 1200 else None

    await until(kept_cutoff, "the pad's cutoff did not go back to the checkpoint's")
