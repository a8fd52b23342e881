"""How large, deep and many-keyed a TOML file scorch reads may be, checked before ``tomllib``.

``tomllib`` recurses once per nested array or inline table and raises
RecursionError (not its own TOMLDecodeError) a few hundred levels down, so a
config or session file nested that deep would end the reader with an error
that says nothing of the file. And it is pure Python: some 20 µs a key, so a
16 MB file of short keys would hold the reader for a minute. One linear pass
over the text counts the nesting and the keys and values outside strings and
comments, stopping at the first limit broken, and says on which line.
"""

from __future__ import annotations

import re

#: Bytes a config or session file may hold (a session of many rooms is some 100 KiB).
MAX_BYTES = 16 * 1024 * 1024
#: Arrays and inline tables nested in one another (scorch's own files use 3).
MAX_DEPTH = 32
#: Keys, array items and tables together (``=``, ``,``, ``[`` and ``{``): a session keeps
#: about two a param, so 16 rooms of 1,024 named nodes (scsynth's most) with 7 params
#: each fit; tomllib reads that many in 2 to 5 s.
MAX_ITEMS = 250_000

#: Strings (multi-line first, escapes skipped), comments, brackets, braces, ``=`` and ``,``.
_TOKENS = re.compile(r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\''
                     r'|#[^\n]*|[\[\]{}=,]', re.DOTALL)


class TooDeep(ValueError):
    """A TOML text larger, more nested or with more keys than scorch reads; says where."""


def check_toml(text: str, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH,
               max_items: int = MAX_ITEMS) -> None:
    """Raise TooDeep when ``text`` holds more than ``max_bytes``, nests deeper than
    ``max_depth`` or holds more than ``max_items`` keys, items and tables; it bounds,
    it does not validate (tomllib does that next)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise TooDeep(f"{size} bytes: more than the {max_bytes} a file may hold")
    depth = items = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if len(token) != 1 or token == "#":
            continue  # a string or a comment
        if token in "]}":
            depth = max(depth - 1, 0)
            continue
        items += 1
        if items > max_items:
            raise TooDeep(f"line {_line(text, match.start())}: more than {max_items} keys, "
                          "items and tables")
        if token in "[{":
            depth += 1
            if depth > max_depth:
                raise TooDeep(f"line {_line(text, match.start())}: nested more than "
                              f"{max_depth} levels deep")


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1
