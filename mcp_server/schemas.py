"""The tools' JSON schemas written for a model: what pydantic emits, said once and plainly.

Pure functions on JSON schemas (dicts). pydantic's schemas carry what a model need
not read in every conversation: a ``title`` per field, ``anyOf [X, null]`` with
``default: null`` for every optional argument, descriptions repeated inside the
branches. :func:`compact` drops them without changing what a call may send (an
optional argument is its plain type: leaving it out is how to say "none", or false, or
empty). It leaves out too what dozens of arguments share, said once in the instructions
or nowhere needed: a name's pattern and a control value's float32 range (:data:`UNSAID`),
the meaning of ``full`` (:data:`EXPLAINED`). The full check still holds every argument
to all of it.

An operation with several actions is one tool (Claude's API refuses ``oneOf``,
``anyOf`` or ``allOf`` at the top of an input schema). :func:`merge_actions` makes
its schema from each action's compact one: ``properties`` holds every argument once,
as most actions take it; ``$defs`` holds an
entry per action, under its name: its description (with its access), the arguments
it takes (``{}`` when as listed above, else what differs for it) and those it
requires, or a ``$ref`` to an earlier action's entry that says the same. An action's
schema is its entry and the top one together (:func:`action_schema`): what its own
model checks.

:func:`output_shape` reduces an output schema to the shape of the answer (field
names, types, ``null`` where it may be, enums) down to :data:`OUTPUT_DEPTH` levels:
it accepts every answer the full schema accepts, so a client that checks results
against it never refuses one.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from scorch.values import FLOAT32_MAX, NAME_PATTERN, SELECTOR_PATTERN

Schema = dict[str, Any]

#: Keywords that say what a value means, not what it may be: said once, where most use it.
ANNOTATIONS = ("description", "default", "examples")
#: What an output schema keeps: the answer's shape.
SHAPE = ("type", "properties", "items", "additionalProperties", "patternProperties", "enum",
         "const", "anyOf")
#: Levels of nested fields an output schema describes; deeper values are typed only.
OUTPUT_DEPTH = 3
ACTION_ARGUMENTS = "See $defs"
#: Arguments the instructions explain once for every tool (``full=true``: the whole
#: answer, not what fits its size budget); the CLI's help still gives each its own words.
EXPLAINED = ("full",)
#: Constraints shared by dozens of arguments and left out of each: a name's pattern (the
#: instructions give the rule) and a float32's range (no control value comes near it).
UNSAID = frozenset({("pattern", NAME_PATTERN), ("pattern", SELECTOR_PATTERN),
                    ("maximum", FLOAT32_MAX), ("minimum", -FLOAT32_MAX)})
_SAYS_DEFAULT = re.compile(r"\bdefault\b|\bomitted\b", re.IGNORECASE)
_NULL = {"type": "null"}
_MISSING = object()


def compact(schema: Schema) -> Schema:
    """An input schema without titles, nulls or repeats, its ``$ref``s inlined.

    An optional argument (``anyOf [X, null]``) becomes X; a default that says what leaving
    it out says (null, false, empty) is left out, and another is kept unless the
    description already says it. The arguments of :data:`EXPLAINED` go without their
    descriptions.
    """
    out = _compact(schema, schema.get("$defs", {}), frozenset())
    for key in EXPLAINED:
        out.get("properties", {}).get(key, {}).pop("description", None)
    return out


def _compact(schema: Schema, defs: Mapping[str, Schema], inside: frozenset[str]) -> Schema:
    """One (sub)schema compacted; ``inside``: the definitions being inlined around it."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        if name in inside:
            raise ValueError(f"{name} refers to itself: a tool's arguments cannot")
        target = {**defs[name], **{k: v for k, v in schema.items() if k != "$ref"}}
        return _compact(target, defs, inside | {name})
    out: Schema = {}
    for key, value in schema.items():
        if key in ("title", "$defs"):
            continue
        if key in ("properties", "patternProperties"):
            out[key] = {name: _compact(sub, defs, inside) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "propertyNames") and isinstance(value, dict):
            out[key] = _compact(value, defs, inside)
        elif key == "anyOf":
            branches = [_compact(sub, defs, inside) for sub in value if sub != _NULL]
            kept = [{k: v for k, v in b.items() if k not in ANNOTATIONS or k not in schema}
                    for b in branches]
            out.update(kept[0] if len(kept) == 1 else {"anyOf": kept})
        else:
            out[key] = value
    out = _plain(out)
    if out.get("additionalProperties") is True:
        del out["additionalProperties"]  # what JSON Schema assumes anyway
    patterns = out.get("patternProperties", {})
    if len(patterns) == 1 and "properties" not in out and "additionalProperties" not in out:
        # pydantic's dict whose keys have a pattern: every key must match it (a key that
        # did not would otherwise take any value)
        ((pattern, values),) = patterns.items()
        del out["patternProperties"]
        out["propertyNames"] = _said({**out.get("propertyNames", {}), "pattern": pattern})
        out["additionalProperties"] = values
    out = _said(out)
    if out.get("propertyNames") == {}:
        del out["propertyNames"]
    if "default" in out:
        text = out.get("description")
        if _empty(out["default"]) or (isinstance(text, str) and _SAYS_DEFAULT.search(text)):
            del out["default"]  # what leaving the argument out says
    return out


def _empty(value: Any) -> bool:
    """Whether a default says what leaving the argument out says: nothing, no, empty (0 is
    a value)."""
    return value is None or value is False or (isinstance(value, (str, list, dict))
                                               and not value)


def _said(schema: Schema) -> Schema:
    """A schema without the constraints of :data:`UNSAID` and without a bound that the
    other bound implies (``exclusiveMinimum: 0`` beside ``minimum: 0.5``)."""
    out = {k: v for k, v in schema.items()
           if not (isinstance(v, (str, float)) and (k, v) in UNSAID)}
    low, above = out.get("minimum"), out.get("exclusiveMinimum")
    if isinstance(low, (int, float)) and isinstance(above, (int, float)):
        del out["exclusiveMinimum" if low > above else "minimum"]
    return out


def _plain(branch: Schema) -> Schema:
    """A branch without ``type`` where its ``enum`` or ``const`` says it already."""
    values = branch.get("enum", [branch["const"]] if "const" in branch else None)
    if values is not None and "type" in branch \
            and all(_json_type(v) == branch["type"] for v in values):
        return {k: v for k, v in branch.items() if k != "type"}
    return branch


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "null" if value is None else "object" if isinstance(value, dict) else "array"


def merge_actions(actions: Mapping[str, Schema], default: str | None) -> Schema:
    """One tool's input schema from its actions' compact schemas (in order, the default first).

    Each action's schema has ``properties`` (``action`` among them) and a
    ``description``; ``default`` is the action taken when none is given.
    """
    names = list(actions)
    uses: dict[str, list[tuple[str, Schema]]] = {}
    for name, schema in actions.items():
        for key, prop in schema.get("properties", {}).items():
            if key != "action":
                uses.setdefault(key, []).append((name, prop))
    action: Schema = {"enum": names, "description": ACTION_ARGUMENTS}
    if default is not None:
        action["default"] = default
    top: dict[str, Schema] = {"action": action}
    own: dict[str, dict[str, Schema]] = {name: {} for name in names}
    for key, variants in uses.items():
        top[key] = base = _shared([prop for _, prop in variants])
        for name, prop in variants:
            own[name][key] = {k: v for k, v in prop.items() if base.get(k, _MISSING) != v}
    needs = {name: [key for key in actions[name].get("required", ()) if key != "action"]
             for name in names}
    everywhere = [key for key in top if key != "action" and all(key in n for n in needs.values())]
    merged: Schema = {"type": "object", "properties": top}
    required = ([] if default is not None else ["action"]) + everywhere
    if required:
        merged["required"] = required
    merged["additionalProperties"] = False
    entries: dict[str, Schema] = {}
    for name in names:
        takes = _arguments(own[name], [key for key in top if key != "action"])
        if own_needs := [key for key in needs[name] if key not in everywhere]:
            takes["required"] = own_needs
        same = next((other for other, entry in entries.items() if _takes(entry) == takes), None)
        entries[name] = {"description": actions[name].get("description", name),
                         **({"$ref": f"#/$defs/{same}"} if same is not None else takes)}
    merged["$defs"] = entries
    return merged


def _takes(entry: Schema) -> Schema:
    """What an action's entry says of its arguments (all but its description)."""
    return {k: v for k, v in entry.items() if k != "description"}


def _arguments(own: dict[str, Schema], every: list[str]) -> Schema:
    """Which arguments an action takes, the shorter way: those it takes (``{}`` where as
    listed above; no other, ``additionalProperties: false``) or those it does not
    (``false``); either way with what differs for it."""
    taken: Schema = {"properties": own, "additionalProperties": False} if own \
        else {"additionalProperties": False}
    others = {key: own.get(key, False) for key in every if own.get(key) != {}}
    untaken: Schema = {"properties": others} if others else {}
    return min(taken, untaken, key=lambda form: len(json.dumps(form)))


def _shared(variants: list[Schema]) -> Schema:
    """An argument as most actions take it: each keyword's value most of them give.

    An action that takes it otherwise says what differs in its own entry (a keyword
    it lacks is one it does not need: ``maxLength`` beside a ``pattern`` that bounds it).
    """
    keys = list(dict.fromkeys(key for variant in variants for key in variant))
    out: Schema = {}
    for key in keys:
        said = [json.dumps(v[key], sort_keys=True) for v in variants if key in v]
        most, count = Counter(said).most_common(1)[0]
        if count * 2 >= len(variants):
            out[key] = json.loads(most)
    return out


def action_schema(merged: Schema, action: str) -> Schema:
    """One action's whole input schema, from a tool's merged one: its ``$defs`` entry with
    the arguments above."""
    entry = merged["$defs"][action]
    ref = entry.get("$ref")  # the same arguments as an earlier action's
    if isinstance(ref, str):
        entry = {**merged["$defs"][ref.removeprefix("#/$defs/")], **_takes(entry)}
        del entry["$ref"]
        entry["description"] = merged["$defs"][action]["description"]
    default = merged["properties"]["action"].get("default")
    listed = entry.get("properties", {})
    if entry.get("additionalProperties") is False:
        keys = list(listed)
    else:
        keys = [key for key in merged["properties"]
                if key != "action" and listed.get(key) is not False]
    properties: dict[str, Schema] = {"action": {"const": action}}
    for key in keys:
        properties[key] = {**copy.deepcopy(merged["properties"][key]), **listed.get(key, {})}
    required = [key for key in merged.get("required", ()) if key != "action"]
    required = (["action"] if action != default else []) + required + entry.get("required", [])
    out: Schema = {"type": "object", "description": entry["description"],
                   "properties": properties, "additionalProperties": False}
    if required:
        out["required"] = required
    return out


def output_shape(schema: Schema, depth: int = OUTPUT_DEPTH) -> Schema:
    """The shape of an answer: field names and types (``null`` included), enums; no
    descriptions, constraints or defaults; ``$ref``s inlined; below ``depth`` levels of
    fields only the type of each value."""
    return _shape(schema, schema.get("$defs", {}), depth)


def _shape(schema: Schema, defs: Mapping[str, Schema], depth: int) -> Schema:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _shape(defs[ref.removeprefix("#/$defs/")], defs, depth)
    out: Schema = {}
    for key in SHAPE:
        if key not in schema:
            continue
        value = schema[key]
        if key in ("properties", "patternProperties"):
            if depth > 0:
                out[key] = {name: _shape(sub, defs, depth - 1) for name, sub in value.items()}
        elif key in ("items", "additionalProperties"):
            if depth > 0 and isinstance(value, dict):  # false is a constraint: not kept
                out[key] = _shape(value, defs, depth - 1)
        elif key == "anyOf":
            out.update(_union([_shape(sub, defs, depth) for sub in value]))
        else:
            out[key] = value
    return out


def _union(branches: list[Schema]) -> Schema:
    """``anyOf``'s branches; one type or null as a type list, as JSON Schema allows."""
    nullable = _NULL in branches
    kept = [b for b in branches if b != _NULL]
    if len(kept) == 1 and nullable:
        (only,) = kept
        if "enum" in only:
            return {**only, "enum": [*only["enum"], None]}
        kinds = only.get("type")
        if isinstance(kinds, str):
            return {**only, "type": [kinds, "null"]}
    if len(kept) == 1 and not nullable:
        return kept[0]
    return {"anyOf": branches}


def prose(text: str) -> str:
    """A docstring as one line per paragraph (a wrapped line costs as much as a space)."""
    paragraphs = re.split(r"\n\s*\n", text.strip())
    return "\n".join(" ".join(p.split()) for p in paragraphs)


def size(name: str, description: str | None, input_schema: Schema | None) -> int:
    """Characters a tool costs a conversation: its name, description and input schema, as
    compact JSON (as the repository's checks count them)."""
    return len(json.dumps({"name": name, "description": description,
                           "input_schema": input_schema}, separators=(",", ":")))
