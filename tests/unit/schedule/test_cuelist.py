"""A cue list: GO, standby, waits before, continue and follow, a double GO, edits."""

from __future__ import annotations

import pytest

from scorch.errors import CueNotFound, InvalidRequest
from scorch.schedule.cuelist import Cue, CueList
from scorch.schedule.plan import Call


def cue(number: str, then: str = "stop", pre: float = 0.0, post: float = 0.0,
        fade: float | None = None) -> Cue:
    calls = (Call("scene", {"action": "morph", "name": "x", "seconds": fade}),) if fade else ()
    return Cue(number, f"cue {number}", calls, pre, then, post)  # type: ignore[arg-type]


def test_go_fires_the_standby_cue_and_moves_standby_on() -> None:
    cues = CueList([cue("1"), cue("2"), cue("3")])
    fired = cues.go(100.0)
    assert fired is not None and [(f.cue.number, f.time) for f in fired] == [("1", 100.0)]
    assert cues.on_standby().number == "2"  # type: ignore[union-attr]


def test_continue_and_follow_chain_with_their_waits() -> None:
    cues = CueList([cue("1", "continue", pre=1.0, post=2.0), cue("2", "follow", fade=5.0,
                                                                   post=0.5),
                    cue("3", pre=0.25), cue("4")])
    fired = cues.go(100.0)
    assert fired is not None
    assert [(f.cue.number, f.time) for f in fired] == [("1", 101.0), ("2", 103.0),
                                                       ("3", 108.75)]
    assert all(f.go == 100.0 for f in fired)
    assert cues.on_standby().number == "4"  # type: ignore[union-attr]


def test_a_second_go_within_double_go_counts_once_by_its_own_time() -> None:
    cues = CueList([cue("1"), cue("2")], double_go=0.3)
    assert cues.go(100.0) is not None
    assert cues.go(100.2) is None  # counted once
    assert cues.on_standby().number == "2"  # type: ignore[union-attr]
    assert cues.go(100.31) is not None


def test_go_by_number_and_the_end_of_the_list() -> None:
    cues = CueList([cue("1"), cue("2")])
    cues.go(1.0, "2")
    assert cues.on_standby() is None
    with pytest.raises(InvalidRequest, match="no cue on standby"):
        cues.go(10.0)
    with pytest.raises(CueNotFound, match="cues: 1, 2") as err:
        cues.go(20.0, "9")
    assert err.value.argument == "cue"


def test_edits_keep_standby_on_its_cue() -> None:
    cues = CueList([cue("1"), cue("2"), cue("3")])
    cues.put_on_standby("2")
    cues.add(cue("1.5"), before="2")
    assert cues.on_standby().number == "2"  # type: ignore[union-attr]
    cues.delete("1")
    assert cues.on_standby().number == "2"  # type: ignore[union-attr]
    cues.edit("2", {"name": "storm", "then": "follow"})
    assert cues.cues[cues.index("2")].name == "storm"
    with pytest.raises(InvalidRequest, match="exists already"):
        cues.add(cue("3"))
    cues.go(5.0, "3")
    cues.add(cue("4"))  # added to a done list: next
    assert cues.on_standby().number == "4"  # type: ignore[union-attr]
