"""The size budget's pure parts: which items a list keeps and what it says of the rest."""

from __future__ import annotations

from scorch.api import budget


def test_a_list_keeps_the_first_or_the_latest_items_that_fit_and_counts_the_rest() -> None:
    items = [f"item {i:02d} " + "x" * 40 for i in range(100)]
    kept, more = budget.listing(items, len, full=False, budget=1000)
    assert kept == items[:len(kept)] and more == 100 - len(kept)
    assert sum(len(i) + budget.OVERHEAD for i in kept) <= 1000 < sum(
        len(i) + budget.OVERHEAD for i in items[:len(kept) + 1])
    latest, more = budget.listing(items, len, full=False, latest=True, budget=1000)
    assert latest == items[-len(latest):] and more == 100 - len(latest)


def test_the_full_form_keeps_everything_and_a_small_list_stays_whole() -> None:
    items = ["x" * 500] * 100
    assert budget.listing(items, len, full=True, budget=10) == (items, 0)
    assert budget.listing(["a", "b"], len, full=False) == (["a", "b"], 0)


def test_what_was_left_out_is_said_last_with_how_to_ask_for_it() -> None:
    shown = budget.lines(["a", "b"], 3, "scenes", "scene(action='list', full=true)", "none")
    assert shown == ("a\nb\n[3 more scenes not shown: ask with "
                     "scene(action='list', full=true)]")
    assert budget.lines([], 0, "scenes", "x", "no scenes") == "no scenes"
    assert budget.json_size({"a": 1}) == len('{"a": 1}')


def test_midi_ports_lists_share_the_budget_the_short_ones_whole() -> None:
    from scorch.api.ops.midi import MidiOutput, _within

    found = {"backend": "jack", "inputs": ["keys"], "outputs": [],
             "missing": {"inputs": ["gone-" + "x" * 60] * 500, "outputs": []},
             "available": {"inputs": ["keys", "pads"], "outputs": ["p" * 80] * 400}}
    kept, more = _within("ports", found)
    assert kept["inputs"] == ["keys"] and kept["available"]["inputs"] == ["keys", "pads"]
    assert more == {"missing.inputs": 500 - len(kept["missing"]["inputs"]),
                    "available.outputs": 400 - len(kept["available"]["outputs"])}
    shown = MidiOutput(action="ports", result=kept, more=more).text()
    assert len(shown) <= budget.TEXT
    assert f"[{more['missing.inputs']} more missing.inputs not shown: ask with " \
           "midi(action='ports', full=true)]" in shown
