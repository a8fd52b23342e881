"""One API schema: every operation defined once, with its typed request, result and doc.

An operation is a function ``run(orchestra, args) -> result`` decorated with
:func:`operation`. Its argument model, result model and docstring are read from
the function itself; the decorator says the rest of what is known of it: its
access, its command line, which argument names its rooms and how the answers of
several hosts merge. An operation with several actions takes the union of one
:class:`Action` model per action, discriminated on ``action``: each action has
its own arguments, doc and access. Everything else is derived from that one
definition:

- the MCP tools (``mcp_server/tools.py``): name, description, input and output schema;
- the control socket (``scorch/wire/server.py``): the methods it serves;
- the attached client (:class:`~scorch.api.remote.RemoteService`): one
  generic proxy, no forwarder per method;
- the operator's CLI (``scorch/cli/commands.py``): a subcommand per operation;
- the coordinator of several hosts (``scorch/api/coordinator.py``, ``fanout.py``):
  which hosts a call goes to, and one answer made of theirs.

Adding an operation is one function in ``scorch/api/ops/``, its test, and its line
in the docs (``docs/architecture.md`` has a worked example).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.fields import FieldInfo

from scorch.api import compact
from scorch.api.actions import actions_of, first_sentence, flat_fields
from scorch.api.declarations import (
    CHANGE,
    CODE,
    DESTROY,
    EVERYTHING,
    PATTERNS,
    READ,
    ROOMS_NAMED,
    SET,
    SILENCE,
    WRITE,
    WRITE_OVER,
    Access,
    Changes,
    CliForm,
    Patience,
    Tool,
    Where,
)
from scorch.errors import InvalidRequest, RoomNotFound, ScorchError
from scorch.values import StrictModel, describe_errors

if TYPE_CHECKING:
    from scorch.app import Orchestra
    from scorch.config import Config

__all__ = ["CHANGE", "CODE", "DESTROY", "EVERYTHING", "PATTERNS", "READ", "ROOMS_NAMED", "SET",
           "SILENCE", "WRITE", "WRITE_OVER", "Access", "Action", "Args", "Changes", "CliForm",
           "Operation", "Patience", "Result", "Service", "Spread", "Tool", "Where", "operation"]


class Args(StrictModel):
    """An operation's request: strict types, no unknown argument, immutable."""

    def where(self) -> Where | None:
        """Where the request goes when its operation's room argument does not say; None: it does."""
        return None


class Action(Args):
    """One action of an operation that has several: its own arguments, doc and access.

    A subclass fixes ``action`` to one value (``action: Literal["start"]``, with that
    value as default for the action taken when none is given), says what it does in
    its docstring and sets ``access``. The operation takes the union of its actions'
    models, ``Annotated[A | B, Field(discriminator="action")]``.
    """

    access: ClassVar[Access] = CHANGE
    """What this action does to the installation."""
    journal: ClassVar[Changes | None] = None
    """What of a session this action changes (None: nothing the journal keeps)."""


class Result(BaseModel):
    """An operation's answer: what Claude reads as structured content, and the CLI prints."""

    # Built on first use, as the arguments' (StrictModel): most are never asked for.
    model_config = ConfigDict(defer_build=True)

    def failure(self) -> str | None:
        """The text of a failure the result itself reports (e.g. code that threw), else None.

        MCP answers such a result as a tool error; the CLI prints it and exits 1.
        """
        return None

    def failure_code(self) -> str:
        """The code of the failure ``failure()`` reports (``scorch.errors.CODES``)."""
        return "FAILED"

    def text(self) -> str:
        """The result for a model and a terminal: compact ``key: value`` lines unless a result
        renders itself better (its JSON is the structured content, and the CLI's --json)."""
        return compact.render(self.model_dump(mode="json"))

    def in_history(self) -> bool:
        """Whether the history keeps the call as ``@NAME {arguments}`` when it changed
        something; False for a result whose code the history keeps itself (execute)."""
        return True

    def images(self) -> list[Path]:
        """PNG files that show the result; none unless a result has pictures.

        MCP sends each as image content beside the structured content (the files
        are on the host that runs the rooms, where the MCP server runs too); the
        CLI prints their paths with the result.
        """
        return []


A = TypeVar("A", bound=Args)
R = TypeVar("R", bound=Result)

Host = str | None
Answer = dict[str, Any]
Merge = Callable[[Answer, Sequence[tuple[Host, Answer]], Any], Answer]
"""``merge(joined, answers, args)``: one answer from the hosts' answers, beyond the
field-by-field join (``joined``) every operation gets."""
Filler = Callable[[Sequence[str], str, str, "Config", Mapping[str, Answer]], Answer]
"""``filler(rooms, why, short, config, last)``: the part of an answer for the rooms of a
host that did not answer (``last``: their rows as the host last gave them)."""


class Hosts(Protocol):
    """A coordinator of several hosts, as an operation's own ``across`` uses it."""

    config: Config
    parts: list[str | None]

    def call(self, name: str, args: Mapping[str, Any] | Args, key: str | None = None) -> Result:
        """Run another operation across the hosts."""
        ...

    def answers(self, name: str, args: Args) -> dict[Host, Answer]:
        """Every host's own answer to ``name`` (those that gave one)."""
        ...

    def ask(self, host: Host, name: str, args: Args) -> Answer:
        """One host's own answer to ``name`` (its error when it fails)."""
        ...

    def hosts(self) -> list[dict[str, Any]]:
        """Every host and its state now."""
        ...


#: The argument that names an operation's rooms unless it says otherwise (when it has one).
ROOMS = "instance"


@dataclass(frozen=True)
class Spread:
    """How a coordinator of several hosts runs an operation (see ``scorch/api/fanout.py``)."""

    rooms: str | None = ROOMS
    """The argument naming the rooms it acts on (a selector); None: it names none and
    goes to every host (as an operation without that argument)."""
    any_host: bool = False
    """Every host answers alike (the docs, the library): the first that answers does."""
    merge: Merge | None = None
    """How the hosts' answers merge beyond the field-by-field join."""
    unanswered: Filler | None = None
    """The answer's part for the rooms of a host that did not answer; None: the call
    fails, naming the host."""
    roll_call: bool = False
    """Its answer's ``instances`` are every room of a host: kept to show while it is away."""
    across: Callable[[Hosts, Any], Result | None] | None = None
    """Runs it across the hosts in terms of other calls (None back: as usual)."""


@dataclass(frozen=True)
class Operation(Generic[A, R]):
    """One operation of the API, as every front end sees it."""

    name: str
    doc: str
    """The docstring: the MCP tool description and the CLI help."""
    args: Any
    """Its arguments' model, or the union of its actions' models."""
    result: type[R]
    run: Callable[[Orchestra, A], R]
    access: Access
    """What it does; with actions, the most dangerous action's."""
    patience: float
    """Seconds an attached caller waits for the answer, beyond ``waits``."""
    waits: str | None
    """The argument holding the operation's own timeout, added to ``patience``."""
    tool: bool
    """False for operations Claude has no use for (the control socket's ``ping``)."""
    cli: CliForm = field(default_factory=lambda: CliForm())
    """How the operator's command line spells it, beyond the derived form."""
    spread: Spread = field(default_factory=lambda: Spread())
    """Where it goes on several hosts, and how their answers merge."""
    actions: Mapping[str, type[Action]] = field(default_factory=dict)
    """Each action's model by name, the default action first; empty: no actions."""
    fields: Mapping[str, FieldInfo] = field(default_factory=dict)
    """Every argument any action takes, as the CLI and the MCP tool list them."""
    panel: str | None = None
    """The MCP Apps panel: ``show`` (the tool shows it), ``only`` (only it calls the tool)."""
    unstarted: bool = False
    """It reads only the machine and the config: it answers when the rooms could not start."""
    journal: Changes | None = None
    """What of a session it changes (None: nothing the journal keeps); with actions, each
    action's own (``Action.journal``)."""

    @property
    def command(self) -> str | None:
        """The CLI subcommand (``scorch COMMAND``), None for none."""
        return self.cli.command

    @property
    def positional(self) -> tuple[str, ...]:
        """Arguments the CLI takes by position, in order."""
        return self.cli.positional

    @property
    def summary(self) -> str:
        """The first sentence of the doc."""
        return first_sentence(self.doc)

    @property
    def default_action(self) -> str | None:
        """The action taken when none is given, if any."""
        for name, model in self.actions.items():
            if not model.model_fields["action"].is_required():
                return name
        return None

    def model(self, raw: Mapping[str, Any]) -> type[Args]:
        """The model that validates ``raw``: the operation's, or its action's."""
        if not self.actions:
            return typing.cast(type[Args], self.args)
        if not isinstance(raw, Mapping):
            raise InvalidRequest(f"{self.name}: invalid arguments: an object of named "
                                 f"arguments is expected, found {type(raw).__name__}")
        action = raw.get("action", self.default_action)
        if action is None:
            raise _at("action", InvalidRequest(
                f"{self.name}: invalid arguments:\naction: this argument is required: one of "
                f"{', '.join(self.actions)}"))
        if not isinstance(action, str) or action not in self.actions:
            raise _at("action", InvalidRequest(
                f"{self.name}: invalid arguments:\naction: should be one of "
                f"{', '.join(self.actions)}, found {str(action)[:60]!r}"))
        return self.actions[action]

    def parse(self, raw: Mapping[str, Any] | Args) -> A:
        """Validate raw arguments; InvalidRequest names each bad argument and why."""
        models = tuple(self.actions.values()) or (self.args,)
        if isinstance(raw, models):
            return typing.cast(A, raw)
        if isinstance(raw, Args):
            raw = raw.model_dump()
        model = self.model(raw)
        try:
            return typing.cast(A, model.model_validate(raw))
        except ValidationError as err:
            known = list(model.model_fields)
            listed = describe_errors(err, known=lambda where: [] if where else known)
            if len(listed) > MAX_PROBLEMS:  # thousands of unknown keys: a short answer
                listed = [*listed[:MAX_PROBLEMS], f"... and {len(listed) - MAX_PROBLEMS} more"]
            problems = "\n".join(listed)
            action = f" action {raw.get('action', self.default_action)!r}" if self.actions else ""
            refused = InvalidRequest(f"{self.name}{action}: invalid arguments:\n{problems}")
            errors = sorted(err.errors(), key=lambda e: e["type"] != "extra_forbidden")
            where = errors[0]["loc"] if errors else ()  # an unknown argument first
            refused.argument = str(where[0]) if where else None
            raise refused from None

    def access_of(self, args: Args) -> Access:
        """What this call does: its action's access, else the operation's."""
        return args.access if isinstance(args, Action) and self.actions else self.access

    def journal_of(self, args: Args) -> Changes | None:
        """What this call changes of a session: its action's journal, else the operation's;
        None for a dry run and a call without the argument its journal needs."""
        declared = args.journal if isinstance(args, Action) and self.actions else self.journal
        if declared is None or getattr(args, "dry_run", False):
            return None
        if declared.given is not None and getattr(args, declared.given) is None:
            return None
        return declared

    def where(self, args: Args) -> Where:
        """The rooms (or host) a call names, by its declaration."""
        own = args.where()
        if own is not None:
            return own
        named = getattr(args, self.spread.rooms, None) if self.spread.rooms else None
        return Where(rooms=named if isinstance(named, str) else None)

    def blame(self, err: ScorchError, args: Args) -> None:
        """Name the argument at fault in ``err`` when it can be told: the one naming its rooms
        (or its host) when no room is called so."""
        if err.argument is not None or not isinstance(err, RoomNotFound):
            return
        named = getattr(err, "name", None)  # None when it crossed the wire
        for name in (self.spread.rooms, ROOMS, "host"):
            if name is not None and getattr(args, name, None) == named:
                err.argument = name
                return
        if self.spread.rooms is not None:
            err.argument = self.spread.rooms

    def answer_within(self, args: A) -> float:
        """How long an attached caller waits for this call's answer."""
        own = float(getattr(args, self.waits, None) or 0.0) if self.waits else 0.0
        return own + self.patience


#: Problems one refusal lists at most (a request may carry thousands of bad keys).
MAX_PROBLEMS = 50


def operation(*, access: Access | None = None, name: str | None = None,
              cli: CliForm | None = None, spread: Spread | None = None,
              journal: Changes | None = None, patience: Patience | None = None,
              tool: Tool | None = None, unstarted: bool = False,
              ) -> Callable[[Callable[[Orchestra, A], R]], Operation[A, R]]:
    """Make ``run(orchestra, args) -> result`` an operation (its name by default); the
    registry (``scorch.api.ops.REGISTRY``) lists it.

    ``access``: what it does (with actions: derived, the most dangerous action's);
    ``cli``: its command; ``spread``: how it runs on several hosts; ``journal``: what of a
    session it changes (with actions: each action's ``journal``); ``patience``: how long an
    attached caller waits; ``tool``: its part in MCP; ``unstarted``: it needs only the
    machine and the config, so it answers also where the rooms could not start (the doctor).
    """
    cli = cli or CliForm()
    spread = spread or Spread()
    patience = patience or Patience()
    tool = tool or Tool()

    def declare(run: Callable[[Orchestra, A], R]) -> Operation[A, R]:
        op_name = name or run.__name__
        params = list(inspect.signature(run).parameters.values())
        args_type = _resolve(run, params[1].annotation)
        result_type = _resolve(run, inspect.signature(run).return_annotation)
        actions = actions_of(args_type, Action)
        if actions:
            if access is not None:
                raise ValueError(f"{op_name}: its access is its actions' (Action.access)")
            if journal is not None:
                raise ValueError(f"{op_name}: its journal is its actions' (Action.journal)")
            op_access = Access.most([model.access for model in actions.values()])
        elif access is None:
            raise ValueError(f"{op_name}: say its access")
        else:
            op_access = access
        fields = flat_fields(actions) if actions else dict(args_type.model_fields)
        rooms = spread.rooms
        named = [*cli.positional, *cli.short, *([cli.follow] if cli.follow else []),
                 *cli.files, *(key for fixed in cli.aliases.values() for key in fixed),
                 *([patience.argument] if patience.argument else []),
                 *([rooms] if rooms is not None and rooms != ROOMS else [])]
        for arg in named:
            if arg not in fields:
                raise ValueError(f"{op_name}: {arg!r} is not an argument")
        spread_here = replace(spread, rooms=rooms if rooms in fields else None)
        journals = [model.journal for model in actions.values()] if actions else [journal]
        _check_journals(op_name, journals, spread_here, fields)
        return Operation(
            name=op_name, doc=inspect.cleandoc(run.__doc__ or op_name), args=args_type,
            result=result_type, run=run, access=op_access, patience=patience.seconds,
            waits=patience.argument,
            tool=tool.listed, cli=cli, spread=spread_here, actions=actions, fields=fields,
            panel=tool.panel, unstarted=unstarted, journal=journal)

    return declare


def _check_journals(name: str, journals: Sequence[Changes | None], spread: Spread,
                    fields: Mapping[str, FieldInfo]) -> None:
    """ValueError when a journal names an argument the operation lacks."""
    for journal in journals:
        if journal is None:
            continue
        if journal.rooms == "named" and spread.rooms is None:
            raise ValueError(f"{name}: its journal's rooms are named, but no argument names them")
        if journal.given is not None and journal.given not in fields:
            raise ValueError(f"{name}: its journal's {journal.given!r} is not an argument")


def _at(argument: str, err: ScorchError) -> ScorchError:
    """``err``, naming the argument at fault."""
    err.argument = argument
    return err


def _resolve(run: Callable[..., Any], annotation: Any) -> Any:
    """An annotation, evaluated in the defining module (they are strings there)."""
    if isinstance(annotation, str):
        return eval(annotation, run.__globals__)
    return annotation


class Service(Protocol):
    """Whatever runs operations: an orchestra in this process, or one behind a socket."""

    mode: str
    """``hosted`` (this process runs the rooms) or ``attached`` (a ``scorch run`` does)."""

    def call(self, name: str, args: Mapping[str, Any] | Args, key: str | None = None) -> Result:
        """Run operation ``name``; raise a ScorchError a person can act on.

        ``key``: the request's own id, kept when it is sent again, so that a call
        that is not idempotent runs at most once (generated when None, where a call
        crosses a connection).
        """
        ...
