"""scorch report's CLI: spans, a missing history, any --since text refused clearly."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorch.app.history.reading import parse_span, render
from scorch.app.history.store import HISTORY_FILE, History, Recorded, Sample
from scorch.errors import InvalidRequest


@pytest.mark.parametrize(("text", "seconds"), [("90", 90.0), ("30m", 1800.0),
                                               ("24h", 86400.0), ("7d", 604800.0),
                                               (" 1.5h ", 5400.0)])
def test_spans_read_as_seconds(text: str, seconds: float) -> None:
    assert parse_span(text) == seconds


@given(st.text(max_size=20))
def test_any_since_text_is_a_span_or_an_error_that_names_since(text: str) -> None:
    try:
        assert parse_span(text) > 0
    except InvalidRequest as err:
        assert "--since" in str(err)


def test_no_history_says_where_it_was_looked_for(tmp_path: Path) -> None:
    with pytest.raises(InvalidRequest, match=r"no history at .*history\.sqlite3"):
        render(tmp_path, "24h", "text")


def test_the_report_reads_the_state_folders_history(tmp_path: Path) -> None:
    history = History(tmp_path / HISTORY_FILE)
    history.add_events([Recorded(1000.0, "hall", "READY", "", {}),
                        Recorded(1050.0, "hall", "HUNG", "sclang hung", {}),
                        Recorded(10.0, "old", "READY", "", {})])
    history.close()
    csv = render(tmp_path, "100s", "csv", now=1100.0)
    assert csv.splitlines()[1:] == ["hall,50.00,1,1x HUNG sclang hung,0.0,0.0,,,,0"]
    assert "hall" in render(tmp_path, "100", "text", now=1100.0)


def test_the_html_page_holds_the_table_and_a_loudness_plot(tmp_path: Path) -> None:
    history = History(tmp_path / HISTORY_FILE)
    history.add_events([Recorded(1000.0, "hall<b>", "READY", "", {})])
    history.add_samples([Sample(1000.0 + t, "hall<b>", "lufs", -23.0 - t % 3)
                         for t in range(0, 90, 10)])
    history.close()
    page = render(tmp_path, "100s", "html", now=1100.0)
    assert "<td>hall&lt;b&gt;</td>" in page and "<b>" not in page
    png = base64.b64decode(page.split("data:image/png;base64,")[1].split('"')[0])
    assert png.startswith(b"\x89PNG")
    empty = render(tmp_path, "10s", "html", now=2000.0)
    assert "no loudness samples" in empty
