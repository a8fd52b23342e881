"""Which rooms ``scorch run`` starts an sclang for before it checks its config (issue 29)."""

from __future__ import annotations

from pathlib import Path

from scorch.config.locate import room_names

CONFIG = """
[hosts.stage]
address = "10.0.0.2"
[instances.lobby]
[instances.attic]
port = 57130
[instances.hall]
host = "stage"
"""


def test_the_rooms_of_the_host_asked_for_are_named_in_file_order(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    assert room_names(path, None) == ["lobby", "attic"]
    assert room_names(path, "stage") == ["hall"]
    assert room_names(path, "elsewhere") == []


def test_a_file_that_does_not_read_names_no_room_and_raises_nothing(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    assert room_names(path, None) == []  # missing: the real load says so
    for text in ("[instances.lobby\n", 'instances = "lobby"\n', "[instances]\nlobby = 3\n"):
        path.write_text(text)
        assert room_names(path, None) == [], text
    path.write_bytes(b"\xff\xfe[instances.lobby]\n")
    assert room_names(path, None) == []
    path.write_text("[instances.lobby]\n" + "# padding\n" * 200_000)  # over 1 MiB: not read
    assert room_names(path, None) == []
