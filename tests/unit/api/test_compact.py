"""Results without a text of their own read as compact ``key: value`` lines, never as JSON."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from scorch.api.compact import render, scalar
from scorch.api.operation import Result
from scorch.api.ops import load_all


def test_a_flat_answer_is_a_line_a_field_and_empty_fields_are_left_out() -> None:
    assert render({"instance": "lobby", "node": "hum", "node_id": 1001, "released": True,
                   "at": None, "warnings": [], "params": {}}) == (
        "instance: lobby\nnode: hum\nnode_id: 1001\nreleased: true")


def test_plain_lists_and_objects_are_one_line_and_numbers_read_as_people_write_them() -> None:
    text = render({"rooms": ["alpha", "beta"], "params": {"freq": 440.0, "amp": 0.1},
                   "bpm": 96.0, "offset": -0.25})
    assert text == ("rooms: alpha, beta\nparams: freq=440, amp=0.1\nbpm: 96\n"
                    "offset: -0.25")
    assert scalar(1.0e20) == "1e+20" and scalar(False) == "false"


def test_objects_of_a_list_are_a_line_each_or_a_block_when_they_nest() -> None:
    text = render({"scenes": [{"name": "intro", "rooms": ["a"]},
                              {"name": "night", "values": {"a": {"hum": {"amp": 0.1}}}}],
                   "code": "x = 1;\ny = 2"})
    assert text.splitlines() == [
        "scenes:",
        "- name=intro, rooms=[a]",
        "- name: night",
        "  values:",
        "    a:",
        "      hum: amp=0.1",
        "code:",
        "  x = 1;",
        "  y = 2",
    ]


def test_an_answer_with_nothing_in_it_says_so() -> None:
    assert render({"stopped": {}, "warnings": []}) == "(nothing)"


class _Answer(Result):
    name: str
    values: dict[str, float]


def test_a_result_without_a_text_of_its_own_is_compact_text_and_its_json_stays() -> None:
    answer = _Answer(name="hum", values={"freq": 220.0})
    assert answer.text() == "name: hum\nvalues: freq=220"
    assert json.loads(answer.model_dump_json()) == {"name": "hum", "values": {"freq": 220.0}}


def test_no_operation_answers_a_model_with_indented_json() -> None:
    """Every result's text is its own or the compact default: none is Pydantic's JSON."""
    for op in load_all().values():
        assert op.result.text is not BaseModel.model_dump_json, op.name
        source = op.result.text.__code__.co_names
        assert "model_dump_json" not in source, op.name


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30)


@given(st.dictionaries(st.text(), JSON, max_size=6))
def test_any_answer_renders_and_keeps_every_word_it_held(data: dict[str, Any]) -> None:
    text = render(data)
    assert text
    leaves: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif value is not None and value != "":
            leaves.append(scalar(value))

    walk(data)
    for leaf in leaves:
        for line in leaf.splitlines():
            assert line in text
