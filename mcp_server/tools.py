"""The MCP tools, derived from the API schema: one tool per operation, nothing written twice.

Each operation's argument model becomes the tool's parameters (with their
descriptions and constraints), its result model the tool's output schema, its
docstring the description and its access the annotations; the schemas are written
for a model (``mcp_server.schemas``: what each argument is, once; an answer's shape).
A call goes to the service (in this process or a running ``scorch run``).

An operation with several actions stays one tool. Its parameters are every
argument of every action, as one flat object (Claude's API refuses ``oneOf``,
``anyOf`` or ``allOf`` at the top of an input schema), and ``$defs`` holds an entry
per action: what it does, its access, what it takes and requires. Every call is
checked by the operation's own model first (``checked``), then by the SDK against
the looser flat parameters. The tool's annotations are those of its most dangerous
action.

The server lists every tool, or those ``[mcp] tools`` chooses (:func:`choose`).

A result with pictures (``Result.images()``: listen, render) is answered with
each as image content, beside its structured content and its one-line text.

Every failure a person can act on becomes a tool error whose text says what went
wrong and what is known (the room names, the state and since when, the
argument at fault); anything else is logged with its traceback and reported
without taking the server down. For a program, every error result also carries
its code, whether retrying can help and the argument at fault as structured
content (``{"code", "retryable", "argument", "message"}``, docs/errors.md), and
its text begins with ``[CODE]``.

Each ``tools/call`` gets a request key (``Request.key``) made of its JSON-RPC id
(within its HTTP session, if it came over HTTP) and this server's nonce, so that
a call an attached server sends again after a dropped connection runs once in
the ``scorch run`` behind it.
"""

from __future__ import annotations

import base64
import contextvars
import inspect
import logging
import uuid
from collections.abc import Callable, Collection
from typing import Annotated, Any, cast

import anyio.from_thread
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, ImageContent, TextContent, ToolAnnotations
from pydantic import Field, ValidationError
from pydantic_core import PydanticUndefined

from mcp_server.schemas import compact, merge_actions, output_shape, prose
from scorch.api import PROGRESS, Access, Listener, Operation, Result, Service, budget
from scorch.api.ops import OPERATIONS
from scorch.config import Choice, chosen, problems
from scorch.errors import ConfigError, ScorchError
from scorch.values import describe_errors

log = logging.getLogger(__name__)

#: The MCP Apps panel (``mcp_server/panel.html``, docs/web.md), which the tools of
#: operations declared ``panel="show"`` show inline; those declared ``panel="only"`` are
#: called by the panel alone (hosts with Apps hide them from the model).
PANEL_URI = "ui://scorch/panel.html"

#: The request key of the ``tools/call`` being run (set by ``ScorchTool.run``; the
#: tool function runs in a worker thread, which anyio gives a copy of this context).
CALL_KEY: contextvars.ContextVar[str | None] = contextvars.ContextVar("scorch_call_key",
                                                                      default=None)


class Failed(ScorchError):
    """A result that reports its own failure (code that threw, a room that did not boot)."""

    code = "FAILED"  # each one's own, from Result.failure_code()


class ScorchTool(Tool):
    """A tool whose every error result says its code, whether to retry, and the argument."""

    nonce: str = ""
    """This server's own, in each call's request key: JSON-RPC ids repeat across sessions."""

    async def run(self, arguments: dict[str, Any], context: Context[Any, Any],
                  convert_result: bool = False) -> Any:
        """Run the tool under its call's request key; an error as an error result."""
        try:
            arguments = checked(OPERATIONS[self.name], self.fn_metadata.pre_parse_json(arguments))
        except ScorchError as err:
            log.info("tool %r refused: %r", self.name, str(err)[:500])
            return error_result(str(err), err)
        token = CALL_KEY.set(call_key(self.nonce, context))
        told = PROGRESS.set(progress_listener(context))
        try:
            return await super().run(arguments, context, convert_result)
        except UnexpectedToolError as exc:
            log.exception("tool %s raised an unexpected exception", self.name)
            return error_result(str(exc), None)
        except ToolError as exc:
            log.info("tool %r failed: %r", self.name, str(exc)[:500])
            if isinstance(exc.__cause__, ValidationError):  # the SDK's own check: our words
                problems = "\n".join(describe_errors(exc.__cause__))
                return error_result(f"{self.name}: invalid arguments:\n{problems}", exc)
            return error_result(str(exc), exc)
        finally:
            PROGRESS.reset(told)
            CALL_KEY.reset(token)


def call_key(nonce: str, context: Context[Any, Any]) -> str | None:
    """The request key of a ``tools/call``: unique to its client, the same if it is sent again.

    On stdio (one client) the JSON-RPC id; over HTTP, where several clients count
    ids alike, the id within the client's session, and a key of its own for a
    call without a session (each such call stands alone).
    """
    try:
        request_id = context.request_id
        headers = context.headers
    except ValueError:  # called outside of a request: no id to key it by
        return None
    if headers is None:
        return f"{nonce}:{request_id}"
    session = headers.get("mcp-session-id")
    return f"{nonce}:{session}:{request_id}" if session else f"{nonce}:{uuid.uuid4().hex}"


def progress_listener(context: Context[Any, Any]) -> Listener:
    """Tell the client how far the call has come (``notifications/progress``; nothing when
    it sent no progress token), from the worker thread the tool function runs in."""
    def listener(done: float, total: float | None, message: str | None) -> None:
        anyio.from_thread.run(context.report_progress, done, total, message)

    return listener


def checked(op: Operation[Any, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments as the operation checks them on every path (the control socket, the
    CLI): an unknown one, or one of a wrong type, is refused in scorch's words, naming it.

    What goes on to the tool function: the arguments given, with a deprecated alias
    (``play``'s ``name``) under the name it stands for.
    """
    given = ({k: v for k, v in arguments.items() if v is not None} if op.actions
             else dict(arguments))
    parsed = op.parse(given)
    out = {k: v for k, v in given.items() if k in op.fields}
    for name in parsed.model_fields_set - out.keys():
        out[name] = parsed.model_dump(mode="json", include={name})[name]
    return out


def tool_annotations(access: Access) -> ToolAnnotations:
    """MCP's hints from what the operation does to the installation: code it runs may reach
    anything SuperCollider can (open world)."""
    return ToolAnnotations(read_only_hint=access.read_only,
                           destructive_hint=access.destructive or access.runs_code,
                           idempotent_hint=access.idempotent, open_world_hint=access.runs_code)


def call(service: Service, name: str, arguments: dict[str, Any]) -> Result:
    """Run an operation for a tool; every failure becomes a ToolError a person understands.

    The ToolError's cause is the ScorchError (its code, retryable, argument).
    """
    try:
        result = service.call(name, arguments, key=CALL_KEY.get())
    except ScorchError as err:
        raise ToolError(str(err)) from err
    except Exception as err:
        log.exception("tool %s failed", name)
        internal = ScorchError("internal error")
        internal.code = "INTERNAL"
        raise ToolError(f"internal error in {name} ({type(err).__name__}); scorch keeps "
                        "running, the server log has the details") from internal
    failure = result.failure()
    if failure is not None:
        failed = Failed(failure)
        failed.code = result.failure_code()
        raise ToolError(failure) from failed
    return result


def error_result(text: str, exc: BaseException | None) -> CallToolResult:
    """An error result: ``text`` after its ``[CODE]``, and what a program reads of it.

    The code, retryable and argument are the ScorchError's found among ``exc``'s
    causes; arguments the SDK refused are INVALID_ARGUMENT, naming the first one.
    """
    code, retryable, argument = "INTERNAL", False, None
    while exc is not None:
        if isinstance(exc, ScorchError):
            code, retryable, argument = exc.code, exc.retryable, exc.argument
            break
        if isinstance(exc, ValidationError):
            code = "INVALID_ARGUMENT"
            where = exc.errors()[0]["loc"] if exc.errors() else ()
            argument = str(where[0]) if where else None
            break
        exc = exc.__cause__
    text = budget.cut(text, budget.HARD, "a narrower call")
    return CallToolResult(
        content=[TextContent(text=f"[{code}] {text}")], is_error=True,
        structured_content={"code": code, "retryable": retryable, "argument": argument,
                            "message": text})


def with_images(result: Result) -> CallToolResult:
    """The result as MCP sends it: its own text (not its JSON again), its fields as
    structured content, and its pictures as image content, when it has any.

    The text is cut at ``budget.HARD`` characters, a last guard (results keep within
    ``budget.TEXT`` by themselves). A picture that cannot be read is left out (its
    path is still in the result).
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
    text = budget.cut(result.text(), budget.HARD, "a narrower call (the structured "
                      "content has the whole answer)")
    return CallToolResult(content=[TextContent(text=text), *images],
                          structured_content=result.model_dump(mode="json"))


def tool_function(op: Operation[Any, Any], service: Service) -> Callable[..., Any]:
    """A function whose signature is the operation's arguments, as the MCP SDK reads tools."""

    def run(**arguments: Any) -> CallToolResult:
        if op.actions:  # every argument of every action is a parameter: pass those given
            arguments = {key: value for key, value in arguments.items() if value is not None}
        return with_images(call(service, op.name, arguments))

    parameters = []
    for name, field in op.fields.items():
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


def input_schema(op: Operation[Any, Any]) -> dict[str, Any]:
    """The tool's input schema, written for a model (``mcp_server.schemas``): its arguments
    once each, and for an operation with actions each action's own in ``$defs`` (what it
    does, its access, the arguments it takes and requires)."""
    if not op.actions:
        schema = compact(op.args.model_json_schema())
        schema.pop("description", None)  # the tool's own description says it
        return schema
    actions = {}
    for name, model in op.actions.items():
        own = compact(model.model_json_schema())
        own["description"] = f"{prose(own.get('description', name))} [{model.access.word}]"
        actions[name] = own
    return merge_actions(actions, op.default_action)


def tool_meta(op: Operation[Any, Any]) -> dict[str, Any] | None:
    """The tool's ``_meta``: the panel it shows (MCP Apps), and who may call it."""
    if op.panel == "show":
        return {"ui": {"resourceUri": PANEL_URI}}
    if op.panel == "only":
        return {"ui": {"resourceUri": PANEL_URI, "visibility": ["app"]}}
    return None


def choose(choice: object, where: str) -> list[str]:
    """The tools a choice (``[mcp] tools``, ``--tools``) lists, in the operations' order, with
    the panel's own when one of them shows the panel; ConfigError saying ``where`` when it
    is wrong (an unknown tool named, with the tools there are)."""
    known = [op.name for op in OPERATIONS.values() if op.tool]
    wrong = problems(choice, known)
    if wrong is not None:
        raise ConfigError(f"{where}: {wrong}")
    names = chosen(cast(Choice, choice), known)
    if any(OPERATIONS[name].panel == "show" for name in names):
        names = [name for name in known if name in names or OPERATIONS[name].panel == "only"]
    return names


def tools(service: Service, names: Collection[str] | None = None) -> list[Tool]:
    """A tool for every operation meant for Claude, or those ``names`` lists (one nonce for
    this server's calls)."""
    made: list[Tool] = []
    nonce = uuid.uuid4().hex[:12]
    for op in OPERATIONS.values():
        if op.tool and (names is None or op.name in names):
            tool = ScorchTool.from_function(tool_function(op, service), name=op.name,
                                            description=prose(op.doc), structured_output=True,
                                            annotations=tool_annotations(op.access),
                                            meta=tool_meta(op))
            output = tool.fn_metadata.output_schema
            metadata = tool.fn_metadata.model_copy(update={
                "output_schema": output_shape(output) if output is not None else None})
            made.append(tool.model_copy(update={
                "parameters": input_schema(op), "fn_metadata": metadata, "nonce": nonce}))
    return made
