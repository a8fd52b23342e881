"""Operations on code and its output: execute, stop, console, wait_for."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, Field

from scorch.api import budget as budget_of
from scorch.api.fanout import failed_outcomes
from scorch.api.fields import (
    Code,
    ExecuteTimeout,
    Pattern,
    RoomName,
    Selector,
    SelectorArgs,
    TimedArgs,
    WaitTimeout,
)
from scorch.api.operation import (
    CHANGE,
    CODE,
    PATTERNS,
    READ,
    SILENCE,
    Args,
    CliForm,
    Patience,
    Result,
    Spread,
    operation,
)
from scorch.primitives.sclang import ExecuteResult, SclangError
from scorch.state import CodeRun
from scorch.values import Flag

if TYPE_CHECKING:
    from scorch.app import Orchestra


class ExecuteArgs(TimedArgs):
    """Code and where to run it."""

    instance: Selector
    code: Code
    timeout_s: ExecuteTimeout = 10.0
    check_only: Annotated[Flag, Field(
        description="Only compile it (a syntax check); nothing runs")] = False
    full: Annotated[Flag, Field(
        description="Every posted line and the whole value, however long (by default the "
        "last lines that fit the answer's budget, saying how many are left out)")] = False


class ErrorInfo(BaseModel):
    """A SuperCollider error, located in the submitted code."""

    kind: str = Field(description="parse (did not compile), runtime (threw), aborted (left "
                      "early: a top-level ^ or halt), timeout, unavailable or interrupted")
    message: str = Field(description="sclang's message, all its lines")
    line: int | None = Field(description="1-based line in the submitted code (parse errors)")
    char: int | None = Field(description="the character in that line, as sclang counts it")
    context: str = Field(description="the source lines around the error with a caret")
    error_class: str | None = Field(description="DoesNotUnderstandError, "
                                    "PrimitiveFailedError, ... (runtime errors)")
    receiver: str | None = Field(description="the object that got the failing message")
    selector: str | None = Field(description="the message it did not understand")
    call_stack: list[str] = Field(description="frames of YOUR code, innermost first")
    library_frames: list[str] = Field(description="class-library frames, innermost first")
    protected_call_stack: list[str] = Field(
        description="where the error was made, when inside try/protect")
    text: str = Field(description="the whole error rendered for a person")

    @classmethod
    def of(cls, error: SclangError) -> ErrorInfo:
        """The API form of a parsed sclang error."""
        return cls(kind=error.kind, message=error.message, line=error.line, char=error.char,
                   context=error.context, error_class=error.error_class,
                   receiver=error.receiver, selector=error.selector,
                   call_stack=list(error.call_stack),
                   library_frames=list(error.library_frames),
                   protected_call_stack=list(error.protected_call_stack),
                   text=error.describe())


class ExecuteOutcome(BaseModel):
    """What one room did with the code."""

    instance: str
    ok: bool
    value: str | None = Field(description="the value of the last expression, as sclang prints it")
    posted: list[str] = Field(description="lines the code posted")
    warnings: list[str]
    elapsed_ms: float
    error: ErrorInfo | None
    request: int = Field(description="the request's number: console lines 'after #N' come "
                         "from what it left running")
    left_running: str | None = Field(
        description="what the code left running (a routine, a pattern) posted or failed "
        "after it returned, and where to read it; null when nothing did yet")
    console_since: int | None = Field(
        description="console seq at the end of the request: console or wait_for with this "
        "`since` shows what came after")
    server_errors: list[str] = Field(
        default_factory=list,
        description="what scsynth posted about the messages the code sent before it "
        "returned (FAILURE IN SERVER ...); the code itself ran, so ok stays true")
    posted_more: int = Field(0, description="earlier posted lines left out of this answer "
                             "(its size budget): full=true returns them all")

    def compact(self, budget: int) -> ExecuteOutcome:
        """This outcome within ``budget`` characters: the last posted lines that fit, the
        value and scsynth's complaints cut, saying how many lines it left out."""
        posted = budget_of.newest(self.posted, len, budget * 3 // 4)
        value = self.value
        if value is not None:
            value = budget_of.cut(value, budget // 4, "execute with full=true")
        complaints = self.server_errors[:20]
        if len(self.server_errors) > 20:
            complaints.append(f"... {len(self.server_errors) - 20} more")
        return self.model_copy(update={
            "posted": [budget_of.cut(line, budget // 2, "execute with full=true")
                       for line in posted],
            "posted_more": self.posted_more + len(self.posted) - len(posted),
            "value": value, "server_errors": complaints})

    @classmethod
    def of(cls, result: ExecuteResult) -> ExecuteOutcome:
        """The API form of one room's result."""
        return cls(instance=result.room, ok=result.ok, value=result.value,
                   posted=list(result.posted), warnings=list(result.warnings),
                   elapsed_ms=round(result.elapsed * 1000, 3),
                   error=ErrorInfo.of(result.error) if result.error is not None else None,
                   request=result.request, left_running=result.late,
                   console_since=result.console_since,
                   server_errors=list(result.server_errors))


class ExecuteOutput(Result):
    """One outcome per room the selector named."""

    results: list[ExecuteOutcome]
    at: float | None = Field(None, description="the Unix time scsynth hears the code's "
                             "messages (it was compiled now and runs then); null: now")

    def failure(self) -> str | None:
        """Each room's error with line, char and source, or None when all went well."""
        if all(r.ok for r in self.results):
            return None
        blocks = []
        for result in self.results:
            if result.ok:
                blocks.append(f"{result.instance}: ok -> {result.value}")
                continue
            text = f"{result.instance}: {result.error.text if result.error else 'failed'}"
            if result.posted:
                text += "\nposted before the error:\n" + "\n".join(result.posted)
            if result.server_errors:
                text += "\nscsynth said:\n" + "\n".join(result.server_errors)
            blocks.append(text)
        return "\n\n".join(blocks)

    def in_history(self) -> bool:
        """Its code is in the history (``run_code`` keeps it)."""
        return False

    def failure_code(self) -> str:
        """SUPERCOLLIDER_ERROR for code that did not compile or threw; TIMEOUT, UNAVAILABLE."""
        kinds = {r.error.kind for r in self.results if not r.ok and r.error is not None}
        if kinds & {"parse", "runtime", "aborted"} or not kinds:
            return "SUPERCOLLIDER_ERROR"
        return "TIMEOUT" if "timeout" in kinds else "UNAVAILABLE"

    def text(self) -> str:
        lines = []
        for result in self.results:
            prefix = f"{result.instance}: " if len(self.results) > 1 else ""
            if result.posted_more:
                lines.append(f"{prefix}[" + budget_of.more(
                    result.posted_more, "posted lines before these",
                    "execute(..., full=true); console shows the latest 1000") + "]")
            lines += [f"{prefix}{line}" for line in result.posted]
            if result.ok:
                lines.append(f"{prefix}-> {result.value}")
            lines += [f"{prefix}scsynth: {line}" for line in result.server_errors]
        return "\n".join(lines)


@operation(access=CODE, cli=CliForm("exec", ("instance", "code"), files=("code",)),
           spread=Spread(unanswered=failed_outcomes), patience=Patience(argument="timeout_s"))
def execute(orch: Orchestra, args: ExecuteArgs) -> ExecuteOutput:
    """Run SuperCollider code in rooms' sclang: the value of the last expression and what
    it posted, per room; an error names the line and character in your code. What code
    changes is not journaled: undo cannot take it back (play, set and pattern changes it
    can).

    With at or delay it runs inside s.bind: its messages and its patterns' first events
    reach scsynth then, in every room."""
    when = None if args.check_only else orch.tempo.when(args.at, args.delay, args.instance)
    return run_code(orch, args.instance, args.code, args.timeout_s, check_only=args.check_only,
                    at=when, full=args.full)


def run_code(orch: Orchestra, selector: str, code: str, timeout: float,
             check_only: bool = False, at: float | None = None,
             full: bool = False) -> ExecuteOutput:
    """Run code as ``execute`` does, and keep each room's outcome in the history.

    A syntax check (``check_only``) ran nothing and is not kept. Keeping never
    fails the call: the history logs what it could not write. ``at``: a Unix time
    (see ``execute``). ``full``: every posted line, else what fits the size budget.
    """
    started = time.time()
    results = orch.rooms.execute(selector, code, timeout, check_only=check_only, at=at)
    output = ExecuteOutput(results=[ExecuteOutcome.of(r) for r in results], at=at)
    if not check_only:
        for result, outcome in zip(results, output.results, strict=True):
            # a scheduled run makes its synths at `at`
            ended = max(result.answered or time.time(), at or 0.0)
            entry = orch.knowledge.record(started, outcome.instance, code, outcome.value or "",
                                          "\n".join(outcome.posted),
                                          outcome.error.text if outcome.error else None,
                                          outcome.elapsed_ms)
            if entry is not None:  # what a crash loses is told with the code that made it
                orch.rooms.ran(outcome.instance, CodeRun(entry, started, ended, code))
    if full:
        return output
    share = budget_of.TEXT // max(1, len(output.results))
    return output.model_copy(update={"results": [r.compact(share) for r in output.results]})


class StopArgs(SelectorArgs):
    """Rooms to silence."""

    dry_run: Annotated[Flag, Field(description="Say what it would stop, stop nothing")] = False


class RoomStopped(BaseModel):
    """What stop stopped in one room."""

    patterns: list[str] = Field(description="the patterns and proxies that played (Pdef kick)")
    routines: int | None = Field(description="routines, tasks and pattern players code "
                                 "started (not a Pdef's or Tdef's); null: sclang did not say")
    synths: int | None = Field(description="the synths scsynth ran just before, all freed; "
                               "null: it did not answer")
    nodes: list[str] = Field(description="the named nodes freed and forgotten")

    def line(self, room: str) -> str:
        """``room: 2 patterns (Pdef kick, Pdef bass), 1 routine, 14 synths; ...``."""
        said = [_count(len(self.patterns), "pattern")
                + (f" ({', '.join(self.patterns)})" if self.patterns else "")]
        said.append("routines unknown (sclang did not answer)" if self.routines is None
                    else _count(self.routines, "routine"))
        said.append("synths unknown (scsynth did not answer)" if self.synths is None
                    else _count(self.synths, "synth"))
        forgot = (f"; named nodes forgotten: {', '.join(self.nodes)} (play them again, or "
                  "undo)" if self.nodes else "")
        return f"{room}: stopped {', '.join(said)}{forgot}"


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


class StopOutput(Result):
    """Rooms silenced, and what each stopped."""

    stopped: dict[str, RoomStopped]
    dry_run: bool = False
    would_stop: dict[str, list[str]] | None = Field(
        None, description="dry_run: each room's named nodes and playing patterns it would stop")

    def text(self) -> str:
        if self.dry_run:
            return "\n".join(f"{room} would stop: {', '.join(what) or 'no named node or pattern'}"
                             for room, what in (self.would_stop or {}).items())
        return "\n".join(what.line(room) for room, what in self.stopped.items())


@operation(access=SILENCE, cli=CliForm("stop", ("instance",)), journal=PATTERNS)
def stop(orch: Orchestra, args: StopArgs) -> StopOutput:
    """Silence rooms like Cmd-Period (routines, patterns, synths); says what stopped.
    Named nodes are forgotten (play them again, or `undo`, to bring them back); `dry_run`
    says what it would stop."""
    if args.dry_run:
        return StopOutput(stopped={}, dry_run=True,
                          would_stop=orch.rooms.sounding(args.instance))
    return StopOutput(stopped={
        room: RoomStopped(patterns=list(s.patterns), routines=s.routines, synths=s.synths,
                          nodes=list(s.nodes))
        for room, s in orch.rooms.stop_sound(args.instance).items()})


class ConsoleArgs(Args):
    """Which console and how much of it."""

    instance: RoomName
    lines: Annotated[int, Field(ge=0, le=1000, strict=True,
                                description="How many recent lines")] = 50
    clear: Annotated[Flag, Field(description="Forget the lines after reading them")] = False
    full: Annotated[Flag, Field(description="All the lines asked for, however long (by "
                                "default the latest that fit the answer's size budget)")] = False


class Line(BaseModel):
    """One console line."""

    seq: int = Field(description="position in the console; pass to wait_for's since")
    time: float
    source: str = Field(description="sclang, scsynth or jackd")
    text: str
    note: str = Field(default="", description="'after #N': output of something request N "
                      "left running after it returned; 'error after #N': an error in it")


class ConsoleOutput(Result):
    """Console lines, oldest first."""

    instance: str
    lines: list[Line]
    more: int = Field(0, description="earlier lines left out (the size budget): full=true "
                      "returns them")

    def text(self) -> str:
        shown = "\n".join(f"[{line.source}] {line.text}" for line in self.lines)
        if not self.more:
            return shown
        return f"[{budget_of.more(self.more, 'earlier lines', 'console(..., full=true)')}]\n{shown}"


@operation(access=CHANGE, cli=CliForm("console", ("instance",)))
def console(orch: Orchestra, args: ConsoleArgs) -> ConsoleOutput:
    """Read a room's console: what sclang and scsynth printed, routines' output and
    errors after execute returned among it."""
    found = [Line(**line._asdict())
             for line in orch.rooms.console(args.instance, args.lines, clear=args.clear)]
    if args.full:
        return ConsoleOutput(instance=args.instance, lines=found)
    kept = budget_of.newest(found, lambda line: len(line.text) + len(line.note))
    kept = [line.model_copy(update={"text": budget_of.cut(
        line.text, budget_of.TEXT // 2, "console(..., full=true)")}) for line in kept]
    return ConsoleOutput(instance=args.instance, lines=kept, more=len(found) - len(kept))


class WaitArgs(Args):
    """What to wait for, where, and how long."""

    instance: RoomName
    pattern: Pattern
    timeout_s: WaitTimeout = 10.0
    since: Annotated[int | None, Field(ge=0, strict=True, description=(
        "Only lines after this console seq; default: lines printed from now on"))] = None


class WaitOutput(Result):
    """Whether a matching line came in time."""

    matched: bool
    line: Line | None


@operation(access=READ, cli=CliForm("wait-for", ("instance", "pattern")),
           patience=Patience(argument="timeout_s"))
def wait_for(orch: Orchestra, args: WaitArgs) -> WaitOutput:
    """Wait until the room's console shows a line matching a regex, e.g. a message a
    routine posts later."""
    line = orch.rooms.wait_for(args.instance, args.pattern, args.timeout_s, since=args.since)
    return WaitOutput(matched=line is not None,
                      line=Line(**line._asdict()) if line is not None else None)
