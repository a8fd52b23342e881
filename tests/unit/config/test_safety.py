"""[safety] and [instances.NAME.safety]: the keys, the room over the installation, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorch.api.firing import check_calls
from scorch.api.ops import load_all
from scorch.config.installation import parse_config
from scorch.config.safety import RoomSafety, SafetyConfig
from scorch.errors import ConfigError


def test_every_room_has_a_stage_at_minus_1_dbfs_unless_told() -> None:
    config = parse_config("[instances.a]\n")
    assert config.instances["a"].safety.over(config.safety) == SafetyConfig(
        enabled=True, ceiling_dbfs=-1.0, max_lufs=None)


def test_a_rooms_own_keys_win_and_max_lufs_0_lifts_the_installations_limit() -> None:
    config = parse_config("[safety]\nceiling_dbfs = -3\nmax_lufs = -20\n"
                          "[instances.a]\n[instances.b.safety]\nmax_lufs = 0\n"
                          "[instances.c.safety]\nenabled = false\nceiling_dbfs = -6\n")
    rooms = {name: inst.safety.over(config.safety) for name, inst in config.instances.items()}
    assert rooms["a"] == SafetyConfig(enabled=True, ceiling_dbfs=-3.0, max_lufs=-20.0)
    assert rooms["b"] == SafetyConfig(enabled=True, ceiling_dbfs=-3.0, max_lufs=None)
    assert rooms["c"] == SafetyConfig(enabled=False, ceiling_dbfs=-6.0, max_lufs=-20.0)
    assert RoomSafety().over(SafetyConfig()) == SafetyConfig()


@pytest.mark.parametrize(("text", "where"), [
    ("[safety]\nceiling_dbfs = 3\n[instances.a]\n", "safety.ceiling_dbfs"),
    ("[instances.a.safety]\nmax_lufs = -100\n", "instances.a.safety.max_lufs"),
    ("[instances.a.safety]\nceilling_dbfs = -1\n", "instances.a.safety.ceilling_dbfs"),
    ("[safety]\nenabled = \"maybe\"\n[instances.a]\n", "safety.enabled"),
])
def test_a_bad_safety_line_is_a_located_error(text: str, where: str) -> None:
    with pytest.raises(ConfigError, match=where.replace(".", r"\.")):
        parse_config(text)


def test_quiet_hours_are_a_schedule_of_gain_calls_checked_against_the_operation(
        tmp_path: Path) -> None:
    body = ('[instances.lobby]\n[[schedule]]\nname = "quiet"\nfrom = "12:00"\n'
            'until = "14:00"\ndo = [{ op = "gain", db = -12.0, fade = 30.0 }]\n'
            'after = [{ op = "gain", db = %s, fade = 30.0 }]\n')
    path = tmp_path / "config.toml"
    path.write_text(body % "0.0")
    check_calls(parse_config(path.read_text(), path), load_all)
    path.write_text(body % "40.0")
    with pytest.raises(ConfigError, match=r"config\.toml:7: schedule\.0\.after\.0\.db"):
        check_calls(parse_config(path.read_text(), path), load_all)
