"""Undo and redo of the whole installation on several hosts: which host's journal steps."""

from __future__ import annotations

from scorch.api.ops.undo import EntryOut, next_host


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
