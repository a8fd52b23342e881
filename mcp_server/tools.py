"""The MCP tools, derived from the API schema: one tool per operation, nothing written twice.

Each operation's argument model becomes the tool's parameters (with their
descriptions and constraints), its result model the tool's output schema, its
docstring the description and its access the annotations. A call goes to the
service (in this process or a running ``scorch run``).

A result with pictures (``Result.images()``: listen, render) is answered with
each as image content, beside its structured content and its one-line text.

Every failure a person can act on becomes a tool error whose text says what went
wrong and what is known (the instance names, the state and since when, the
argument at fault); anything else is logged with its traceback and reported
without taking the server down.
"""

from __future__ import annotations

import base64
import inspect
import logging
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ImageContent, TextContent, ToolAnnotations
from pydantic import Field
from pydantic_core import PydanticUndefined

from scorch.api.operation import Access, Operation, Result, Service
from scorch.api.ops import OPERATIONS
from scorch.errors import ScorchError

log = logging.getLogger(__name__)


def tool_annotations(access: Access) -> ToolAnnotations:
    """MCP's hints from what the operation does to the installation."""
    return ToolAnnotations(read_only_hint=access.read_only, destructive_hint=access.destructive,
                           idempotent_hint=access.idempotent, open_world_hint=False)


def call(service: Service, name: str, arguments: dict[str, Any]) -> Result:
    """Run an operation for a tool; every failure becomes a ToolError a person understands."""
    try:
        result = service.call(name, arguments)
    except ScorchError as err:
        raise ToolError(str(err)) from err
    except Exception as err:
        log.exception("tool %s failed", name)
        raise ToolError(f"internal error in {name} ({type(err).__name__}); scorch keeps "
                        "running, the server log has the details") from err
    failure = result.failure()
    if failure is not None:
        raise ToolError(failure)
    return result


def with_images(result: Result) -> Result | CallToolResult:
    """The result as MCP sends it: its pictures as image content, when it has any.

    The structured content stays the result's own fields; the text beside the
    pictures is the result's own short text. A picture that cannot be read is
    left out (its path is still in the result).
    """
    images = []
    for path in result.images():
        try:
            data = path.read_bytes()
        except OSError as err:
            log.warning("picture %s not sent: %s", path, err.strerror)
            continue
        images.append(ImageContent(data=base64.b64encode(data).decode("ascii"),
                                   mime_type="image/png"))
    if not images:
        return result
    return CallToolResult(content=[TextContent(text=result.text()), *images],
                          structured_content=result.model_dump(mode="json"))


def tool_function(op: Operation[Any, Any], service: Service) -> Callable[..., Any]:
    """A function whose signature is the operation's arguments, as the MCP SDK reads tools."""

    def run(**arguments: Any) -> Result | CallToolResult:
        return with_images(call(service, op.name, arguments))

    parameters = []
    for name, field in op.args.model_fields.items():
        # Built at run time from the model's field: the same type, constraints and text.
        annotation = Annotated.__class_getitem__(  # type: ignore[attr-defined]
            (field.annotation, *field.metadata, Field(description=field.description)))
        default = inspect.Parameter.empty if field.is_required() else field.default
        if default is PydanticUndefined:
            default = inspect.Parameter.empty
        parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                                            default=default, annotation=annotation))
    run.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        parameters, return_annotation=op.result)
    run.__name__ = op.name
    run.__doc__ = op.doc
    return run


def register(server: MCPServer[Any], service: Service) -> None:
    """Add a tool to ``server`` for every operation meant for Claude."""
    for op in OPERATIONS.values():
        if op.tool:
            server.add_tool(tool_function(op, service), name=op.name, description=op.doc,
                            annotations=tool_annotations(op.access), structured_output=True)
