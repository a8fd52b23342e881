"""The scene operation: params of named nodes kept under a name, recalled or morphed to."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, Field

from scorch.api import budget
from scorch.api.fields import Selector
from scorch.api.operation import (
    CHANGE,
    DESTROY,
    READ,
    ROOMS_NAMED,
    SET,
    WRITE_OVER,
    Action,
    CliForm,
    Result,
    operation,
)
from scorch.app import MAX_MORPH_SECONDS, Applied
from scorch.errors import InvalidRequest
from scorch.state import Scene
from scorch.values import Flag, SceneName

if TYPE_CHECKING:
    from scorch.app import Orchestra

Values = dict[str, dict[str, dict[str, float]]]


class SceneInfo(BaseModel):
    """A saved scene."""

    name: str
    rooms: list[str]
    nodes: int = Field(description="named nodes it holds params of")
    saved: str = Field(description="when it was saved (UTC)")
    values: Values = Field(description="param values by room, node and param (a list "
                           "leaves them out unless full)")

    @classmethod
    def of(cls, scene: Scene, values: bool = True) -> SceneInfo:
        """The API form of a scene (without its values unless ``values``)."""
        return cls(name=scene.name, rooms=list(scene.rooms or scene.values),
                   nodes=sum(len(nodes) for nodes in scene.values.values()),
                   saved=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(scene.saved_at)),
                   values={r: {n: dict(p) for n, p in nodes.items()}
                           for r, nodes in scene.values.items()} if values else {})


SceneNamed = Annotated[SceneName, Field(description="The scene")]
Rooms = Annotated[Selector, Field(
    description='Rooms it acts on: a name, a group or "*" (default: all)')]


class SceneList(Action):
    """List the saved scenes."""

    access = READ
    action: Literal["list"] = "list"
    full: Annotated[Flag, Field(description="Every scene with its values, however many (by "
                                "default the names of the first that fit the answer's size "
                                "budget)")] = False


class SceneSave(Action):
    """Keep the params of every named node under a name (replacing a scene of that name)."""

    access = WRITE_OVER
    action: Literal["save"]
    name: SceneNamed
    instance: Rooms = "*"


class SceneRecall(Action):
    """Set the scene's params at once."""

    access = SET
    journal = ROOMS_NAMED
    action: Literal["recall"]
    name: SceneNamed
    instance: Rooms = "*"


class SceneDelete(Action):
    """Delete a saved scene."""

    access = DESTROY
    action: Literal["delete"]
    name: SceneNamed


class SceneMorph(Action):
    """Move toward the scene: to a position (0..1), or over seconds."""

    access = CHANGE
    journal = ROOMS_NAMED
    action: Literal["morph"]
    name: SceneNamed
    instance: Rooms = "*"
    position: Annotated[float | None, Field(
        ge=0, le=1, allow_inf_nan=False, strict=True,
        description="0: where the morph started, 1: the scene")] = None
    seconds: Annotated[float | None, Field(
        gt=0, le=MAX_MORPH_SECONDS, allow_inf_nan=False, strict=True,
        description="Glide to the scene over this long")] = None


SceneArgs = Annotated[SceneList | SceneSave | SceneRecall | SceneMorph | SceneDelete,
                      Field(discriminator="action")]


class SceneOutput(Result):
    """The answer of the scene tool."""

    action: str
    name: str | None = None
    scenes: list[SceneInfo] = Field(default_factory=list)
    values: Values = Field(default_factory=dict, description="what was set (a timed morph: "
                           "where it ends)")
    missing: list[str] = Field(default_factory=list,
                               description="room.node the scene holds that is not playing now")
    more: int = Field(0, description="list: scenes left out (the size budget): full=true "
                      "returns them")

    def text(self) -> str:
        if self.action != "list":
            return super().text()
        return budget.lines([f"{s.name}  {s.saved}  {s.nodes} nodes in {', '.join(s.rooms)}"
                             for s in self.scenes], self.more, "scenes",
                            "scene(action='list', full=true)", "no scenes")


@operation(cli=CliForm("scene", ("action", "name")))
def scene(orch: Orchestra, args: SceneArgs) -> SceneOutput:
    """Scenes: the params of named nodes kept under a name, recalled at once or morphed
    toward (each param along its spec's warp, frequencies exponentially)."""
    conductor = orch.scenes
    if args.action == "list":
        kept, more = budget.listing([SceneInfo.of(s, values=args.full)
                                     for s in conductor.scenes()], budget.json_size, args.full)
        return SceneOutput(action="list", scenes=kept, more=more)
    if args.action == "save":
        saved = conductor.save(args.name, args.instance)
        return SceneOutput(action="save", name=args.name, scenes=[SceneInfo.of(saved)])
    if args.action == "delete":
        gone = conductor.delete(args.name)
        return SceneOutput(action="delete", name=args.name, scenes=[SceneInfo.of(gone)])
    applied: Applied
    if args.action == "recall":
        applied = conductor.recall(args.name, args.instance)
    elif args.position is not None and args.seconds is None:
        applied = conductor.morph(args.name, args.position, args.instance)
    elif args.seconds is not None and args.position is None:
        applied = conductor.glide(args.name, args.seconds, args.instance)
    else:
        raise InvalidRequest("scene action 'morph' needs exactly one of `position` (0..1) "
                             "and `seconds`")
    return SceneOutput(action=args.action, name=args.name, values=applied.values,
                       missing=applied.missing)
