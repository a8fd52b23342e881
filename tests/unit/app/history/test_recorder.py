"""The recorder: what it samples from the rooms into the history, read back by the report."""

from __future__ import annotations

import threading
from pathlib import Path

from scorch.app.history.recorder import Recorder
from scorch.app.history.store import History, Recorded
from scorch.app.history.summary import summarize
from scorch.primitives.synthdefs.stage import StageReading
from scorch.state.events import Kind
from scorch.state.view import RoomView


def test_each_rooms_stage_and_its_jack_servers_xruns_are_sampled_for_the_report(
        tmp_path: Path) -> None:
    lobby, far = RoomView("lobby", None), RoomView("far", None)
    def heard(lufs: float) -> None:
        lobby.stage_readings.add(StageReading(node=2, peak_in=2.0, peak_out=0.5, least_gain=0.5,
                                              loudness_db=0.0, non_finite=False,
                                              loudness_lufs=lufs))

    heard(-20.0)
    xruns = {"lobby": 3}  # far is another host's: it counts its own there
    recorder = Recorder(tmp_path, lambda: {"lobby": lobby, "far": far}, lambda: dict(xruns))
    recorder.start()
    try:
        recorder.sample(100.0)
        xruns["lobby"] = 10
        heard(-120.7)  # silence: not part of its loudness
        recorder.sample(110.0)
        xruns["lobby"] = 2  # scorch started again: its count began anew
        heard(-10.0)
        recorder.sample(120.0)
    finally:
        recorder.stop()
    history = History(tmp_path / recorder.path.name)
    samples = history.samples(0.0)
    assert {(s.room, s.name) for s in samples} == {
        ("lobby", "xruns"), ("lobby", "peak_dbfs"), ("lobby", "gain_reduction_db"),
        ("lobby", "lufs")}
    assert [s.value for s in samples if s.name == "lufs"] == [-20.0, -10.0]
    [report] = [r for r in summarize([], samples, 90.0, 130.0) if r.room == "lobby"]
    assert report.xruns == 7 + 2 and report.peak_dbfs == -6.0
    assert report.row()["lufs_median"] == "-15.0"


def test_a_flush_returns_once_every_event_before_it_is_written(tmp_path: Path) -> None:
    # the recorder's thread and a caller flush at once: the caller must not return while the
    # thread still holds the range it took (the report test read RESTORED missing)
    lobby = RoomView("lobby", None)
    recorder = Recorder(tmp_path, lambda: {"lobby": lobby}, dict)
    recorder.start()
    try:
        history = recorder._history
        assert history is not None
        writing, go_on = threading.Event(), threading.Event()
        add = history.add_events

        def slow_add(events: list[Recorded]) -> None:
            writing.set()
            go_on.wait(5.0)
            add(events)

        history.add_events = slow_add  # type: ignore[method-assign]
        lobby.events.add(Kind.RESTORED, "restored")
        first = threading.Thread(target=recorder.flush)
        first.start()
        assert writing.wait(5.0)
        threading.Timer(0.2, go_on.set).start()
        recorder.flush()  # the caller's: waits for the first to write
        assert [e.kind for e in History(recorder.path).events()] == ["RESTORED"]
        first.join(5.0)
    finally:
        recorder.stop()
