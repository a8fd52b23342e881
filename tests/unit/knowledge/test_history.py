"""The evaluation history: search, pruning, a writer killed mid-write, concurrent readers."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import scorch
from scorch.knowledge.history import MAX_TEXT, History

T0 = 1_700_000_000.0
DAY = 86_400.0


@pytest.fixture
def history(tmp_path: Path) -> History:
    h = History(tmp_path / "history.sqlite", max_age_days=30, max_rows=1000)
    h.record(T0, "a", "{ SinOsc.ar(440) * 0.1 }.play", "a Synth", "", None, 3.0)
    h.record(T0 + 60, "b", "Pbind(\\degree, Pwhite(0, 7)).play", "an EventStreamPlayer", "", None,
             2.0)
    h.record(T0 + 120, "a", "{ FreeVerb.ar(SinOsc.ar(220)) }.play", "a Synth", "", None, 4.0)
    h.record(T0 + 180, "a", "Sinosc.ar", "", "", "Class not defined.", 1.0)
    h.record(T0 + 240, "b", "\"hello reverb\".postln", "hello reverb", "hello reverb\n", None, 0.5)
    return h


def test_search_without_filters_lists_newest_first(history: History) -> None:
    assert [e.time for e in history.search()] == [T0 + 240, T0 + 180, T0 + 120, T0 + 60, T0]


def test_search_finds_words_in_code_ignoring_case(history: History) -> None:
    found = history.search("SinOsc")

    assert [e.time for e in found] == [T0 + 180, T0 + 120, T0]
    assert found[2].code == "{ SinOsc.ar(440) * 0.1 }.play"
    assert found[2].room == "a" and found[2].duration_ms == 3.0


def test_search_finds_words_in_posted_output_and_errors(history: History) -> None:
    assert [e.time for e in history.search("reverb")] == [T0 + 240]
    assert [e.time for e in history.search("not defined")] == [T0 + 180]


def test_all_words_first_then_any_word(history: History) -> None:
    assert [e.time for e in history.search("freeverb sinosc")] == [T0 + 120]
    assert [e.time for e in history.search("freeverb pwhite")] == [T0 + 120, T0 + 60]


def test_filters_combine(history: History) -> None:
    assert [e.time for e in history.search(rooms=["b"])] == [T0 + 240, T0 + 60]
    assert len(history.search(rooms=["a", "b"])) == len(history.search())
    assert history.search(rooms=[]) == []
    assert [e.error for e in history.search(errors_only=True)] == ["Class not defined."]
    assert [e.time for e in history.search(since=T0 + 120)] == [T0 + 240, T0 + 180, T0 + 120]
    assert [e.time for e in history.search("SinOsc", rooms=["a"], since=T0 + 1)] == [
        T0 + 180, T0 + 120]
    assert len(history.search(limit=2)) == 2


@pytest.mark.parametrize("query", ["AND", "\"", "*", "NEAR(a b)", "(", "x" * 10_000, "é",
                                   "code:play", "-", "OR NOT", ")\"(*"])
def test_hostile_queries_give_lists_never_sqlite_errors(history: History, query: str) -> None:
    assert isinstance(history.search(query), list)


def test_punctuation_only_query_matches_nothing_rather_than_everything(history: History) -> None:
    assert history.search("*()") == []
    assert len(history.search("")) == 5


def test_rows_older_than_max_age_are_pruned_on_write(tmp_path: Path) -> None:
    h = History(tmp_path / "h.sqlite", max_age_days=1, max_rows=100, prune_every=1)
    h.record(T0, "a", "old")
    h.record(T0 + 0.5 * DAY, "a", "recent")

    h.record(T0 + 1.2 * DAY, "a", "new")

    assert [e.code for e in h.search()] == ["new", "recent"]
    assert h.search("old") == []


def test_row_count_is_bounded_between_prunes(tmp_path: Path) -> None:
    h = History(tmp_path / "h.sqlite", max_rows=50, prune_every=10)

    for i in range(200):
        h.record(T0 + i, "a", f"x = {i}")

    assert 50 <= h.count() <= 60
    assert h.search(limit=1)[0].code == "x = 199"
    assert h.search("0") == []  # x = 0 was pruned, from the search index too
    before = h.count()
    assert h.prune(now=T0 + 200) == before - 50
    assert h.count() == 50


def test_huge_output_is_cut_with_a_note(tmp_path: Path) -> None:
    h = History(tmp_path / "h.sqlite")

    h.record(T0, "a", "loop", posted="y" * (MAX_TEXT + 500))

    [entry] = h.search()
    assert len(entry.posted) < MAX_TEXT + 100
    assert entry.posted.endswith("[... 500 more characters not kept]")


def test_history_survives_a_writer_killed_mid_write(tmp_path: Path) -> None:
    path = tmp_path / "crash.sqlite"
    writer = subprocess.Popen(
        [sys.executable, "-c", CRASH_WRITER, str(path)], stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(Path(scorch.__file__).parent.parent)},
        start_new_session=True,
    )
    assert writer.stdout is not None
    try:
        # The child prints each id once its row is committed; kill it while it writes on.
        for line in writer.stdout:
            if int(line) >= 300:
                break
        writer.send_signal(signal.SIGKILL)
    finally:
        writer.kill()
        writer.wait(timeout=10)
    assert writer.returncode == -signal.SIGKILL

    reopened = History(path)
    codes = {e.code for e in reopened.search(limit=1000)}
    assert {f"x = {i}" for i in range(1, 301)} <= codes
    assert "x = 299" in [e.code for e in reopened.search("299")]
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        db.execute("INSERT INTO entries_fts (entries_fts) VALUES ('integrity-check')")


CRASH_WRITER = """
import sys, time
from scorch.knowledge.history import History
h = History(sys.argv[1], prune_every=50)
i = 0
while True:
    i += 1
    row = h.record(time.time(), "crash", f"x = {i}", posted="p" * (i % 997))
    print(row, flush=True)
"""


def test_readers_in_other_connections_never_block_the_writer(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    writer = History(path)
    readers = [History(path) for _ in range(3)]
    errors: list[BaseException] = []
    done = threading.Event()

    def read(reader: History) -> None:
        try:
            while not done.is_set():
                reader.search("SinOsc", limit=5)
                reader.search(limit=5)
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=read, args=(r,)) for r in readers]
    for thread in threads:
        thread.start()
    try:
        for i in range(300):
            writer.record(T0 + i, "a", f"{{ SinOsc.ar({i}) }}.play")
    finally:
        done.set()
        for thread in threads:
            thread.join(timeout=10)

    assert errors == []
    assert len(readers[0].search("SinOsc", limit=1000)) == 300


def test_since_with_a_query_keeps_rows_recorded_out_of_time_order(tmp_path: Path) -> None:
    h = History(tmp_path / "h.sqlite")
    h.record(T0 + 500, "a", "SinOsc late clock")   # recorded first, stamped later
    h.record(T0, "a", "SinOsc early")

    assert [e.code for e in h.search("SinOsc", since=T0 + 100)] == ["SinOsc late clock"]
    assert h.search("SinOsc", since=T0 + 1000) == []
