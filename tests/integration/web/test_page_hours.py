"""The page's hours: the cue list with its standby cue, and GO. The read-only token is
refused GO on the server; the technician's GO fires the cue on scsynth; undo takes it back."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import scsynth_param
from tests.support.web.harness import Served

pytestmark = pytest.mark.integration


def hum(served: Served) -> float:
    lobby = served.status()["lobby"]
    return scsynth_param(lobby["port"], lobby["nodes"]["hum"]["node_id"], "freq")


def standby(served: Served) -> str | None:
    return served.api.call("cue", {"action": "list"}).model_dump()["standby"]


def test_the_read_only_token_reads_the_hours_but_is_refused_go(served: Served) -> None:
    assert served.from_outside(
        ("GET", "/api/hours", served.readonly, None),
        ("POST", "/api/go", served.readonly, None),
        ("POST", "/api/go", None, None),
    ) == [200, 403, 401]
    assert standby(served) == "1", "a refused GO fired"


def test_the_page_shows_the_standby_cue_and_its_go_fires_it_on_scsynth(
        served: Served, page: Any, tmp_path: Path) -> None:
    before = hum(served)
    page.locator("#hours-text", has_text="standby: 1 hum up").wait_for(timeout=5000)
    text = page.inner_text("#hours-text")
    assert "holds now: nothing scheduled" in text and "next: nothing in 24 h" in text, text
    page.screenshot(path=str(tmp_path / "hours.png"), full_page=True)
    page.click("#go")  # the confirm dialog is accepted
    page.wait_for_selector("#notice[data-action=go]", timeout=5000)
    assert "GO: cue 1" in page.inner_text("#notice")
    deadline = time.monotonic() + 3.0
    while (value := hum(served)) != pytest.approx(330.0):
        assert time.monotonic() < deadline, f"freq on scsynth is {value}"
        time.sleep(0.05)
    page.locator("#hours-text", has_text="last fired: cue 1").wait_for(timeout=5000)
    assert "standby: end of the list" in page.inner_text("#hours-text")
    assert page.is_disabled("#go")
    served.api.call("undo", {"action": "undo", "instance": "lobby"})
    while hum(served) != pytest.approx(before):
        assert time.monotonic() < deadline + 3.0, "undo did not take the cue back"
        time.sleep(0.05)
