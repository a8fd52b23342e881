"""Operations on what scorch knows: SuperCollider's docs and the execution history."""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field, Strict, model_validator

from scorch.api import budget
from scorch.api.fields import ExecuteTimeout, Selector, WaitTimeout
from scorch.api.operation import (
    CODE,
    READ,
    Action,
    Answer,
    Args,
    CliForm,
    Host,
    Patience,
    Result,
    Spread,
    operation,
)
from scorch.errors import DocNotFound, InvalidRequest
from scorch.knowledge import ClassDoc, Entry, MethodEntry, fts
from scorch.values import Flag, no_nul

if TYPE_CHECKING:
    from scorch.app import Orchestra

#: Longer queries are refused; only the first fts.MAX_TERMS words of a query are searched.
MAX_QUERY = 10_000
#: What one doc shows at most: a class's description, examples and their length.
MAX_DESCRIPTION, MAX_EXAMPLES, MAX_EXAMPLE = 2000, 3, 2500
#: Posted output shown per history entry (its end); the history keeps more.
MAX_POSTED = 4000


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rstrip() + " [...]"


# Bounded text: the length is checked first, so its error says characters.
DocName = Annotated[str, Strict(), Field(max_length=200), AfterValidator(no_nul)]
DocQuery = Annotated[str, Strict(), Field(max_length=MAX_QUERY), AfterValidator(no_nul)]
HistoryQuery = Annotated[str, Strict(), Field(max_length=1000), AfterValidator(no_nul)]


# --- docs --------------------------------------------------------------------------


class DocsArgs(Args):
    """A name to look up, or words to search for."""

    name: DocName | None = Field(None, description=(
        "A class or help page (SinOsc, Guides/Tour_of_UGens; SinOsc.ar for one method): "
        "its methods with argument names and defaults, and examples"))
    query: DocQuery | None = Field(None, description=(
        "Words, e.g. 'how do I pan in stereo': the best pages, a line each"))
    limit: Annotated[int, Field(ge=1, le=50, strict=True,
                                description="How many search results")] = 8
    timeout_s: Annotated[WaitTimeout, Field(description=(
        "Seconds to wait while the docs index is built (the first time)"))] = 20.0

    @model_validator(mode="after")
    def _one_of(self) -> DocsArgs:
        name = (self.name or "").strip()
        query = (self.query or "").strip()
        if name and query:
            raise ValueError("give name or query, not both")
        if not name and not query:
            what = "empty" if self.name is not None or self.query is not None else "missing"
            raise ValueError(f"the name or query is {what}: give a class name (name = 'SinOsc') "
                             "or words to search for (query = 'reverb')")
        return self


class ArgOut(BaseModel):
    """One argument of a method."""

    name: str
    default: str | None = Field(description="the default as SuperCollider source; null: none")
    doc: str = Field(description="what the help says about it")


class MethodOut(BaseModel):
    """One method, with its real argument names and defaults."""

    name: str
    signature: str = Field(description="e.g. ar(freq: 440, phase: 0, mul: 1, add: 0)")
    summary: str
    returns: str
    args: list[ArgOut]
    inherited_from: str = Field(description="the superclass that defines it, if not this class")


class DocOut(BaseModel):
    """One class or help page."""

    name: str
    kind: str = Field(description="class, guide, reference, tutorial, overview or other")
    key: str = Field(description="the help page, e.g. Classes/SinOsc")
    summary: str
    superclasses: list[str] = Field(description="nearest first, ending with Object")
    is_ugen: bool
    categories: list[str]
    related: list[str]
    class_methods: list[MethodOut] = Field(description="called on the class: SinOsc.ar(...)")
    instance_methods: list[MethodOut] = Field(description="called on an instance: x.set(...)")
    description: str
    examples: list[str]
    file: str = Field(description="the .sc file defining the class (empty: not in the library)")
    has_help: bool
    in_library: bool = Field(description="the running class library has it")

    @classmethod
    def of(cls, doc: ClassDoc, method: str | None = None) -> DocOut:
        """The API form of a doc; with ``method``, only the methods of that name."""
        def methods(entries: tuple[MethodEntry, ...]) -> list[MethodOut]:
            return [MethodOut(name=m.name, signature=m.signature(), summary=m.summary,
                              returns=m.returns, inherited_from=m.inherited_from,
                              args=[ArgOut(name=a.name, default=a.default, doc=a.doc)
                                    for a in m.args])
                    for m in entries if method is None or m.name == method]

        return cls(name=doc.name, kind=doc.kind, key=doc.key, summary=doc.summary,
                   superclasses=list(doc.superclasses), is_ugen=doc.is_ugen,
                   categories=list(doc.categories), related=list(doc.related),
                   class_methods=methods(doc.class_methods),
                   instance_methods=methods(doc.instance_methods),
                   description=_cut(doc.description, MAX_DESCRIPTION),
                   examples=[_cut(e, MAX_EXAMPLE) for e in doc.examples[:MAX_EXAMPLES]],
                   file=doc.file, has_help=doc.has_help, in_library=doc.in_library)

    def text(self) -> str:
        """The doc for a terminal."""
        kind = f"{self.kind}, UGen" if self.is_ugen else self.kind
        lines = [f"{self.name} ({kind}): {self.summary}"]
        if self.superclasses:
            lines.append("superclasses: " + " -> ".join(self.superclasses))
        for title, prefix, methods in (("class methods", f"{self.name}.", self.class_methods),
                                       ("instance methods", ".", self.instance_methods)):
            if methods:
                lines.append(f"{title}:")
                lines += [f"  {prefix}{m.signature}" + (f"  {m.summary}" if m.summary else "")
                          for m in methods]
        if self.related:
            lines.append("related: " + ", ".join(self.related))
        for example in self.examples:
            lines += ["example:", *("  " + line for line in example.splitlines())]
        return "\n".join(lines)


class DocHit(BaseModel):
    """One search result."""

    name: str
    kind: str
    key: str
    summary: str = Field(description="one line")


class DocsOutput(Result):
    """A doc (for a name, or a query that is one), search results, and what the index lacks."""

    doc: DocOut | None
    results: list[DocHit]
    suggestions: list[str] = Field(description="names close to a query that found nothing")
    note: str | None = Field(description="what the answer lacks and why (the index has "
                             "runtime classes only, a query had too many words...)")
    version: str = Field(description="the SuperCollider version the docs come from")

    def text(self) -> str:
        lines = [self.doc.text()] if self.doc is not None else []
        others = [h for h in self.results if self.doc is None or h.key != self.doc.key]
        if others:
            lines.append("see also:" if self.doc is not None else "results:")
            width = max(len(h.name) for h in others)
            lines += [f"  {h.name:{width}}  {h.summary}" for h in others]
        if not self.results and self.doc is None:
            lines.append("no results" + (f"; did you mean {', '.join(self.suggestions)}?"
                                         if self.suggestions else ""))
        if self.note:
            lines.append(f"note: {self.note}")
        return "\n".join(lines)


@operation(access=READ, cli=CliForm("docs", ("query",)), spread=Spread(any_host=True),
           patience=Patience(argument="timeout_s"))
def docs(orch: Orchestra, args: DocsArgs) -> DocsOutput:
    """Look SuperCollider up, by name or by words, in the help installed here and the class
    library the rooms run (its real argument names and defaults)."""
    state = orch.knowledge.docs(args.timeout_s)
    notes = [state.note] if state.note else []
    if state.refreshing:
        notes.append("a newer index is being built: this answer comes from the previous one")
    if args.name is not None and args.name.strip():
        doc = _lookup(orch, args.name.strip(), args.timeout_s)
        return DocsOutput(doc=doc, results=[], suggestions=[], note="; ".join(notes) or None,
                          version=state.version)
    query = (args.query or "").strip()
    words = fts.terms(query)
    if not words:
        notes.append(f"the query {query[:40]!r} has no letters or digits to search for")
    elif len(words) == fts.MAX_TERMS and len(fts.terms(query + " x")) == fts.MAX_TERMS:
        notes.append(f"only the first {fts.MAX_TERMS} different words of the query were "
                     "searched")
    index = state.index
    hits = index.search(query, args.limit)
    found = None
    if " " not in query and (raw := index.lookup(query)) is not None:
        found = DocOut.of(raw, _method_of(query, raw))
    suggestions = [] if hits or not words else index.suggest(query)
    return DocsOutput(doc=found, results=[DocHit(name=h.name, kind=h.kind, key=h.key,
                                                 summary=h.summary) for h in hits],
                      suggestions=suggestions, note="; ".join(notes) or None,
                      version=state.version)


def _method_of(name: str, doc: ClassDoc) -> str | None:
    """The method part of ``SinOsc.ar`` when the doc found is the class's."""
    if "." in name and not name.startswith(".") and name.split(".", 1)[0] == doc.name:
        return name.split(".", 1)[1] or None
    return None


def _lookup(orch: Orchestra, name: str, timeout: float) -> DocOut:
    """The doc for ``name``; a class added since the index was built is found after a refresh."""
    doc = orch.knowledge.docs(timeout).index.lookup(name)
    if doc is None and orch.knowledge.docs_changed(timeout):
        doc = orch.knowledge.docs(timeout).index.lookup(name)
    index = orch.knowledge.docs(timeout).index
    if doc is None:
        near = index.suggest(name.split(".", 1)[0])
        hint = (f"closest: {', '.join(near)}" if near
                else "search with query instead (e.g. query = 'sine oscillator')")
        raise DocNotFound(f"no class or help page named {name[:60]!r}; {hint}")
    method = _method_of(name, doc)
    out = DocOut.of(doc, method)
    if method is not None and not out.class_methods and not out.instance_methods:
        known = sorted({m.name for m in (*doc.class_methods, *doc.instance_methods)})
        raise DocNotFound(f"{doc.name} has no method {method[:60]!r}; its methods: "
                          f"{', '.join(known[:40]) or 'none'}"
                          f"{' ...' if len(known) > 40 else ''}", name=method, known=known)
    return out


# --- history -----------------------------------------------------------------------

_AGO = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|d)\s*$")
_UNIT = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}


def _since(value: float | str) -> float:
    """A Unix time from a number, an ISO date-time (local unless it says) or "15m" ago."""
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(value)
    except ValueError:
        pass
    ago = _AGO.match(value)
    if ago:
        return datetime.datetime.now().timestamp() - float(ago.group(1)) * _UNIT[ago.group(2)]
    try:
        return datetime.datetime.fromisoformat(value.strip()).timestamp()
    except ValueError:
        raise ValueError(f"since must be a Unix time, an ISO date-time such as "
                         f"2026-11-23T14:00, or a time ago such as 90s, 15m, 2h or 3d; "
                         f"found {value[:40]!r}") from None


class HistoryFind(Action):
    """Find executions and operations, newest first."""

    access = READ
    action: Literal["find"] = "find"

    query: Annotated[HistoryQuery | None, Field(description=(
        "Words in the code, value, output or error (entries with all of them first)"))] = None
    instance: Annotated[Selector, Field(
        description='Only this room or group ("*": all)')] = "*"
    errors_only: Annotated[Flag, Field(description="Only executions that failed")] = False
    since: Annotated[Annotated[str, Strict(), Field(max_length=40)]
                     | Annotated[float, Strict(), Field(allow_inf_nan=False)] | None,
                     Field(description=(
                         "A time ago (90s, 15m, 2h, 3d), a local ISO date-time "
                         "(2026-11-23T14:00) or a Unix time")),
                     AfterValidator(lambda v: None if v is None else _since(v))] = None
    limit: Annotated[int, Field(ge=1, le=100, strict=True,
                                description="How many, newest first")] = 20
    full: Annotated[Flag, Field(description="Whole code and output of each, however long "
                                "(by default: what fits the answer's size budget)")] = False


class HistoryEntry(BaseModel):
    """One execution as it was recorded."""

    id: int
    time: float = Field(description="Unix time the code was sent")
    when: str = Field(description="the same, as local date and time")
    instance: str
    code: str
    ok: bool
    value: str
    posted: str = Field(description="what it posted (its end, when long)")
    error: str | None
    duration_ms: float

    @classmethod
    def of(cls, entry: Entry) -> HistoryEntry:
        """The API form of a stored entry."""
        posted = entry.posted
        if len(posted) > MAX_POSTED:
            posted = "[...] " + posted[-MAX_POSTED:]
        when = datetime.datetime.fromtimestamp(entry.time).isoformat(sep=" ",
                                                                     timespec="seconds")
        return cls(id=entry.id, time=entry.time, when=when, instance=entry.room,
                   code=entry.code, ok=entry.error is None, value=entry.value, posted=posted,
                   error=entry.error, duration_ms=round(entry.duration_ms, 3))


class HistoryRerun(Action):
    """Run an entry again: its code (on its room, or on `instance`), or the operation
    it records, with the same arguments."""

    access = CODE
    action: Literal["rerun"]
    id: Annotated[int, Field(strict=True, ge=1, description="The entry's id (#N)")]
    instance: Annotated[Selector | None, Field(
        description="Run its code (or operation) on this room instead")] = None
    timeout_s: ExecuteTimeout = 10.0


HistoryArgs = Annotated[HistoryFind | HistoryRerun, Field(discriminator="action")]


class HistoryOutput(Result):
    """Executions, newest first; or what a re-run answered."""

    entries: list[HistoryEntry] = Field(default_factory=list)
    rerun: str | None = Field(None, description="the operation re-run (execute for code)")
    answer: dict[str, Any] | None = Field(None, description="the re-run's own answer")
    answer_text: str = ""
    failed: str | None = None

    def failure(self) -> str | None:
        return self.failed
    more: int = Field(0, description="older matching entries left out (the size budget): "
                      "full=true returns them")

    def text(self) -> str:
        if self.rerun is not None:
            return self.answer_text
        if not self.entries:
            return "no executions found"
        blocks = []
        if self.more:
            blocks.append(f"[{budget.more(self.more, 'older entries', 'history(full=true)')}]")
        for e in self.entries:
            head = (f"#{e.id}  {e.when}  {e.instance}  {e.duration_ms:.1f} ms  "
                    f"{'ok' if e.ok else 'error'}")
            body = ["  " + line for line in e.code.rstrip().splitlines()]
            body.append(f"  -> {e.value}" if e.ok else "  " + (e.error or "").splitlines()[0])
            blocks.append("\n".join([head, *body]))
        return "\n\n".join(blocks)


def _newest_first(merged: Answer, answers: Sequence[tuple[Host, Answer]], args: Any) -> Answer:
    """Every host's executions, newest first, the ``limit`` newest."""
    entries = sorted(merged.get("entries") or [], key=lambda e: -e["time"])
    return {**merged, "entries": entries[:getattr(args, "limit", len(entries))]}


@operation(cli=CliForm("history", ("query",)), spread=Spread(merge=_newest_first),
           patience=Patience(argument="timeout_s"))
def history(orch: Orchestra, args: HistoryArgs) -> HistoryOutput:
    """The code run before and the calls that changed something (as @NAME {arguments}),
    newest first, kept across restarts: find what made a sound an hour ago, or what failed;
    run one again."""
    if isinstance(args, HistoryRerun):
        return _rerun(orch, args)
    names = None if args.instance == "*" else orch.rooms.resolve(args.instance)
    since = args.since if isinstance(args.since, float | int) else None
    entries = orch.knowledge.history().search(args.query, names, args.errors_only, since,
                                              args.limit)
    found = [HistoryEntry.of(e) for e in entries]
    if args.full:
        return HistoryOutput(entries=found)
    found = [e.model_copy(update={
        "code": budget.cut(e.code, budget.TEXT // 6, "history(full=true)"),
        "posted": budget.cut(e.posted, budget.TEXT // 12, "history(full=true)", keep_end=True),
        "value": budget.cut(e.value, budget.TEXT // 12, "history(full=true)")})
        for e in found]
    kept = budget.first(found, lambda e: len(e.code) + len(e.posted) + len(e.value)
                        + len(e.error or ""))
    return HistoryOutput(entries=kept, more=len(found) - len(kept))


def _rerun(orch: Orchestra, args: HistoryRerun) -> HistoryOutput:
    """Run history entry ``args.id`` again: its code, or the operation it records."""
    from scorch.api import journaled
    from scorch.api.ops import load_all
    from scorch.api.ops.code import run_code

    entry = orch.knowledge.history().entry(args.id)
    if entry is None:
        raise InvalidRequest(f"history has no entry #{args.id} (see history)")
    if entry.code.startswith(CALLED):
        name, _, given = entry.code[len(CALLED):].partition(" ")
        op = load_all().get(name)
        if op is None:
            raise InvalidRequest(f"entry #{args.id} records {name!r}, which this scorch lacks")
        raw = json.loads(given or "{}")
        if args.instance is not None and "instance" in op.fields:
            raw["instance"] = args.instance
        answer = journaled.perform(orch, op, op.parse(raw))  # journaled, as every call
        return HistoryOutput(rerun=name, answer=answer.model_dump(mode="json"),
                             answer_text=answer.text(), failed=answer.failure())
    out = run_code(orch, args.instance or entry.room, entry.code, args.timeout_s)
    return HistoryOutput(rerun="execute", answer=out.model_dump(mode="json"),
                         answer_text=out.text(), failed=out.failure())


#: How the history holds an operation (not code): ``@NAME {arguments as JSON}``.
CALLED = "@"
