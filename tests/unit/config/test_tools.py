"""``[mcp] tools`` (scorch/config/tools.py): the choice as written, checked, and its key."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorch.config.installation import parse_config
from scorch.config.tools import ALL, PROFILES, chosen, from_option, key, problems, requested
from scorch.errors import ConfigError

KNOWN = ["play", "set", "execute", "docs", "notes"]


@pytest.mark.parametrize(("text", "choice"), [
    ("", ALL), ("all", ALL), (" play ", "play"), ("code", "code"),
    ("execute,docs", ["execute", "docs"]), ("execute, docs,", ["execute", "docs"]),
    ("plya", ["plya"]),  # one name that is no profile: a tool's, checked as such
])
def test_the_option_gives_all_a_profile_or_names(text: str, choice: object) -> None:
    assert from_option(text) == choice


@pytest.mark.parametrize(("content", "choice"), [
    ("[instances.a]\n", ALL),
    ('[mcp]\ntools = "play"\n', "play"),
    ('mcp = { http = "a#b", tools = ["execute"] }\n', ["execute"]),
    ('[mcp]\ntools = ["execute", "docs"]\n', ["execute", "docs"]),
    ('[mcp]\n# tools = "play"\n', ALL),  # a comment is not read
    ("[mcp\nbroken", ALL),  # the server says what is wrong with the file
])
def test_the_file_says_the_choice_unchecked(tmp_path: Path, content: str, choice: object
                                            ) -> None:
    path = tmp_path / "config.toml"
    path.write_text(content)
    assert requested(path) == choice
    assert requested(path, "code") == "code"  # --tools wins
    assert requested(tmp_path / "missing.toml") == ALL


def test_each_choice_has_its_own_key() -> None:
    keys = [key(ALL), *(key(name) for name in PROFILES), key(["execute"]), key(["docs"]),
            key("plya")]
    assert keys[0] == "" and keys[1:4] == list(PROFILES)
    assert len(set(keys)) == len(keys)
    assert key(["execute"]) == key(["execute"])


@pytest.mark.parametrize(("choice", "says"), [
    ("plya", "no tool profile 'plya'; did you mean 'play'? give 'all', one of 'play', "
             "'installation', 'code', or a list of tool names"),
    ([], "an empty list of tools: give at least one, or 'all'"),
    (["docs", "docs"], "tools named twice: docs"),
    (["docs", "dcos", "zzz"], "no tool 'dcos' (did you mean 'docs'?), 'zzz'; the tools are: "
                              "play, set, execute, docs, notes"),
    (3, "expected 'all', a profile's name or a list of tool names, found 3"),
])
def test_a_wrong_choice_says_what_and_what_there_is(choice: object, says: str) -> None:
    assert problems(choice, KNOWN) == says
    assert problems(["dcos"]) is None  # names are checked only with the tools given


def test_a_choice_lists_the_tools_in_their_order() -> None:
    assert chosen(ALL, KNOWN) == KNOWN
    assert chosen(["docs", "play"], KNOWN) == ["play", "docs"]


def test_the_config_refuses_a_wrong_shape_where_it_is() -> None:
    assert parse_config('[instances.a]\n[mcp]\ntools = "code"\n').mcp.tools == "code"
    assert parse_config("[instances.a]\n").mcp.tools == ALL
    with pytest.raises(ConfigError, match=r"config.toml:3: mcp.tools: no tool profile 'plya'"):
        parse_config('[instances.a]\n[mcp]\ntools = "plya"\n')
