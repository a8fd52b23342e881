"""Regular expressions a person sends, matched in linear time (RE2): none can stall scorch.

Python's ``re`` backtracks: ``^(a+)+$`` against a long line takes seconds or
years. RE2 guarantees time linear in the text, at the price of a few features
(backreferences, lookaround, possessive quantifiers); a pattern that uses them
is refused with a message that says what to use instead.
"""

from __future__ import annotations

from typing import Any

from scorch.errors import InvalidRequest

#: Memory RE2 may use for one compiled pattern.
MAX_MEMORY = 8 << 20


def compile_pattern(pattern: str) -> Any:
    """The pattern compiled by RE2; InvalidRequest says why one cannot be."""
    import re2  # google-re2: loaded by the first pattern, not at start-up

    options = re2.Options()
    options.log_errors = False  # the error is the caller's, said in the message below
    options.max_mem = MAX_MEMORY
    try:
        return re2.compile(pattern, options)
    except re2.error as err:
        why = err.args[0].decode(errors="replace") if err.args and isinstance(
            err.args[0], bytes) else str(err)
        hint = ""
        if any(token in why for token in ("perl operator", "invalid escape", "repetition op")):
            hint = ("; patterns run on RE2, which has no backreferences (\\1), lookaround "
                    "((?=...), (?!...), (?<=...)) or possessive quantifiers (a++): match a "
                    "simpler pattern, or filter the lines yourself")
        raise InvalidRequest(f"pattern {pattern[:80]!r} cannot be used: {why}{hint}") from None
