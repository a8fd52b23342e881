"""One API schema: every operation defined once, with its typed request, result and doc.

An operation is a function ``run(orchestra, args) -> result`` decorated with
:func:`operation`. Its argument model, result model and docstring are read from
the function itself, and everything else is derived from that one definition:

- the MCP tools (``mcp_server/tools.py``): name, description, input and output schema;
- the control socket (``service/control_server.py``): the methods it serves;
- the attached client (:class:`~scorch.api.remote.RemoteService`): one
  generic proxy, no forwarder per method;
- the operator's CLI (``scorch/cli/commands.py``): a subcommand per operation.

Adding an operation is one function in ``service/ops/``, its test, and its line
in the docs (``docs/architecture.md`` has a worked example).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from scorch.errors import InvalidRequest
from scorch.values import StrictModel, describe_errors

if TYPE_CHECKING:
    from scorch.app.orchestra import Orchestra


class Args(StrictModel):
    """An operation's request: strict types, no unknown argument, immutable."""


class Result(BaseModel):
    """An operation's answer: what Claude reads as structured content, and the CLI prints."""

    def failure(self) -> str | None:
        """The text of a failure the result itself reports (e.g. code that threw), else None.

        MCP answers such a result as a tool error; the CLI prints it and exits 1.
        """
        return None

    def text(self) -> str:
        """The result for a terminal; JSON unless a result renders itself better."""
        return self.model_dump_json(indent=2)

    def images(self) -> list[Path]:
        """PNG files that show the result; none unless a result has pictures.

        MCP sends each as image content beside the structured content (the files
        are on the host that runs the rooms, where the MCP server runs too); the
        CLI prints their paths with the result.
        """
        return []


A = TypeVar("A", bound=Args)
R = TypeVar("R", bound=Result)


@dataclass(frozen=True)
class Access:
    """What an operation does to the installation (MCP tool annotations derive from it)."""

    read_only: bool
    destructive: bool
    idempotent: bool


READ = Access(read_only=True, destructive=False, idempotent=True)
CHANGE = Access(read_only=False, destructive=False, idempotent=False)
SET = Access(read_only=False, destructive=False, idempotent=True)
DESTROY = Access(read_only=False, destructive=True, idempotent=False)
SILENCE = Access(read_only=False, destructive=True, idempotent=True)


@dataclass(frozen=True)
class CliForm:
    """What the operator's command adds to the derived one (see ``scorch/cli/commands.py``)."""

    short: Mapping[str, str] = field(default_factory=dict)
    """One-letter options by argument name: ``{"lines": "n"}`` gives ``-n``."""
    follow: str | None = None
    """The argument that takes the previous answer's ``cursor``: ``-f`` follows."""
    aliases: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """More commands for the same operation with some arguments fixed:
    ``{"boot": {"action": "boot"}}`` makes ``scorch boot ROOM``."""
    files: tuple[str, ...] = ()
    """Text arguments that may be ``-`` (read stdin) or the path of a file to read."""


@dataclass(frozen=True)
class Operation(Generic[A, R]):
    """One operation of the API, as every front end sees it."""

    name: str
    doc: str
    """The docstring: the MCP tool description and the CLI help."""
    args: type[A]
    result: type[R]
    run: Callable[[Orchestra, A], R]
    access: Access
    command: str | None
    """The CLI subcommand (``scorch COMMAND``), None for none."""
    positional: tuple[str, ...]
    """Arguments the CLI takes by position, in order."""
    patience: float
    """Seconds an attached caller waits for the answer, beyond ``waits``."""
    waits: str | None
    """The argument holding the operation's own timeout, added to ``patience``."""
    tool: bool
    """False for operations Claude has no use for (the control socket's ``ping``)."""
    cli: CliForm = field(default_factory=lambda: CliForm())
    """How the operator's command line spells it, beyond the derived form."""

    @property
    def summary(self) -> str:
        """The first sentence of the doc."""
        first = re.split(r"\.\s+(?=[A-Z])", " ".join(self.doc.split()), maxsplit=1)[0]
        return first.rstrip(".") + "."

    def parse(self, raw: Mapping[str, Any] | A) -> A:
        """Validate raw arguments; InvalidRequest names each bad argument and why."""
        if isinstance(raw, self.args):
            return raw
        try:
            return self.args.model_validate(raw)
        except ValidationError as err:
            problems = "\n".join(describe_errors(err))
            raise InvalidRequest(f"{self.name}: invalid arguments:\n{problems}") from None

    def answer_within(self, args: A) -> float:
        """How long an attached caller waits for this call's answer."""
        own = float(getattr(args, self.waits) or 0.0) if self.waits else 0.0
        return own + self.patience


OPERATIONS: dict[str, Operation[Any, Any]] = {}
"""Every operation by name, filled as ``scorch.api.ops`` imports its modules."""


def operation(*, access: Access, name: str | None = None, command: str | None = None,
              positional: tuple[str, ...] = (), patience: float = 30.0,
              waits: str | None = None, tool: bool = True,
              short: Mapping[str, str] | None = None, follow: str | None = None,
              aliases: Mapping[str, Mapping[str, Any]] | None = None,
              files: tuple[str, ...] = (),
              ) -> Callable[[Callable[[Orchestra, A], R]], Callable[[Orchestra, A], R]]:
    """Register ``run(orchestra, args) -> result`` as an operation (its name by default).

    ``short``, ``follow``, ``aliases`` and ``files`` shape its command (:class:`CliForm`).
    """

    def register(run: Callable[[Orchestra, A], R]) -> Callable[[Orchestra, A], R]:
        op_name = name or run.__name__
        if op_name in OPERATIONS:
            raise ValueError(f"operation {op_name!r} is defined twice")
        params = list(inspect.signature(run).parameters.values())
        args_type = _resolve(run, params[1].annotation)
        result_type = _resolve(run, inspect.signature(run).return_annotation)
        cli = CliForm(short=short or {}, follow=follow, aliases=aliases or {}, files=files)
        named = [*positional, *cli.short, *([follow] if follow else []), *files,
                 *(key for fixed in cli.aliases.values() for key in fixed)]
        for arg in named:
            if arg not in args_type.model_fields:
                raise ValueError(f"{op_name}: {arg!r} is not an argument")
        OPERATIONS[op_name] = Operation(
            name=op_name, doc=inspect.cleandoc(run.__doc__ or op_name), args=args_type,
            result=result_type, run=run, access=access, command=command,
            positional=positional, patience=patience, waits=waits, tool=tool, cli=cli)
        return run

    return register


def _resolve(run: Callable[..., Any], annotation: Any) -> Any:
    """An annotation, evaluated in the defining module (they are strings there)."""
    if isinstance(annotation, str):
        return eval(annotation, run.__globals__)
    return annotation


class Service(Protocol):
    """Whatever runs operations: an orchestra in this process, or one behind a socket."""

    mode: str
    """``hosted`` (this process runs the rooms) or ``attached`` (a ``scorch run`` does)."""

    def call(self, name: str, args: Mapping[str, Any] | Args) -> Result:
        """Run operation ``name``; raise a ScorchError a person can act on."""
        ...
