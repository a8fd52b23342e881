"""scorch report's figures: uptime, restarts and why, silent and limiting time by kind name."""

from __future__ import annotations

import csv
import io
import statistics

import pytest

from scorch.app.history.store import Recorded, Sample
from scorch.app.history.summary import COLUMNS, as_csv, as_text, percentile, summarize
from scorch.state.events import EventLog, Kind


def ev(t: float, kind: str, message: str = "", room: str = "lobby") -> Recorded:
    return Recorded(t, room, kind, message, {})


def test_a_crash_counts_as_a_restart_with_its_reason_and_its_downtime() -> None:
    events = [ev(0, "BOOTING"), ev(10, "READY"), ev(50, "CRASHED", "scsynth killed by SIGKILL"),
              ev(50.1, "RESTARTING"), ev(52, "RESTORED"), ev(80, "HUNG", "sclang hung")]
    [room] = summarize(events, [], since=0.0, until=110.0)
    assert room.up_s == pytest.approx(40 + 28)
    assert room.uptime_pct == pytest.approx(100 * 68 / 110)
    assert room.restarts == {"CRASHED scsynth killed by SIGKILL": 1, "HUNG sclang hung": 1}
    assert room.row()["restarts"] == "2"


def test_a_room_whose_first_event_brings_it_down_was_up_before() -> None:
    [room] = summarize([ev(60, "CRASHED", "scsynth")], [], since=0.0, until=100.0)
    assert room.up_s == pytest.approx(60.0)


def test_sound_kinds_read_by_name_from_a_real_event_log() -> None:
    log = EventLog("hall")
    log.add(Kind.READY, "booted")
    added = [log.add(kind, text, **figures) for kind, text, figures in [
        (Kind.SOUND_SILENT, "silent for 10 s", {"for_s": 10.0}),  # silent since 90
        (Kind.SOUND_LIMITING, "limited for 5 s", {"for_s": 5.0}),  # since 105
        (Kind.SOUND_OK, "silent no more", {"fault": "silent"}),  # ends the silence only
        (Kind.SOUND_HOWL, "a howl", {"for_s": 2.0}),
        (Kind.SOUND_OK, "limiting no more", {"fault": "limiting"}),
        (Kind.SOUND_SILENT, "silent for 1 s", {"for_s": 1.0}),  # open at the span's end
    ]]
    start = log.since()[0].time
    times = [start + t for t in (0.0, 100.0, 110.0, 120.0, 150.0, 160.0, 190.0)]
    recorded = [Recorded(t, e.room, str(e.kind), e.message, e.details)
                for t, e in zip(times, [log.since()[0], *added], strict=True)]
    [room] = summarize(recorded, [], since=start, until=start + 200.0)
    assert room.silent_s == pytest.approx(30.0 + 11.0)
    assert room.limiting_s == pytest.approx(55.0)
    assert room.uptime_pct == pytest.approx(100.0)


def test_samples_give_loudness_percentiles_peaks_and_xruns_across_a_restart() -> None:
    lufs = [-30.0 + i * 0.1 for i in range(100)]
    samples = [Sample(float(i), "lobby", "lufs", v) for i, v in enumerate(lufs)]
    samples += [Sample(1.0, "lobby", "peak_dbfs", -9.0), Sample(2.0, "lobby", "peak_dbfs", -1.5)]
    samples += [Sample(float(t), "lobby", "xruns", n) for t, n in
                [(0, 2), (10, 5), (20, 1), (30, 4)]]  # restarted at 20: its count began again
    [room] = summarize([], samples, since=0.0, until=100.0)
    assert room.peak_dbfs == -1.5 and room.xruns == 3 + 1 + 3
    assert percentile(room.lufs, 50) == pytest.approx(statistics.median(lufs))
    assert percentile(room.lufs, 95) == pytest.approx(-30.0 + 0.1 * 94.05, abs=1e-9)
    assert percentile([], 95) is None and percentile([-20.0], 95) == -20.0


def test_events_outside_the_span_are_left_out_and_rooms_come_in_name_order() -> None:
    events = [ev(5, "CRASHED", "old"), ev(20, "READY", room="b"), ev(30, "READY", room="a")]
    reports = summarize(events, [], since=10.0, until=40.0)
    assert [r.room for r in reports] == ["a", "b"]
    assert all(sum(r.restarts.values()) == 0 for r in reports)


def test_text_and_csv_carry_every_column_and_room() -> None:
    reports = summarize([ev(0, "READY"), ev(5, "CRASHED", "scsynth killed")],
                        [Sample(1.0, "lobby", "lufs", -23.0)], since=0.0, until=10.0)
    text = as_text(reports, 0.0, 10.0)
    assert text.splitlines()[1].split() == list(COLUMNS)
    assert "lobby" in text and "CRASHED scsynth killed" in text
    [row] = list(csv.DictReader(io.StringIO(as_csv(reports))))
    assert row["uptime_pct"] == "50.00" and row["lufs_median"] == "-23.0"
    assert row["restarts"] == "1"
