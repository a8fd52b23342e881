"""Turn any text a person or a model typed into a safe SQLite FTS5 MATCH expression.

User text is never handed to FTS5 as query syntax: ``AND``, ``NEAR``, ``*``,
quotes, brackets and column filters would either change the meaning or raise
``sqlite3.OperationalError``. Instead the text is cut into words here, and each
word becomes a double-quoted FTS5 string, which FTS5 reads as plain text (a
phrase of whatever its tokenizer makes of it). Quoted words cannot contain a
double quote, because a word here is a run of letters and digits.
"""

from __future__ import annotations

import re

#: Words kept from one query; the rest is ignored (a 10,000-character paste stays cheap).
MAX_TERMS = 16

#: Longer words are cut: no real word is longer, and FTS5 gains nothing from them.
MAX_TERM_LENGTH = 48

# Letters and digits of any script; "_" splits, as it does in FTS5's unicode61 tokenizer.
_WORD = re.compile(r"[^\W_]+")

# camelCase and digit boundaries in names: SinOsc -> Sin Osc, LFSaw -> LF Saw, Pan2 -> Pan 2.
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def terms(text: str | None) -> list[str]:
    """Return the distinct lower-case words of ``text``, in order, at most MAX_TERMS."""
    if not text:
        return []
    seen: dict[str, None] = {}
    for match in _WORD.finditer(text):
        word = match.group().lower()[:MAX_TERM_LENGTH]
        seen.setdefault(word, None)
        if len(seen) >= MAX_TERMS:
            break
    return list(seen)


def match_all(words: list[str]) -> str | None:
    """Return a MATCH expression that needs every word, or None when there are none."""
    return " AND ".join(_quote(w) for w in words) or None


def match_any(words: list[str]) -> str | None:
    """Return a MATCH expression that needs at least one word, or None when there are none."""
    return " OR ".join(_quote(w) for w in words) or None


def name_words(name: str) -> str:
    """Return ``name`` followed by its camelCase parts, so "free verb" finds FreeVerb."""
    parts = _CAMEL.findall(name)
    if len(parts) <= 1:
        return name
    return f"{name} {' '.join(parts)}"


def _quote(word: str) -> str:
    # A word from terms() has no double quote; doubling is the FTS5 escape regardless.
    return '"' + word.replace('"', '""') + '"'
