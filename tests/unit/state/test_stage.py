"""A room's stage as readers see it: the readings' listeners, the stage its config asks for,
the gain a resumed session starts it at, and the gain operation's arguments."""

from __future__ import annotations

from typing import Any

import pytest

from actors.room.gain import StageControl
from actors.room.processes import Processes, RoomSettings
from actors.room.staging import stage_for
from scorch.api.ops import lookup
from scorch.config.safety import SafetyConfig
from scorch.config.tables import AudioConfig, RoomConfig, WatchdogConfig
from scorch.errors import InvalidRequest
from scorch.primitives.synthdefs.stage import LATENCY, StageReading
from scorch.state.bus import Bus
from scorch.state.desired import DesiredState
from scorch.state.door import doors_of
from scorch.state.meters import Readings, StageState
from scorch.state.session import RoomSpec
from scorch.state.view import RoomView

GAIN = lookup("gain")


def _reading(node: int) -> StageReading:
    return StageReading(node, 1.0, 0.89, 0.5, 0.0, False)


def test_readings_tell_each_listener_until_it_stops_and_none_forgets_the_last() -> None:
    readings, heard, also = Readings(), list[int](), list[int]()
    stop = readings.listen(lambda r: heard.append(r.node))
    readings.listen(lambda r: also.append(r.node))
    readings.add(_reading(1))
    stop()
    stop()  # twice is harmless
    readings.add(_reading(2))
    assert heard == [1] and also == [1, 2]
    assert readings.last is not None and readings.last.node == 2
    readings.add(None)
    assert readings.last is None and also == [1, 2]


def test_a_room_with_its_stage_shows_it_and_starts_it_at_its_gain() -> None:
    view = RoomView("lobby", None)
    stage = stage_for(SafetyConfig(ceiling_dbfs=-3.0), 2, -6.0, view, fade=1.5)
    assert stage is not None and stage.synthdef == "scorch_stage_2"
    assert dict(stage.controls) == {"ceiling": -3.0, "gain": -6.0}
    assert view.stage == StageState(True, -3.0, None, -6.0, 1.5, LATENCY)


def test_a_loudness_limit_picks_the_stage_that_measures_it() -> None:
    view = RoomView("lobby", None)
    stage = stage_for(SafetyConfig(max_lufs=-23.0), 8, 0.0, view)
    assert stage is not None and stage.synthdef == "scorch_stage_lufs_8"
    assert dict(stage.controls)["lufs"] == -23.0
    assert view.stage.max_lufs == -23.0


@pytest.mark.parametrize(("safety", "outputs"), [(SafetyConfig(enabled=False), 2),
                                                 (SafetyConfig(), 0)])
def test_a_room_switched_off_or_without_outputs_has_no_stage_and_no_latency(
        safety: SafetyConfig, outputs: int) -> None:
    view = RoomView("lobby", None)
    assert stage_for(safety, outputs, -4.0, view) is None
    assert not view.stage.enabled and view.stage.latency == 0 and view.stage.gain_db == -4.0


@pytest.mark.parametrize(("args", "argument"), [
    ({"db": 13.0}, "db"),
    ({"db": -121.0}, "db"),
    ({"db": float("nan")}, "db"),
    ({"db": float("-inf")}, "db"),
    ({"db": "-6"}, "db"),
    ({"db": True}, "db"),
    ({"db": -6.0, "fade": -1.0}, "fade"),
    ({"db": -6.0, "fade": 601.0}, "fade"),
    ({"db": -6.0, "fade": float("inf")}, "fade"),
    ({"db": -6.0, "fade": "1"}, "fade"),
    ({"instance": "\x00"}, "instance"),
    ({"db": 0.0, "volume": 1}, "volume"),
])
def test_bad_gain_arguments_are_refused_naming_the_argument(args: dict[str, Any],
                                                            argument: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        GAIN.parse(args)
    assert refused.value.argument == argument, refused.value


def test_gain_without_db_reads_and_its_bounds_are_accepted() -> None:
    assert GAIN.parse({}).db is None  # type: ignore[attr-defined]
    assert GAIN.parse({"db": -120, "fade": 600}).fade == 600  # type: ignore[attr-defined]
    assert GAIN.parse({"instance": "lobby", "db": 12.0}).db == 12.0  # type: ignore[attr-defined]


@pytest.mark.parametrize(("seeded", "gain"), [(RoomSpec(gain_db=-7.5), -7.5), (RoomSpec(), 0.0),
                                              (None, 0.0)])
def test_a_resumed_sessions_gain_is_the_first_stages(seeded: RoomSpec | None,
                                                     gain: float) -> None:
    settings = RoomSettings(AudioConfig(), WatchdogConfig(), lambda name: b"", list,
                                seed=seeded)
    view, desired = RoomView("lobby", None), DesiredState()
    processes = Processes("lobby", RoomConfig(), settings, view, doors_of(view),
                          lambda *a: None, lambda *a: None, lambda what: None, lambda: None)
    StageControl("lobby", desired, processes, view, Bus())
    assert desired.gain_db == gain
