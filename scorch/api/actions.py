"""Operations with several actions: one argument model per action, and their flat view.

An operation that multiplexes on ``action`` takes the union of one model per action
(:class:`scorch.api.operation.Action`), discriminated on ``action``: each model says
what its action needs, and its access. The command line and the MCP tool's
parameters list every argument of every action at once (:func:`flat_fields`); each
call is still checked by its action's own model.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, Union

from pydantic import BaseModel, Field
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

M = TypeVar("M", bound=BaseModel)


def first_sentence(doc: str) -> str:
    """The first sentence of a docstring, with its full stop."""
    first = re.split(r"\.\s+(?=[A-Z])", " ".join(doc.split()), maxsplit=1)[0]
    return first.rstrip(".") + "."


def actions_of(annotation: Any, base: type[M]) -> dict[str, type[M]]:
    """The ``base`` models of a union of actions by action name, the default first; {} for
    one model."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    members = typing.get_args(annotation)
    if not members:
        return {}
    found: dict[str, type[M]] = {}
    for model in members:
        if not (isinstance(model, type) and issubclass(model, base)):
            raise ValueError(f"{model!r} is not an {base.__name__}")
        value = typing.get_args(model.model_fields["action"].annotation)
        if len(value) != 1:
            raise ValueError(f"{model.__name__}: action must be one Literal value")
        found[value[0]] = model
    default = [n for n, m in found.items() if not m.model_fields["action"].is_required()]
    if len(default) > 1:
        raise ValueError(f"actions {', '.join(default)} are each the default")
    return {n: found[n] for n in sorted(found, key=lambda n: n not in default)}


def flat_fields(actions: Mapping[str, type[BaseModel]]) -> dict[str, FieldInfo]:
    """Every argument of the actions, as one flat list of options (CLI, MCP parameters).

    An argument is required when every action requires it, and has a default when every
    action gives it the same; its description says which action takes it for what. Each
    call is still checked by its action's own model.
    """
    by_name: dict[str, list[tuple[str, FieldInfo]]] = {}
    for action, model in actions.items():
        for key, info in model.model_fields.items():
            by_name.setdefault(key, []).append((action, info))
    flat = {"action": _action_field(actions)}
    for key, uses in by_name.items():
        if key == "action":
            continue
        infos = [info for _, info in uses]
        first = infos[0]
        everywhere = len(uses) == len(actions)
        same = all(i.annotation == first.annotation and i.metadata == first.metadata
                   and repr(i.default) == repr(first.default) for i in infos)
        if same and everywhere:
            annotation: Any = _whole(first)
            default = first.default
        else:
            kinds: list[Any] = []
            for kind in map(_whole, infos):
                if kind not in kinds:
                    kinds.append(kind)
            annotation = Union.__getitem__((*kinds, None))
            default = None
        described: Any = typing.Annotated[
            annotation, Field(description=_describe(key, uses, len(actions)))]
        flat[key] = FieldInfo.from_annotated_attribute(described, default)
    return flat


def _whole(info: FieldInfo) -> Any:
    """A field's type with its constraints."""
    return typing.Annotated[(info.annotation, *info.metadata)] if info.metadata \
        else info.annotation


def _describe(key: str, uses: list[tuple[str, FieldInfo]], every: int) -> str:
    """The argument's description: for which actions, each action's own where they differ."""
    texts: dict[str, list[str]] = {}
    for action, info in uses:
        need = " (required)" if info.is_required() else ""
        texts.setdefault(f"{info.description or ''}{need}".strip(), []).append(action)
    if len(texts) == 1 and len(uses) == every:
        return next(iter(texts)).replace(" (required)", "") or key
    return "; ".join(f"{', '.join(actions)}: {text}" if text else f"for {', '.join(actions)}"
                     for text, actions in texts.items())


def _action_field(actions: Mapping[str, Any]) -> FieldInfo:
    """``action``: one of the actions, each said in a few words with its access."""
    default = next((n for n, m in actions.items()
                    if not m.model_fields["action"].is_required()), PydanticUndefined)
    text = "; ".join(f"{n}: {first_sentence(inspect.cleandoc(m.__doc__ or n))} "
                     f"[{m.access.word}]" for n, m in actions.items())
    described: Any = typing.Annotated[Literal.__getitem__(tuple(actions)), Field(description=text)]
    return FieldInfo.from_annotated_attribute(described, default)
