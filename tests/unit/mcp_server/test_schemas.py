"""The schemas a model reads (mcp_server/schemas.py): compact, and the same check as the models.

Pure cases on hand-made schemas, then a differential test against the reference, the
operations' own pydantic models: arguments drawn from a model's full JSON schema pass
the compact one, and arguments drawn from the compact one pass the model, save what
no schema says (a model's own validators: one argument or the other, a name in use);
and what the full check passes on, the SDK's own check of the flat parameters takes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis_jsonschema import from_schema
from jsonschema import Draft202012Validator
from pydantic import BaseModel, ValidationError

from mcp_server.instructions import instructions
from mcp_server.schemas import (
    EXPLAINED,
    action_schema,
    compact,
    merge_actions,
    output_shape,
    prose,
    size,
)
from mcp_server.tools import checked, input_schema, tools
from scorch.api.local import LocalService
from scorch.api.ops import OPERATIONS
from scorch.values import FLOAT32_MAX, NAME_PATTERN, NAME_RULE, SELECTOR_PATTERN

NAME = {"type": "string", "pattern": "^[a-z]{1,8}$"}


def test_compact_drops_titles_nulls_and_repeated_descriptions() -> None:
    full = {"title": "Args", "type": "object", "additionalProperties": False, "properties": {
        "bars": {"anyOf": [{"type": "number", "maximum": 64, "description": "inner"},
                           {"type": "null"}], "default": None, "title": "Bars",
                 "description": "Bars to make"},
        "kind": {"anyOf": [{"enum": ["Pdef", "Tdef"], "type": "string"}, {"type": "null"}],
                 "default": None, "title": "Kind"},
        "at": {"anyOf": [{"type": "number"}, {"enum": ["next_bar"], "type": "string"},
                         {"type": "null"}], "default": None, "title": "At"},
        "density": {"type": "number", "default": 1.0, "title": "Density"},
        "lines": {"type": "integer", "default": 50, "description": "(default 50)"},
        "spec": {"type": "object", "additionalProperties": True, "title": "Spec"}}}
    assert compact(full) == {"type": "object", "additionalProperties": False, "properties": {
        "bars": {"type": "number", "maximum": 64, "description": "Bars to make"},
        "kind": {"enum": ["Pdef", "Tdef"]},
        "at": {"anyOf": [{"type": "number"}, {"enum": ["next_bar"]}]},
        "density": {"type": "number", "default": 1.0},
        "lines": {"type": "integer", "description": "(default 50)"},
        "spec": {"type": "object"}}}


def test_compact_leaves_out_what_every_name_value_and_flag_shares() -> None:
    full = {"type": "object", "properties": {
        "node": {"type": "string", "pattern": NAME_PATTERN, "description": "A node"},
        "instance": {"type": "string", "pattern": SELECTOR_PATTERN, "default": "*"},
        "key": {"type": "string", "pattern": "^[a-z]+$"},  # its own rule: said
        "params": {"type": "object", "patternProperties": {NAME_PATTERN: {
            "type": "number", "minimum": -FLOAT32_MAX, "maximum": FLOAT32_MAX}}},
        "timeout_s": {"type": "number", "exclusiveMinimum": 0, "minimum": 0.5},
        "seconds": {"type": "number", "exclusiveMinimum": 0, "minimum": 0},
        "dry_run": {"type": "boolean", "default": False},
        "play": {"type": "boolean", "default": True},
        "since": {"type": "integer", "default": 0},
        "tags": {"type": "array", "default": []},
        "full": {"type": "boolean", "default": False, "description": "Every one"}}}
    assert compact(full) == {"type": "object", "properties": {
        "node": {"type": "string", "description": "A node"},
        "instance": {"type": "string", "default": "*"},
        "key": {"type": "string", "pattern": "^[a-z]+$"},
        "params": {"type": "object", "additionalProperties": {"type": "number"}},
        "timeout_s": {"type": "number", "minimum": 0.5},
        "seconds": {"type": "number", "exclusiveMinimum": 0},
        "dry_run": {"type": "boolean"},
        "play": {"type": "boolean", "default": True},
        "since": {"type": "integer", "default": 0},  # 0 is a value, not "none"
        "tags": {"type": "array"},
        "full": {"type": "boolean"}}}
    assert set(EXPLAINED) == {"full"}


def test_the_instructions_say_what_the_schemas_leave_out() -> None:
    said = instructions([])  # said whatever tools are listed
    assert NAME_RULE in said
    assert all(f"{key}=true" in said for key in EXPLAINED)


def test_compact_inlines_definitions_and_refuses_a_loop() -> None:
    schema = {"type": "object", "properties": {"spec": {"$ref": "#/$defs/Spec"}},
              "$defs": {"Spec": {"title": "Spec", "type": "object",
                                 "properties": {"cc": {"type": "integer", "title": "Cc"}}}}}
    assert compact(schema) == {"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"cc": {"type": "integer"}}}}}
    loop = {"$defs": {"A": {"properties": {"a": {"$ref": "#/$defs/A"}}}},
            "properties": {"a": {"$ref": "#/$defs/A"}}}
    with pytest.raises(ValueError, match="refers to itself"):
        compact(loop)


def _actions() -> dict[str, dict[str, Any]]:
    """Three actions: two take the same arguments, one a tighter `notes` and no `at`."""
    def action(name: str, description: str, props: dict[str, Any],
               required: tuple[str, ...] = ()) -> dict[str, Any]:
        return {"description": description, "required": ["action", *required],
                "properties": {"action": {"const": name}, **props}}
    notes = {"type": "integer", "minimum": 1, "maximum": 512, "description": "Notes"}
    return {
        "go": action("go", "Go. [change]", {"name": NAME, "at": {"enum": ["now", "bar"]},
                                            "notes": notes}, ("name",)),
        "also": action("also", "Also. [change]", {"name": NAME, "at": {"enum": ["now", "bar"]},
                                                  "notes": notes}, ("name",)),
        "few": action("few", "Few. [read-only]", {"name": NAME,
                                                  "notes": {**notes, "maximum": 32}}),
        "none": action("none", "None. [read-only]", {}),
    }


def test_merge_says_each_argument_once_and_what_differs_per_action() -> None:
    merged = merge_actions(_actions(), default=None)
    assert merged["required"] == ["action"] and merged["additionalProperties"] is False
    assert merged["properties"]["notes"]["maximum"] == 512  # as most actions take it
    assert merged["$defs"] == {
        "go": {"description": "Go. [change]", "required": ["name"]},
        "also": {"description": "Also. [change]", "$ref": "#/$defs/go"},  # the same arguments
        "few": {"description": "Few. [read-only]",
                "properties": {"at": False, "notes": {"maximum": 32}}},
        "none": {"description": "None. [read-only]", "additionalProperties": False}}


@pytest.mark.parametrize("name", ["go", "also", "few", "none"])
def test_an_actions_schema_is_its_entry_with_the_arguments_above(name: str) -> None:
    own = _actions()[name]
    merged = merge_actions(_actions(), default="go")
    whole = action_schema(merged, name)
    assert whole["description"] == own["description"]
    assert set(whole["properties"]) == set(own["properties"])
    for key, prop in own["properties"].items():
        assert whole["properties"][key] == prop, key
    assert set(whole["required"]) == set(own["required"]) - ({"action"} if name == "go"
                                                               else set())


def test_output_shape_keeps_the_shape_and_every_null() -> None:
    full = {"type": "object", "required": ["a"], "properties": {
        "a": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}],
              "description": "x", "default": None, "title": "A"},
        "b": {"anyOf": [{"enum": ["on", "off"]}, {"type": "null"}]},
        "deep": {"type": "object", "additionalProperties": False, "properties": {
            "c": {"type": "object", "properties": {"d": {"type": "integer"}}}}}}}
    assert output_shape(full, depth=2) == {"type": "object", "properties": {
        "a": {"type": ["string", "null"]}, "b": {"enum": ["on", "off", None]},
        "deep": {"type": "object", "properties": {"c": {"type": "object"}}}}}


def test_prose_and_size() -> None:
    assert prose("One line\n    wrapped.\n\n    Two.") == "One line wrapped.\nTwo."
    assert size("t", "d", {}) == len('{"name":"t","description":"d","input_schema":{}}')


# --- the differential test: the operations' own models ---------------------------------


def _cases() -> list[tuple[str, str | None]]:
    return [(op.name, action) for op in OPERATIONS.values() if op.tool
            for action in (op.actions or [None])]


def _model_and_schema(name: str, action: str | None) -> tuple[type[BaseModel], dict[str, Any]]:
    op = OPERATIONS[name]
    schema = input_schema(op)
    if action is None:
        return op.args, {**schema, "$schema": "https://json-schema.org/draft/2020-12/schema"}
    return op.actions[action], action_schema(schema, action)


#: The tools as the SDK holds them (their own argument models, from the flat parameters).
SDK_TOOLS = {tool.name: tool for tool in tools(LocalService())}

#: Errors of a model's own validators (one argument or another, a name's rules): no JSON
#: Schema says them, the full check alone does.
SEMANTIC = {"value_error", "assertion_error"}
SETTINGS = settings(max_examples=15, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize(("name", "action"), _cases())
def test_what_the_model_accepts_the_compact_schema_accepts(name: str, action: str | None
                                                           ) -> None:
    model, schema = _model_and_schema(name, action)
    reference = model.model_json_schema()
    validator = Draft202012Validator(schema)

    @SETTINGS
    @given(from_schema(reference))
    def check(arguments: dict[str, Any]) -> None:
        try:
            model.model_validate(arguments)
        except ValidationError:
            return  # a value the reference schema allows and the model refuses
        given_ = {k: v for k, v in arguments.items() if v is not None}  # none: left out
        errors = [e.message for e in validator.iter_errors(given_)]
        assert not errors, (arguments, errors)
        # the SDK's own check, after the full one, takes what that passed on
        sdk.fn_metadata.validate_arguments(checked(OPERATIONS[name], arguments))

    sdk = SDK_TOOLS[name]
    check()


@pytest.mark.parametrize(("name", "action"), _cases())
def test_what_the_compact_schema_allows_the_model_accepts(name: str, action: str | None
                                                          ) -> None:
    model, schema = _model_and_schema(name, action)

    @SETTINGS
    @given(from_schema(schema))
    def check(arguments: dict[str, Any]) -> None:
        try:
            model.model_validate(arguments)
        except ValidationError as err:
            kinds = {e["type"] for e in err.errors()}
            assert kinds <= SEMANTIC, (arguments, err.errors())

    check()


def _covers(shape: Any, full: dict[str, Any], defs: dict[str, Any]) -> bool:
    """Whether ``shape`` accepts every value ``full`` does, judged keyword by keyword (a
    sufficient test: a shape only drops keywords, widens types to null, inlines $refs)."""
    if "$ref" in full:
        full = {**defs[full["$ref"].removeprefix("#/$defs/")],
                **{k: v for k, v in full.items() if k != "$ref"}}
    if shape is True or shape == {}:
        return True
    if "anyOf" in full:
        rest = {k: v for k, v in full.items() if k != "anyOf"}
        return all(_covers(shape, {**rest, **branch}, defs) for branch in full["anyOf"])
    if "anyOf" in shape:
        return any(_covers(branch, full, defs) for branch in shape["anyOf"])
    if not set(shape) <= {"type", "properties", "items", "additionalProperties",
                          "patternProperties", "enum", "const"}:
        return False
    values = full.get("enum", [full["const"]] if "const" in full else
                      [None] if full.get("type") == "null" else None)
    kinds = shape.get("type")
    if kinds is not None:
        kinds = {kinds} if isinstance(kinds, str) else set(kinds)
        if values is not None:
            if not all(_type_of(v) in kinds or (_type_of(v) == "integer" and "number" in kinds)
                       for v in values):
                return False
        elif full.get("type") is None or not (
                ({full["type"]} if isinstance(full["type"], str) else set(full["type"]))
                <= kinds | ({"integer"} if "number" in kinds else set())):
            return False
    if "enum" in shape and (values is None or not set(map(json.dumps, values))
                            <= set(map(json.dumps, shape["enum"]))):
        return False
    can = full.get("type", ["object", "array"])  # what the keywords below apply to
    can = {can} if isinstance(can, str) else set(can)
    for key, sub in shape.get("properties", {}).items() if "object" in can else ():
        if key not in full.get("properties", {}) or not _covers(sub, full["properties"][key],
                                                                  defs):
            return False
    for key, kind in (("items", "array"), ("additionalProperties", "object")):
        if key in shape and kind in can and not (isinstance(full.get(key), dict)
                                                 and _covers(shape[key], full[key], defs)):
            return False
    return True


def _type_of(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string",
            type(None): "null", dict: "object", list: "array"}[type(value)]


@pytest.mark.parametrize("name", sorted(n for n, op in OPERATIONS.items() if op.tool))
def test_every_answer_fits_its_output_shape(name: str) -> None:
    """Real answers are checked against the shapes by every integration test that calls the
    tool through ``mcp.Client`` (it checks each structured answer against the tool's output
    schema); here, keyword by keyword, that the shape accepts all the full schema does."""
    full = OPERATIONS[name].result.model_json_schema(mode="serialization")
    assert _covers(output_shape(full), full, full.get("$defs", {}))


def test_the_cover_check_can_fail() -> None:
    full = {"type": "object", "properties": {"x": {"type": "string"}}}
    assert not _covers({"type": "object", "properties": {"x": {"type": "integer"}}}, full, {})
    assert not _covers({"type": "object", "properties": {"y": {}}}, full, {})
    assert not _covers({"enum": ["a"]}, {"enum": ["a", None]}, {})
    assert _covers({"enum": ["a", None]}, {"anyOf": [{"enum": ["a"]}, {"type": "null"}]}, {})
