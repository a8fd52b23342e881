"""The report's history: events and samples in sqlite, read back and pruned to bounds."""

from __future__ import annotations

import math
import threading
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from scorch.app.history.store import History, Recorded, Sample


def test_events_and_samples_come_back_in_order_with_their_details(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite3")
    history.add_events([Recorded(2.0, "a", "SOUND_SILENT", "silent", {"rms_db": -90.0}),
                        Recorded(1.0, "a", "CRASHED", "scsynth killed", {"pid": 7})])
    history.add_samples([Sample(1.5, "a", "lufs", -23.0), Sample(0.5, "b", "xruns", 0)])
    assert [e.kind for e in history.events()] == ["CRASHED", "SOUND_SILENT"]
    assert history.events(1.5) == [Recorded(2.0, "a", "SOUND_SILENT", "silent",
                                            {"rms_db": -90.0})]
    assert history.samples(1.0) == [Sample(1.5, "a", "lufs", -23.0)]
    history.close()
    again = History(tmp_path / "h.sqlite3")  # kept across runs
    assert again.counts() == {"events": 2, "samples": 2}


def test_details_json_cannot_hold_are_kept_as_text(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite3")
    history.add_events([Recorded(1.0, "a", "X", "m", {"path": tmp_path})])
    assert history.events()[0].details == {"path": str(tmp_path)}


def test_prune_drops_rows_older_than_keep_and_the_oldest_beyond_the_limits(
        tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite3", keep_s=100.0, max_events=3, max_samples=2)
    history.add_events(Recorded(float(t), "a", "CRASHED", str(t), {}) for t in range(40, 60))
    history.add_samples(Sample(float(t), "a", "lufs", -20.0) for t in range(0, 200, 10))
    dropped = history.prune(now=150.0)
    assert [e.message for e in history.events()] == ["57", "58", "59"]
    assert [s.time for s in history.samples()] == [180.0, 190.0]
    assert dropped == (10 + 7) + (5 + 13) and history.counts() == {"events": 3, "samples": 2}


def test_threads_may_add_at_once(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite3")

    def add(room: str) -> None:
        for t in range(50):
            history.add_samples([Sample(float(t), room, "peak_dbfs", -6.0)])

    threads = [threading.Thread(target=add, args=(f"r{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert history.counts()["samples"] == 200


@settings(max_examples=60, deadline=None)
@given(st.text(), st.text(), st.floats(allow_nan=False),
       st.dictionaries(st.text(max_size=8), st.one_of(st.integers(), st.text(), st.none())))
def test_any_room_kind_message_and_figure_round_trip(
        room: str, kind: str, value: float,
        details: dict[str, object]) -> None:
    history = History(":memory:")
    history.add_events([Recorded(1.0, room, kind, kind + room, details)])
    history.add_samples([Sample(1.0, room, kind, value)])
    [event], [sample] = history.events(), history.samples()
    assert (event.room, event.kind, event.details) == (room, kind, details)
    assert sample.value == value or (math.isinf(value) and sample.value == value)
