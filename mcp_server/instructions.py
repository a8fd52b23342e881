"""What the server tells Claude about working with scorch, sent once at initialisation.

Made for the tools the server lists (:func:`instructions`): the guide is a list of
paragraphs, each a list of clauses, and a clause names its tools in backquotes
(`` `pattern` ``) and says which in :data:`Clause`'s ``tools``. A clause is said when
every one of its tools is listed; so a profile's instructions name only its tools, and
a tool that no operation makes any more is never named (the tests hold every backquoted
word of a clause to its ``tools`` and to the operations).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import NamedTuple

from scorch.values import NAME_RULE


class Clause(NamedTuple):
    """One sentence of the guide, and the tools it names."""

    tools: tuple[str, ...]
    """The tools it names (each in backquotes in the text): it is said only with all of them."""
    text: str


def _(text: str, *tools: str) -> Clause:
    return Clause(tools, text)


#: The guide, paragraph by paragraph (the first without a dash); each clause stands alone.
GUIDE: tuple[tuple[Clause, ...], ...] = (
    (_('scorch runs named SuperCollider rooms, each an scsynth audio server with its own '
       'sclang. Name a room, a group of rooms, or "*" for all.'),
     # the schemas leave each name's pattern out (mcp_server.schemas.UNSAID): said here once
     _(f"A name you give (a node, a scene...) is {NAME_RULE}.")),
    (_("Start with `list_instances`: names, groups and states (only READY rooms take code).",
       "list_instances"),
     _("`status` details a room and its named nodes.", "status")),
    (_("`synthdefs` lists the library's sounds with each param's range and units.",
       "synthdefs"),
     _("`play` starts a SynthDef; give it a node name for what you will change later: a named "
       "node survives crashes with its last values.", "play"),
     _("`set` changes a named node's params while it plays.", "set"),
     _("`release` fades a named node out.", "release"),
     _("`buffer` loads sound files for the sampler SynthDefs.", "buffer")),
    (_("For patterns and proxies (Pdef, Pbindef, Tdef, Ndef) use `pattern`: define one, change "
       "its source or one key on the next bar, mute, solo, fade or stop it.", "pattern"),
     _("`playing` lists what plays in each room.", "playing")),
    (_("`undo` takes back what the tools changed (named nodes, patterns, buffers, scenes, "
       "tempo, MIDI routes), per room or for all; a checkpoint keeps a state to go back to.",
       "undo"),
     _("Code run by `execute` is not journaled: for what `play`, `set` and `pattern` do, use "
       "them, so that `undo` can take it back.", "execute", "play", "set", "pattern", "undo")),
    (_("`execute` runs SuperCollider code for the rest (routines, buses, effects, new "
       "SynthDefs): the variable s is the room's server; wrap several statements in ( ... ).",
       "execute"),
     _("`console` and `wait_for` read what code posts later.", "console", "wait_for"),
     _("Before code with a class you are not sure of, ask `docs` for its real argument "
       "names.", "docs"),
     _("`history` finds code run before.", "history"),
     _("`snippet` has starters to show or run.", "snippet")),
    (_("`notes` gives what the MIDI inputs and the patterns played, on the bar|beat grid, as "
       "text or a .mid.", "notes"),
     _("`partner` continues a phrase or answers a player live, in their style.", "partner"),
     _("Use `notes` and `partner` rather than code with `execute` that reads MIDI.", "notes",
       "partner", "execute"),
     _("`midi` lists the ports and maps controllers and keys.", "midi"),
     _("`tempo` reads and sets the beat every room plays on.", "tempo")),
    (_("`listen` hears a room: a picture and numbers (pitch, loudness, onsets).", "listen"),
     _("`record` keeps a room's sound in a file.", "record"),
     _("`render` plays a SynthDef or a Score offline.", "render")),
    (_("`session` saves and loads the whole state.", "session"),
     _("`scene` keeps named nodes' params to recall or morph toward.", "scene"),
     _("`stop` silences rooms like Cmd-Period.", "stop"),
     _("`gain` fades a room's master gain (quiet hours), under its safety limiter.", "gain")),
    (_("`schedule` says what the config's calendar does at a time or next.", "schedule"),
     _("`cue` runs the cue list: GO fires a cue's calls in every room at once.", "cue")),
    (_("To start things together in several rooms, give `play`, `set` or `release` the same "
       "at (a Unix time) or delay: scsynth does it then, sample-accurately.", "play", "set",
       "release"),),
    (_("Long answers are cut to a budget and say how many more: ask again with full=true."),),
    (_("A RESTARTING room comes back by itself: wait and retry."),
     _("A FAILED one used up its restarts: read `events` and `console`, fix the cause, then "
       "`instance` boot.", "events", "console", "instance"),
     _("`doctor` says what the machine lacks and the command that fixes it.", "doctor")),
)


def instructions(listed: Collection[str]) -> str:
    """The guide for a server that lists the tools ``listed``: each clause whose tools are
    all listed, each paragraph that keeps one."""
    paragraphs = []
    for index, paragraph in enumerate(GUIDE):
        kept = [clause.text for clause in paragraph
                if all(tool in listed for tool in clause.tools)]
        if kept:
            paragraphs.append(" ".join(kept) if index == 0 else "- " + " ".join(kept))
    return "\n".join(paragraphs) + "\n"
