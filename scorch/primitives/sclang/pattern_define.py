"""The sclang code that defines a new pattern or proxy on the room's grid, and plays it.

The ``pattern`` operation's ``define`` action: the user's source is evaluated when the
request runs (so an error in it is the request's, as for a change), then defined, and
played if asked, just before the next beat or bar (``ScorchPatternOps.atGrid``, which
also reports the new proxy with the code that defines it again). A name already
defined is refused in sclang too: what scorch last heard may be a moment old. Pure: no
process, no thread.
"""

from __future__ import annotations

from scorch.primitives.sclang.pattern_ops import proxy_kind, sc_symbol
from scorch.primitives.sclang.patterns import sc_string


def new_pattern_code(kind: str, name: str, source: str, play: bool, when: str) -> str:
    """Define ``kind`` ``name`` by the value of the code ``source`` on the grid ``when``,
    then play it there (``play``); the answer is the seconds until it lands.

    A Pbindef is made from a Pbind's pairs, so that ``set`` changes each key.
    """
    symbol, keeper = sc_symbol(name), proxy_kind(kind)
    if kind == "Pbindef":
        make = f"Pbindef({symbol}, *source.patternpairs)"
        # the code a restore runs: the source in parentheses, where a comment ends its line
        text = f"Pbindef({symbol}, *(\n{source}\n).patternpairs)"
        check = ('if(source.isKindOf(Pbind).not) { Error("a Pbindef is defined by a '
                 'Pbind(...), whose keys become its own; the source is a " ++ '
                 'source.class.name).throw };\n')
    else:
        make = f"{keeper}({symbol}, source)"
        text = f"{keeper}({symbol}, (\n{source}\n))"
        check = ""
    # a Pdef or Tdef starts on the grid itself (atGrid runs just before it), from a new
    # player (one a CmdPeriod caught waiting for its quant never plays again); an Ndef's
    # monitor starts as it is defined
    start = ("" if not play else "proxy.play; " if kind == "Ndef"
             else "proxy.stop; proxy.play(quant: grid); ")
    taken = sc_string(f"{keeper} {name} is defined already: change it with the action "
                      "source, or define another name")
    return (f"{{ |source, grid|\n"
            f"ScorchPatterns.proxy({sc_string(keeper)}, {symbol}) !? {{ |p| "
            f"p.source !? {{ Error({taken}).throw }} }};\n"
            f"{check}"
            f"ScorchPatternOps.atGrid(grid, {{ var proxy = {make}; {start}nil }}, "
            f"{sc_string(text)})\n"
            f"}}.value((\n{source}\n), ScorchPatternOps.grid({sc_string(when)}))")
