"""The schedule against a real room: a period in force right after boot, an entry a few
seconds ahead that scsynth plays at its time, and dry runs against what then happened."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scorch.api.firing import Firing
from scorch.api.local import LocalService
from scorch.api.ops import load_all
from scorch.app.orchestra import Orchestra
from scorch.config.installation import parse_config
from scorch.errors import ConfigError
from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.state.events import Kind
from tests.conftest import jack_name, node_param
from tests.support.harness import wait_for

pytestmark = pytest.mark.integration

#: Seconds from a reload that adds an entry to its time (time for the reload, and to watch).
AHEAD = 3.0


def clock(t: float) -> str:
    """``HH:MM:SS`` in UTC (the config's zone)."""
    return datetime.fromtimestamp(t, UTC).strftime("%H:%M:%S")


def cron(t: float) -> str:
    """A 6-field cron (seconds last) for the second ``t`` falls in, that day only."""
    moment = datetime.fromtimestamp(t, UTC)
    return f"{moment.minute} {moment.hour} {moment.day} {moment.month} * {moment.second}"


class Room:
    """A started room with a drone, its schedule kept by the API's firer."""

    def __init__(self, folder: Path, library: SynthDefLibrary) -> None:
        now = time.time()
        self.path = folder / "config.toml"
        text = f"""
state_dir = "{folder / 'state'}"
[audio]
driver = "dummy"
jack_server = "{jack_name('sched')}"
[docs]
build = "on-demand"
[location]
timezone = "UTC"
[instances.hall]
synthdefs = ["sine"]
[instances.hall.nodes.drone]
synthdef = "sine"
params = {{ freq = 220, amp = 0.001 }}

[[schedule]]
name = "open"
from = "{clock(now - 3600)}"
until = "{clock(now + 7200)}"
do = [{{ op = "set", instance = "hall", node = "drone", params = {{ amp = 0.002 }} }}]
after = [{{ op = "set", instance = "hall", node = "drone", params = {{ amp = 0.0 }} }}]

[[schedule]]
name = "tick"
when = "* * * * * */3"
do = [{{ op = "set", instance = "hall", node = "drone", params = {{ amp = 0.0025 }} }}]
catch_up = false
"""
        self.path.write_text(text)
        self.config = parse_config(text, self.path)
        self.orch = Orchestra(self.config, library)
        self.service = LocalService(self.orch)
        self.booted = time.time()
        errors = self.orch.start()
        assert errors == {"hall": None}, errors
        self.started = time.time()
        self.orch.hours.start(Firing(self.orch, load_all))

    def param(self, name: str) -> float:
        osc = self.orch.doors["hall"].scsynth
        assert osc is not None
        return node_param(osc, self.orch.rooms.nodes("hall")["drone"].node_id, name)


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory,
         library: SynthDefLibrary) -> Iterator[Room]:
    made = Room(tmp_path_factory.mktemp("schedule"), library)
    try:
        yield made
    finally:
        made.orch.stop()


def test_a_period_that_began_before_the_start_is_in_force_right_after_boot(room: Room) -> None:
    wait_for(lambda: room.param("amp") == pytest.approx(0.002), timeout=2.0)
    taken = time.time() - room.started
    assert taken < 2.0
    caught = wait_for(lambda: [f for f in room.orch.hours.recent()
                               if f.source == "catch-up"], timeout=2.0)
    assert [f.label.split(" at ")[0] for f in caught] == ["schedule 'open' (state for now)"]
    events = room.orch.views["hall"].events.since()
    assert any(e.kind == Kind.SCHEDULED and "'open'" in e.message for e in events)


def test_an_entry_a_few_seconds_ahead_sets_scsynth_at_its_time(room: Room) -> None:
    due = float(int(time.time() + AHEAD))
    with room.path.open("a") as config:  # a reload adds it (a boot may take longer than that)
        config.write(f"""
[[schedule]]
name = "rise"
when = "{cron(due)}"
rooms = "hall"
do = [{{ op = "set", node = "drone", params = {{ freq = 440 }} }}]
catch_up = false  # last year's on this day would be the state now
""")
    changes, _ = room.orch.reload()
    assert changes.hours
    assert time.time() < due - 1.0, "the reload took too long to watch the entry's time"
    wait_for(lambda: time.time() >= due - 0.3, timeout=AHEAD, interval=0.05)
    assert room.param("freq") == pytest.approx(220.0)
    changed = None
    while time.time() < due + 1.0:
        if room.param("freq") == pytest.approx(440.0):
            changed = time.time()
            break
        time.sleep(0.002)
    assert changed is not None, "the entry never set freq"
    assert abs(changed - due) < 0.05, f"set {changed - due:+.4f} s from its time"
    fired = next(f for f in room.orch.hours.recent() if f.label.startswith("schedule 'rise'"))
    assert fired.ok and fired.due == due
    history = room.service.call("history", {"action": "find", "query": "freq"}).model_dump()
    assert any("@set" in str(entry) for entry in history["entries"])


def test_the_dry_run_lists_what_then_happens(room: Room) -> None:
    now = time.time()
    planned = room.service.call("schedule", {"next": "7s"}).model_dump()["upcoming"]
    ticks = [p for p in planned if p["entry"] == "tick"]
    assert len(ticks) >= 2 and all(p["time"] > now for p in ticks)
    wait_for(lambda: time.time() > ticks[-1]["time"] + 0.5, timeout=10, interval=0.1)
    fired = [f for f in room.orch.hours.recent() if f.label.startswith("schedule 'tick'")]
    assert [p["time"] for p in ticks] == [f.due for f in fired if f.due > now][:len(ticks)]
    assert all(f.ok for f in fired)
    held = room.service.call("schedule", {"at": "now"}).model_dump()["holds"]
    assert [h["entry"] for h in held] == ["open"]  # what a start now brings back: not ticks
    assert room.param("amp") == pytest.approx(0.0025)  # though the last tick set this
    later = room.service.call("schedule", {"at": "+3h"}).model_dump()["holds"]
    assert [(h["entry"], h["part"]) for h in later] == [("open", "after")]


def test_one_undo_takes_a_fired_entry_back(room: Room) -> None:
    listed = room.service.call("undo", {"action": "list"}).model_dump()["journal"]
    assert any(e["call"] == "schedule" for e in listed)
    last = [e for e in listed if e["call"] == "schedule"][-1]
    assert last["summary"].startswith("schedule 'tick' at ")


def test_a_cue_made_by_the_tool_fires_at_its_go_counts_a_double_go_once_and_is_undone(
        room: Room) -> None:
    service = room.service
    before = room.param("freq")
    made = service.call("cue", {"action": "add", "cue": "1", "name": "low", "do": [
        {"op": "set", "instance": "hall", "node": "drone", "params": {"freq": 110}}]})
    assert made.standby == "1"  # type: ignore[attr-defined]
    went = service.call("cue", {"action": "go"})
    again = service.call("cue", {"action": "go"})
    assert went.counted and not again.counted  # type: ignore[attr-defined]
    go_at = went.go_at  # type: ignore[attr-defined]
    changed = None
    while time.time() < go_at + 1.0:
        if room.param("freq") == pytest.approx(110.0):
            changed = time.time()
            break
        time.sleep(0.002)
    assert changed is not None and abs(changed - go_at) < 0.05, (changed, go_at)
    wait_for(lambda: any(f.label.startswith("cue 1 'low'") for f in room.orch.hours.recent()))
    steps = service.call("undo", {}).model_dump()["steps"]
    assert [s["summary"][:16] for s in steps] == ["cue 1 'low' at 2"]
    assert room.param("freq") == pytest.approx(before)
    saved = (room.config.state_path() / "cues.json").read_text()
    assert '"number": "1"' in saved and '"standby": null' in saved


def test_a_reload_with_a_new_schedule_puts_the_room_in_its_state_for_now(room: Room) -> None:
    path = room.path
    text = path.read_text()
    changed = text.replace("amp = 0.002", "amp = 0.004").replace(
        'when = "* * * * * */3"', 'when = "0 0 1 1 *"')  # no more ticks
    wrong = changed.replace("params = { amp = 0.004 }", 'params = { amp = "x" }', 1)
    path.write_text(wrong)
    with pytest.raises(ConfigError, match=r"schedule\.0\.do\.0\.params"):
        room.orch.reload()  # nothing changes
    assert room.orch.hours.plan.entries[0].do[0].args["params"] == {"amp": 0.002}
    path.write_text(changed)
    changes, failed = room.orch.reload()
    assert changes.hours and not failed
    assert any("schedule and cues" in line for line in changes.summary())
    wait_for(lambda: room.param("amp") == pytest.approx(0.004), timeout=3.0)
