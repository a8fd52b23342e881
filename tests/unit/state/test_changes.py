"""The bus's changes as JSON: every kind comes back as it went, and anything else another
host (or a hostile client of the control socket) sends is refused with a clear error."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorch.errors import InvalidRequest
from scorch.state.changes import KINDS, ParamsChanged, decode, encode
from scorch.values import FLOAT32_MAX
from tests.support.hostile_json import json_values

names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20)
floats = st.floats(allow_nan=False, allow_infinity=False, width=32)
params = st.dictionaries(names, floats, max_size=4)


def values_for(kind: type[Any]) -> st.SearchStrategy[Any]:
    """Instances of ``kind`` from its fields' types."""
    by_type: dict[str, st.SearchStrategy[Any]] = {
        "str": names, "int": st.integers(-(2**31), 2**31 - 1), "bool": st.booleans(),
        "float": floats, "float | None": st.none() | floats, "str | None": st.none() | names,
        "Mapping[str, float]": params,
        "Mapping[str, Any] | None": st.none() | st.dictionaries(names, st.integers()),
    }
    return st.builds(kind, **{f.name: by_type[str(f.type)] for f in dataclasses.fields(kind)})


@pytest.mark.parametrize("kind", list(KINDS.values()), ids=list(KINDS))
@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_every_kind_comes_back_from_its_json_as_it_went(kind: type[Any], data: Any) -> None:
    change = data.draw(values_for(kind))
    wire = json.loads(json.dumps(encode(change)))
    back = decode(wire)
    assert type(back) is kind
    assert encode(back) == encode(change)


@settings(max_examples=300, deadline=None)
@given(json_values())
def test_anything_else_is_refused_with_what_was_wrong(value: Any) -> None:
    try:
        decode(value, (ParamsChanged,))
    except InvalidRequest as err:
        assert str(err)
    # what passes is a well-formed ParamsChanged of finite numbers
    else:
        change = decode(value, (ParamsChanged,))
        assert isinstance(change, ParamsChanged)
        assert all(math.isfinite(v) and abs(v) <= FLOAT32_MAX for v in change.params.values())


@pytest.mark.parametrize(("data", "says"), [
    ({"change": "NodeStarted", "room": "a", "node": "n", "synthdef": "s", "node_id": 1,
      "params": {}}, "no change of kind 'NodeStarted' is taken here"),
    ({"change": "ParamsChanged", "room": "a", "node": "n", "params": {"f": "x"}}, "params.f"),
    ({"change": "ParamsChanged", "room": "a", "node": "n", "params": {}, "extra": 1},
     "has no field extra"),
    ({"change": "ParamsChanged", "room": "a", "node": "n", "params": {"f": 1e39}},
     "not a finite number"),
    ({"room": "a"}, "an object with a 'change'"),
    ([1, 2], "an object with a 'change'"),
])
def test_a_wrong_change_says_what_is_wrong(data: Any, says: str) -> None:
    with pytest.raises(InvalidRequest, match=says):
        decode(data, (ParamsChanged,))
