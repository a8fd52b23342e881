"""The snippet operation: code worth keeping, the starters that ship and the person's own."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field, Strict

from scorch.api import budget
from scorch.api.fields import Code, ExecuteTimeout, Selector
from scorch.api.operation import (
    CODE,
    DESTROY,
    READ,
    WRITE_OVER,
    Action,
    CliForm,
    Hosts,
    Patience,
    Result,
    Spread,
    operation,
)
from scorch.api.ops.code import ExecuteOutcome, ExecuteOutput, run_code
from scorch.knowledge import NAME_RULE, Snippet, validate_name, validate_tag
from scorch.values import Flag, no_nul

if TYPE_CHECKING:
    from scorch.app import Orchestra

# The length is checked first, so its error says characters.
Description = Annotated[str, Strict(), Field(max_length=300), AfterValidator(no_nul)]


SnippetName = Annotated[str, Strict(), Field(description=f"A snippet's name: {NAME_RULE}"),
                        AfterValidator(validate_name)]
SnippetTag = Annotated[str, Strict(), AfterValidator(validate_tag)]


class SnippetList(Action):
    """List the snippets (tags filter them)."""

    access = READ
    action: Literal["list"]
    tags: Annotated[tuple[SnippetTag, ...], Field(max_length=20, description=(
        "Only snippets with all of these tags"))] = ()
    full: Annotated[Flag, Field(description="Every snippet, however many (by default the "
                                "first that fit the answer's size budget)")] = False


class SnippetShow(Action):
    """Show a snippet's code."""

    access = READ
    action: Literal["show"]
    name: SnippetName


class SnippetSave(Action):
    """Save code as a snippet of yours (built-ins are read-only)."""

    access = WRITE_OVER
    action: Literal["save"]
    name: SnippetName
    code: Annotated[Code, Field(description="The code to keep")]
    description: Annotated[Description, Field(description=(
        "What the snippet does, one line"))] = ""
    tags: Annotated[tuple[SnippetTag, ...], Field(max_length=20, description="Its tags")] = ()
    replace: Annotated[Flag, Field(description="Save over a snippet of yours with that "
                                   "name")] = False


class SnippetRun(Action):
    """Run a snippet on rooms, as execute does (kept in the history)."""

    access = CODE
    action: Literal["run"]
    name: SnippetName
    instance: Annotated[Selector, Field(
        description='Where to run it: a room, a group or "*"')]
    timeout_s: ExecuteTimeout = 10.0


class SnippetDelete(Action):
    """Delete a snippet of yours (built-ins are read-only)."""

    access = DESTROY
    action: Literal["delete"]
    name: SnippetName


SnippetArgs = Annotated[SnippetList | SnippetShow | SnippetSave | SnippetRun | SnippetDelete,
                        Field(discriminator="action")]


class SnippetInfo(BaseModel):
    """One snippet."""

    name: str
    description: str
    tags: list[str]
    runs: str = Field(description="how long it plays, e.g. '6 s, then stops by itself'")
    stop: str = Field(description="code that stops one that plays until stopped")
    builtin: bool = Field(description="shipped with scorch, read-only")
    code: str | None = Field(description="its code (not in lists)")

    @classmethod
    def of(cls, snippet: Snippet, with_code: bool = True) -> SnippetInfo:
        """The API form of a snippet."""
        return cls(name=snippet.name, description=snippet.description, tags=list(snippet.tags),
                   runs=snippet.runs, stop=snippet.stop, builtin=snippet.builtin,
                   code=snippet.code if with_code else None)


class SnippetOutput(Result):
    """The snippets listed, the one shown, saved, run or deleted, and a run's results."""

    action: str
    snippets: list[SnippetInfo] = Field(description="list: every snippet matching the tags")
    more: int = Field(0, description="list: snippets left out (the size budget): full=true "
                      "returns them")
    snippet: SnippetInfo | None
    results: list[ExecuteOutcome] = Field(description="run: one outcome per room, as "
                                          "execute gives")

    def failure(self) -> str | None:
        """A run's errors, as execute reports them."""
        return ExecuteOutput(results=self.results).failure() if self.results else None

    def in_history(self) -> bool:
        """A run's code is in the history already."""
        return self.action != "run"

    def failure_code(self) -> str:
        """As execute's."""
        return ExecuteOutput(results=self.results).failure_code()

    def text(self) -> str:
        if self.action == "list":
            width = max((len(s.name) for s in self.snippets), default=0)
            return budget.lines([f"{s.name:{width}}  {'(built-in) ' if s.builtin else ''}"
                                 f"{s.description}" for s in self.snippets], self.more,
                                "snippets", "snippet(action='list', full=true)", "no snippets")
        assert self.snippet is not None
        if self.action == "run":
            done = ExecuteOutput(results=self.results).text()
            stop = f"\nstop it with: {self.snippet.stop}" if self.snippet.stop else ""
            return f"{done}{stop}"
        if self.action == "delete":
            return f"deleted {self.snippet.name}"
        header = [f"// {self.snippet.name}: {self.snippet.description}",
                  f"// tags: {', '.join(self.snippet.tags)}"]
        return "\n".join(header) + "\n" + (self.snippet.code or "")


def _run_across(hosts: Hosts, args: SnippetArgs) -> SnippetOutput | None:
    """Run: the snippet's code from the first host that has it, run as execute on the rooms."""
    if args.action != "run":
        return None
    shown = hosts.call("snippet", {"action": "show", "name": args.name})
    assert isinstance(shown, SnippetOutput) and shown.snippet is not None
    ran = hosts.call("execute", {"instance": args.instance, "code": shown.snippet.code,
                                 "timeout_s": args.timeout_s})
    assert isinstance(ran, ExecuteOutput)
    return SnippetOutput(action="run", snippets=[], snippet=shown.snippet, results=ran.results)


@operation(cli=CliForm("snippet", ("action", "name", "instance")),
           spread=Spread(any_host=True, across=_run_across),
           patience=Patience(argument="timeout_s"))
def snippet(orch: Orchestra, args: SnippetArgs) -> SnippetOutput:
    """Named SuperCollider code: starters that ship with scorch (a pattern, an effect
    chain, a sampler, a MIDI responder...) and your own."""
    store = orch.knowledge.snippets
    if args.action == "list":
        wanted = set(args.tags)
        kept, more = budget.listing([SnippetInfo.of(s, with_code=False) for s in store.list()
                                     if wanted <= set(s.tags)], budget.json_size, args.full)
        return SnippetOutput(action="list", snippet=None, results=[], snippets=kept, more=more)
    results: list[ExecuteOutcome] = []
    if args.action == "save":
        found = store.save(args.name, args.code, args.description, args.tags,
                           replace=args.replace)
    else:
        found = store.show(args.name)
    if args.action == "run":
        results = run_code(orch, args.instance, found.code, args.timeout_s).results
    elif args.action == "delete":
        store.delete(args.name)
    return SnippetOutput(action=args.action, snippets=[], snippet=SnippetInfo.of(found),
                         results=results)
