"""The recorder: what it samples from the rooms into the history, read back by the report."""

from __future__ import annotations

from pathlib import Path

from scorch.app.history.recorder import Recorder
from scorch.app.history.store import History
from scorch.app.history.summary import summarize
from scorch.primitives.synthdefs.stage import StageReading
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
