"""How deep and how large a TOML file scorch reads may be, checked before ``tomllib`` sees it.

``tomllib`` recurses once per nested array or inline table and raises
RecursionError (not its own TOMLDecodeError) a few hundred levels down, so a
config or session file nested that deep would end the reader with an error
that says nothing of the file. One linear pass over the text counts the
nesting outside strings and comments, stopping at the first limit broken.
"""

from __future__ import annotations

import re

#: Bytes a config or session file may hold (a session of many rooms is some 100 KiB).
MAX_BYTES = 16 * 1024 * 1024
#: Arrays and inline tables nested in one another (scorch's own files use 3).
MAX_DEPTH = 32

#: Strings (multi-line first, escapes skipped), comments, brackets and braces.
_TOKENS = re.compile(r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\''
                     r'|#[^\n]*|[\[\]{}]', re.DOTALL)


class TooDeep(ValueError):
    """A TOML text larger or more nested than scorch reads; the message says where."""


def check_toml(text: str, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> None:
    """Raise TooDeep when ``text`` holds more than ``max_bytes`` or nests deeper than
    ``max_depth``; it bounds, it does not validate (tomllib does that next)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise TooDeep(f"{size} bytes: more than the {max_bytes} a file may hold")
    depth = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > max_depth:
                line = text.count("\n", 0, match.start()) + 1
                raise TooDeep(f"line {line}: nested more than {max_depth} levels deep")
        elif token in "]}":
            depth = max(depth - 1, 0)
