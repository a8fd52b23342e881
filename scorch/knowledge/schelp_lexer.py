"""Cut SCDoc ``.schelp`` text into tokens, the way SuperCollider's own lexer does.

Follows ``SCDoc/SCDoc.l``: tags are case-insensitive words ending in ``::`` and
are recognised anywhere outside verbatim text; ``code::``/``teletype::``/``math::``
followed by a newline open a block that only a newline, optional blanks and
``::`` close; inline tags (``link::``, ``strong::``, ``code::`` ...) run to the
next ``::``; ``\\::``, ``\\##`` and ``\\||`` are escapes. An unknown ``word::`` is
the word followed by an end-tag, as in SCDoc. Nothing here raises on bad input:
what SCDoc would reject is reported in the ``problems`` list passed in.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

#: Tags whose argument is the rest of their line, in the document header.
HEAD_TAGS = {"class", "title", "summary", "related", "categories", "redirect"}
#: Tags whose argument is the rest of their line, in the body.
LINE_TAGS = {"classtree", "keyword", "private", "section", "subsection", "copymethod", "argument"}
#: Tags that start a section or a part of a method; no end-tag.
SECTION_TAGS = {"description", "classmethods", "instancemethods", "examples", "returns",
                "discussion"}
#: Tags that enclose a body up to a matching end-tag; they nest.
OPEN_TAGS = {"list", "tree", "numberedlist", "definitionlist", "table", "footnote", "warning",
             "note"}
#: Tags whose verbatim text runs to the next end-tag.
INLINE_TAGS = {"link", "anchor", "image", "soft", "strong", "emphasis", "code", "teletype", "math"}


_BLOCK = re.compile(r"[ \t]*(code|teletype|math)::[ \t]*\n+", re.IGNORECASE)
_BLOCK_END = re.compile(r"\n[ \t\r\n]*::")
_BLOCK_ESCAPED_END = re.compile(r"\n([ \t]*)\\::")
_TAG = re.compile(r"([ \t]*)([A-Za-z]+)::")
_INLINE_END = re.compile(r"\\::|[ \t\n]*::")
_CLOSE = re.compile(r"[ \t\n]*::")
_BARS = re.compile(r"[ \t]*\|\|[ \t\n]*")
_HASHES = re.compile(r"[ \t]*##[ \t\n]*")
_PARA = re.compile(r"\n([ \t]*\n)+")
_TEXT = re.compile(r"[A-Za-z]+|[ \t]+|[^A-Za-z \t\n:\\#|]+|.", re.DOTALL)
_SPACES = re.compile(r"[ \t]+")

# Tokens: ("text", s), ("nl",), ("para",), ("close",), ("hashes",), ("bars",),
# ("head" | "line", tag, rest of line), ("method", rest of line), ("section", tag),
# ("open", tag), ("inline", tag, content), ("block", tag, content).
Token = tuple[str, ...]


def strip_inline(text: str, problems: list[str] | None = None) -> str:
    """Return ``text`` with inline tags (``link::Classes/SinOsc::``) replaced by their text."""
    out: list[str] = []
    for token in scan(text.replace("\r", ""), [] if problems is None else problems):
        if token[0] == "text":
            out.append(token[1])
        elif token[0] == "inline":
            out.append(render_inline(token[1], token[2]))
    return _SPACES.sub(" ", "".join(out)).strip()


def scan(text: str, problems: list[str]) -> Iterator[Token]:
    """Yield the tokens of ``text`` (without carriage returns), noting problems as they come."""
    pos, end = 0, len(text)
    while pos < end:
        if m := _BLOCK.match(text, pos):
            tag = m.group(1).lower()
            close = _BLOCK_END.search(text, m.end() - 1)
            if close is None:
                problems.append(f"line {_line(text, pos)}: {tag}:: block is never closed")
                body, pos = text[m.end():], end
            else:
                body, pos = text[m.end():close.start()], close.end()
            body = _BLOCK_ESCAPED_END.sub(lambda e: "\n" + e.group(1) + "::", body)
            yield ("block", tag, body.replace("\t", "    "))
        elif m := _TAG.match(text, pos):
            tokens, pos = _scan_tag(text, m, problems)
            yield from tokens
        elif m := _CLOSE.match(text, pos):
            yield ("close",)
            pos = m.end()
        elif text.startswith(("\\::", "\\##", "\\||"), pos):
            yield ("text", text[pos + 1:pos + 3])
            pos += 3
        elif m := _BARS.match(text, pos):
            yield ("bars",)
            pos = m.end()
        elif m := _HASHES.match(text, pos):
            yield ("hashes",)
            pos = m.end()
        elif m := _PARA.match(text, pos):
            yield ("para",)
            pos = m.end()
        elif text[pos] == "\n":
            yield ("nl",)
            pos += 1
        else:
            m = _TEXT.match(text, pos)
            assert m is not None  # the last alternative matches any character
            yield ("text", " " if m.group()[0] in " \t" else m.group())
            pos = m.end()


def _scan_tag(text: str, m: re.Match[str], problems: list[str]) -> tuple[list[Token], int]:
    """Return the tokens for the tag ``m`` matched and where scanning goes on."""
    lead, word = m.group(1), m.group(2)
    tag = word.lower()
    space: list[Token] = [("text", " ")] if lead else []
    if tag in INLINE_TAGS:
        start = m.end()
        if tag in ("soft", "strong", "emphasis"):
            start = _skip_blanks(text, start)
        content, after = _inline_content(text, start)
        if content is None or after is None:
            problems.append(f"line {_line(text, m.start())}: {tag}:: is never closed")
            content, after = text[start:], len(text)
        return [*space, ("inline", tag, content)], after
    if tag in HEAD_TAGS or tag in LINE_TAGS or tag == "method":
        newline = text.find("\n", m.end())
        after = len(text) if newline < 0 else newline
        rest = text[m.end():after]
        if tag == "method":
            return [("method", rest)], after
        return [("head" if tag in HEAD_TAGS else "line", tag, rest.strip())], after
    if tag in SECTION_TAGS:
        return [("section", tag)], _skip_blanks(text, m.end())
    if tag in OPEN_TAGS:
        return [("open", tag)], _skip_blanks(text, m.end())
    # SCDoc lexes an unknown "word::" as the word followed by an end-tag.
    return [*space, ("text", word), ("close",)], m.end()


def _skip_blanks(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n":
        pos += 1
    return pos


def _inline_content(text: str, start: int) -> tuple[str | None, int | None]:
    """Return an inline tag's text (escapes resolved) and where it ends, or None, None."""
    pos = start
    while (close := _INLINE_END.search(text, pos)) is not None:
        if close.group() == "\\::":
            pos = close.end()
            continue
        body = text[start:close.start()].replace("\\::", "::").replace("\t", " ")
        return re.sub(r"\n+", " ", body), close.end()
    return None, None


def render_inline(tag: str, content: str) -> str:
    if tag == "anchor":
        return ""
    if tag == "image":
        parts = content.split("#")
        return parts[1] if len(parts) > 1 else ""
    if tag != "link":
        return content
    path, _, rest = content.partition("#")
    anchor, _, label = rest.partition("#")
    if label:
        return label
    name = path.rstrip("/").rsplit("/", 1)[-1]
    if anchor:
        member = anchor.lstrip("*-.")
        return f"{name}.{member}" if name else member
    return name


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1
