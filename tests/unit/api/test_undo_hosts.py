"""Undo and redo of the whole installation on several hosts: which host's journal steps."""

from __future__ import annotations

import pytest

from scorch.api.coordinator import Coordinator
from scorch.api.ops.undo import EntryOut, UndoList, UndoStep, next_host
from scorch.config.installation import Config


def entry(seq: int, time: float, undone_order: int = 0) -> EntryOut:
    return EntryOut(seq=seq, call="set", summary=f"change {seq}", rooms=["r"],
                    undone=undone_order > 0, time=time, undone_order=undone_order)


def test_undo_steps_the_host_with_the_latest_change_and_skips_hosts_with_none() -> None:
    journals = {"alpha": [entry(1, 10.0), entry(2, 30.0)], "beta": [entry(1, 20.0)],
                "gamma": [], None: [entry(1, 5.0, undone_order=1)]}
    assert next_host(journals, back=True) == "alpha"
    journals["alpha"] = [entry(1, 10.0), entry(2, 30.0, undone_order=1)]
    assert next_host(journals, back=True) == "beta"
    journals["beta"] = [entry(1, 20.0, undone_order=1)]
    assert next_host(journals, back=True) == "alpha"


def test_redo_steps_back_in_the_reverse_order_of_the_undos() -> None:
    # undone across the installation newest first: alpha's 30, beta's 20, alpha's 10
    journals = {"alpha": [entry(1, 10.0, undone_order=2), entry(2, 30.0, undone_order=1)],
                "beta": [entry(1, 20.0, undone_order=1)]}
    assert next_host(journals, back=False) == "alpha"  # its latest undone: the change at 10
    journals["alpha"] = [entry(1, 10.0), entry(2, 30.0, undone_order=1)]
    assert next_host(journals, back=False) == "beta"
    journals["beta"] = [entry(1, 20.0)]
    assert next_host(journals, back=False) == "alpha"


def test_nothing_to_step_on_any_host_is_none() -> None:
    assert next_host({"alpha": [], "beta": [entry(1, 1.0)]}, back=False) is None
    assert next_host({"alpha": [], "beta": [entry(1, 1.0, undone_order=1)]}, back=True) is None
    assert next_host({}, back=True) is None


def test_a_step_asked_of_one_host_carries_a_key_so_a_resend_runs_once(
        config: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    # What the coordinator hands its link for each ask (the link resends with that key).
    sent: list[tuple[str, str | None]] = []

    def ask(link: object, name: str, args: object, timeout: float, ping: bool = False,
            key: str | None = None) -> dict[str, object]:
        sent.append((name, key))
        return {}

    coordinator = Coordinator(config)
    try:
        monkeypatch.setattr(coordinator, "_ask", ask)
        coordinator.ask("a", "undo", UndoStep(action="undo"))
        coordinator.ask("a", "undo", UndoStep(action="undo"))
        coordinator.ask("b", "undo", UndoList(action="list"))
    finally:
        coordinator.close()
    (_, first), (_, second), (_, listed) = sent
    assert first and second and first != second  # a change: a key of its own, each step
    assert listed is None  # a read runs as often as asked


def test_one_cue_fired_on_several_hosts_is_one_step_of_the_installation() -> None:
    from scorch.api.ops.undo import together

    def fired(call: str, summary: str, time: float, undone_order: int = 0) -> EntryOut:
        return EntryOut(seq=1, call=call, summary=summary, rooms=["r"],
                        undone=undone_order > 0, time=time, undone_order=undone_order)

    storm = "cue 3 'storm' at 2026-12-24 19:00:00.100"
    journals: dict[str | None, list[EntryOut]] = {"alpha": [fired("cue", storm, 10.0)],
                "beta": [fired("set", "change", 5.0), fired("cue", storm, 10.001)],
                "gamma": [fired("cue", "cue 2 'calm' at 2026-12-24 18:59:00.000", 9.0)]}
    host = next_host(journals, back=True)
    assert host == "beta" and together(journals, host, back=True) == ["alpha"]
    journals = {h: [e.model_copy(update={"undone": e.call == "cue" and e.summary == storm,
                                         "undone_order": 1 if e.summary == storm else 0})
                    for e in entries] for h, entries in journals.items()}
    assert together(journals, "alpha", back=False) == ["beta"]  # redone together too
    # a plain change is never taken with another host's
    plain: dict[str | None, list[EntryOut]] = {"a": [fired("set", "x", 1.0)],
                                               "b": [fired("set", "x", 1.0)]}
    assert together(plain, "a", back=True) == []
