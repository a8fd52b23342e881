"""Parse SCDoc ``.schelp`` help files into typed records, never raising on a bad file.

Tokens come from :mod:`scorch.knowledge.schelp_lexer`; this module walks them
once, sending prose, code and arguments to whatever section or method is open.
Where SCDoc would reject the whole file, this parser keeps what it could read
and lists the problem in ``HelpDoc.problems``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from scorch.knowledge.schelp_lexer import (
    Token,
    render_inline,
    scan,
    strip_inline,
)

#: Help directory -> document kind; a file elsewhere is "other".
KINDS = {"Classes": "class", "Guides": "guide", "Reference": "reference",
         "Tutorials": "tutorial", "Overviews": "overview"}

_METHOD_NAME = re.compile(r"[a-z][a-zA-Z0-9_]*|[-<>@|&%*+/!?=]+")
_SPACES = re.compile(r"[ \t]+")


@dataclass(frozen=True)
class Argument:
    """One documented argument of a method."""

    name: str
    """As written after ``argument::``; empty when the file leaves it to its position."""
    doc: str


@dataclass(frozen=True)
class MethodDoc:
    """One ``method::`` entry, which may document several methods with the same arguments."""

    kind: str
    """``class``, ``instance``, or ``generic`` outside classmethods::/instancemethods::."""
    names: tuple[str, ...]
    arguments: tuple[Argument, ...]
    argstring: str
    """The ``(a, b = 1)`` written after the names (generic methods only), else empty."""
    summary: str
    returns: str
    discussion: str
    examples: tuple[str, ...]


@dataclass(frozen=True)
class CopiedMethod:
    """A ``copymethod::`` line: this document shows another class's method doc."""

    kind: str
    source_class: str
    name: str


@dataclass(frozen=True)
class HelpDoc:
    """What one help file says, as plain text with the markup stripped."""

    key: str
    """The path under HelpSource without the extension, e.g. ``Classes/SinOsc``."""
    name: str
    """The class name for class docs, else the file's stem (``Tour_of_UGens``)."""
    kind: str
    title: str
    summary: str
    categories: tuple[str, ...]
    related: tuple[str, ...]
    """Document keys such as ``Classes/Osc``."""
    description: str
    methods: tuple[MethodDoc, ...]
    copied: tuple[CopiedMethod, ...]
    private: tuple[str, ...]
    keywords: tuple[str, ...]
    examples: tuple[str, ...]
    """Code blocks of the examples:: section."""
    code: tuple[str, ...]
    """Every code block in the file, examples included."""
    text: str
    """All prose of the file (no code blocks), for full-text search."""
    extends: str
    """For a ``NAME.ext.schelp`` file, the key of the document it adds to, else empty."""
    problems: tuple[str, ...]


def read_schelp(path: Path, help_dir: Path | None = None) -> HelpDoc:
    """Read and parse one help file; an unreadable file gives a record with the problem."""
    key = _key(path, help_dir)
    try:
        raw = path.read_bytes()
    except OSError as err:
        return parse_schelp("", key, problems=[f"cannot read {path}: {err.strerror}"])
    try:
        text = raw.decode("utf-8")
        problems: list[str] = []
    except UnicodeDecodeError as err:
        text = raw.decode("utf-8", errors="replace")
        problems = [f"not valid UTF-8 at byte {err.start}; bad bytes replaced"]
    return parse_schelp(text, key, problems=problems)


def iter_help_files(help_dir: Path) -> Iterator[Path]:
    """Yield every ``.schelp`` file under ``help_dir``, sorted."""
    yield from sorted(help_dir.rglob("*.schelp"))


def parse_schelp(text: str, key: str = "", *, problems: list[str] | None = None) -> HelpDoc:
    """Parse the text of a help file; ``key`` (``Classes/SinOsc``) names it and sets its kind."""
    parser = _Parser(key, list(problems or []))
    try:
        parser.feed(scan(text.replace("\r", ""), parser.problems))
    except Exception as err:  # a parser bug must not lose the whole file
        parser.problems.append(f"parser stopped early: {type(err).__name__}: {err}")
    return parser.result()

def _key(path: Path, help_dir: Path | None) -> str:
    if help_dir is not None:
        try:
            return path.relative_to(help_dir).with_suffix("").as_posix()
        except ValueError:
            pass
    return path.with_suffix("").name


@dataclass
class _Sink:
    parts: list[str] = field(default_factory=list)

    def text(self) -> str:
        joined = _SPACES.sub(" ", "".join(self.parts))
        joined = re.sub(r" *\n *", "\n", joined)
        return re.sub(r"\n{3,}", "\n\n", joined).strip()


@dataclass
class _Method:
    kind: str
    names: tuple[str, ...]
    argstring: str
    body: _Sink = field(default_factory=_Sink)
    arguments: list[tuple[str, _Sink]] = field(default_factory=list)
    returns: _Sink = field(default_factory=_Sink)
    discussion: _Sink = field(default_factory=_Sink)
    examples: list[str] = field(default_factory=list)
    part: str = "body"

    def sink(self) -> _Sink:
        if self.part == "argument" and self.arguments:
            return self.arguments[-1][1]
        return {"returns": self.returns, "discussion": self.discussion}.get(self.part, self.body)

    def freeze(self) -> MethodDoc:
        return MethodDoc(
            kind=self.kind, names=self.names, argstring=self.argstring,
            arguments=tuple(Argument(name, sink.text()) for name, sink in self.arguments),
            summary=self.body.text(), returns=self.returns.text(),
            discussion=self.discussion.text(), examples=tuple(self.examples),
        )


_PROSE = {"nl": " ", "para": "\n\n", "hashes": "\n- ", "bars": " | "}
_OPEN_TEXT = {"note": "\nNote: ", "warning": "\nWarning: ", "footnote": " (footnote: "}


class _Parser:
    """Walk the tokens once, sending prose and code to whatever section is open."""

    def __init__(self, key: str, problems: list[str]) -> None:
        self.key = key
        self.problems = problems
        self.head: dict[str, str] = {}
        self.section = ""  # the level-1 section: description, classmethods, ...
        self.method: _Method | None = None
        self.methods: list[MethodDoc] = []
        self.containers: list[str] = []
        self.description = _Sink()
        self.all_text = _Sink()
        self.examples: list[str] = []
        self.code: list[str] = []
        self.copied: list[CopiedMethod] = []
        self.private: list[str] = []
        self.keywords: list[str] = []

    def feed(self, tokens: Iterator[Token]) -> None:
        for token in tokens:
            kind = token[0]
            if kind == "text":
                self._prose(token[1])
            elif kind in _PROSE:
                self._prose(_PROSE[kind])
            elif kind == "inline":
                self._prose(render_inline(token[1], token[2]))
            elif kind == "block":
                self._block(token[2])
            elif kind == "open":
                self.containers.append(token[1])
                self._prose(_OPEN_TEXT.get(token[1], "\n"))
            elif kind == "close":
                self._close()
            elif kind == "head":
                self._header(token[1], token[2])
            elif kind == "section":
                self._section(token[1])
            elif kind == "method":
                self._method(token[1])
            else:
                self._line_tag(token[1], token[2])
        self._end_method()
        for tag in self.containers:
            self.problems.append(f"{tag}:: is never closed")

    def result(self) -> HelpDoc:
        self._end_method()
        directory = self.key.split("/", 1)[0] if "/" in self.key else ""
        kind = KINDS.get(directory) or ("class" if "class" in self.head else "other")
        stem = self.key.rsplit("/", 1)[-1]
        # Classes/String.ext.schelp adds methods to Classes/String: a body without a header.
        extends = self.key[: -len(".ext")] if self.key.endswith(".ext") else ""
        stem = stem.removesuffix(".ext")
        class_name = self.head.get("class") or (self.head.get("title") if kind == "class" else "")
        name = (class_name or stem).strip() if kind == "class" else stem
        if kind == "class" and stem and name != stem:
            self.problems.append(f"the class is named {name!r} but the file is {stem}.schelp")
        if not self.head and not extends:
            self.problems.append("no header (class::, title:: or summary::)")
        return HelpDoc(
            key=self.key, name=name, kind=kind,
            title=strip_inline(self.head.get("title") or self.head.get("class") or stem),
            summary=strip_inline(self.head.get("summary", ""), self.problems),
            categories=_commalist(self.head.get("categories", "")),
            related=_commalist(self.head.get("related", "")),
            description=self.description.text(), methods=tuple(self.methods),
            copied=tuple(self.copied), private=tuple(self.private),
            keywords=tuple(self.keywords), examples=tuple(self.examples), code=tuple(self.code),
            text=self.all_text.text(), extends=extends, problems=tuple(self.problems),
        )

    def _prose(self, text: str) -> None:
        self.all_text.parts.append(text)
        if self.method is not None:
            self.method.sink().parts.append(text)
        elif self.section == "description":
            self.description.parts.append(text)

    def _block(self, code: str) -> None:
        self.code.append(code)
        if self.method is not None:
            self.method.examples.append(code)
        elif self.section == "examples":
            self.examples.append(code)

    def _close(self) -> None:
        if self.containers:
            tag = self.containers.pop()
            self._prose(")" if tag == "footnote" else "\n")
        else:
            self.problems.append("an end-tag :: closes nothing")

    def _header(self, tag: str, value: str) -> None:
        if self.section or self.methods or self.method:
            self.problems.append(f"header tag {tag}:: after the body started")
        if tag in self.head:
            self.problems.append(f"{tag}:: given twice; the last one is kept")
        self.head[tag] = value

    def _structure(self, what: str) -> None:
        if self.containers:
            self.problems.append(f"{what} inside an open {self.containers[-1]}:: (closed here)")
            self.containers.clear()

    def _section(self, tag: str) -> None:
        self._structure(f"{tag}::")
        if tag in ("returns", "discussion"):
            if self.method is None:
                self.problems.append(f"{tag}:: outside a method")
            else:
                self.method.part = tag
            self._prose("\n\n")
            return
        self._end_method()
        self.section = tag
        self._prose("\n\n")

    def _method(self, rest: str) -> None:
        self._structure("method::")
        self._end_method()
        argstring = ""
        if "(" in rest:
            rest, _, tail = rest.partition("(")
            argstring = "(" + tail.strip()
            if not argstring.endswith(")"):
                self.problems.append(f"method:: {rest.strip()}: unclosed argument list")
        names = tuple(n.strip() for n in rest.split(",") if n.strip())
        bad = [n for n in names if not _METHOD_NAME.fullmatch(n)]
        if bad or not names:
            self.problems.append(f"method:: with a bad name list {rest.strip()!r}")
        kind = {"classmethods": "class", "instancemethods": "instance"}.get(self.section, "generic")
        self.all_text.parts.append("\n\n" + ", ".join(names) + " ")
        self.method = _Method(kind=kind, names=names, argstring=argstring)

    def _end_method(self) -> None:
        if self.method is not None:
            self.methods.append(self.method.freeze())
            self.method = None

    def _line_tag(self, tag: str, value: str) -> None:
        plain = strip_inline(value)
        if tag in ("section", "subsection"):
            self._structure(f"{tag}::")
            self._end_method()
            if tag == "section":
                self.section = "section"
            self._prose(f"\n\n{plain}\n\n")
        elif tag == "argument":
            if self.method is None:
                self.problems.append(f"argument:: {plain} outside a method")
                self._prose(plain + " ")
                return
            self.method.arguments.append((plain, _Sink()))
            self.method.part = "argument"
            self.all_text.parts.append(plain + " ")
        elif tag == "private":
            self.private.extend(_commalist(value))
        elif tag == "keyword":
            self.keywords.extend(_commalist(value))
            self.all_text.parts.append(" " + plain + " ")
        elif tag == "copymethod":
            self._copymethod(plain)
        else:  # classtree:: names a class whose subclasses would be drawn here
            self._prose(f" {plain} ")

    def _copymethod(self, value: str) -> None:
        parts = value.split()
        if len(parts) != 2 or parts[1][:1] not in "*-":
            self.problems.append(
                f"copymethod:: {value!r} is not 'Class *method' or 'Class -method'")
            return
        kind = "class" if parts[1][0] == "*" else "instance"
        self.copied.append(CopiedMethod(kind, parts[0], parts[1][1:]))


def _commalist(value: str) -> tuple[str, ...]:
    return tuple(p for p in (strip_inline(x) for x in value.split(",")) if p)
