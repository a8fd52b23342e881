"""[watch] and [instances.NAME.watch]: the keys, the room over the installation, errors,
and the calls its actions make, checked against the operations themselves."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorch.api.ops import load_all
from scorch.app.soundwatch import action_call
from scorch.config.installation import parse_config
from scorch.config.watch import RoomWatch, WatchConfig
from scorch.errors import ConfigError


def test_no_room_is_expected_to_sound_unless_told() -> None:
    config = parse_config("[instances.a]\n")
    watch = config.instances["a"].watch.over(config.watch)
    assert watch == WatchConfig()
    assert (watch.expect_sound, watch.silence_s, watch.silence_dbfs, watch.limit_s) == (
        False, 10.0, -60.0, 5.0)
    assert (watch.on_silent, watch.on_limiting, watch.on_nan) == ("alert",) * 3


def test_a_rooms_own_keys_win_over_the_installations() -> None:
    config = parse_config('[watch]\nsilence_s = 30\non_silent = "restart"\n'
                          "[instances.a]\n"
                          '[instances.b.watch]\nexpect_sound = true\nsilence_s = 4\n'
                          'on_limiting = "recall:calm"\n')
    a, b = (config.instances[n].watch.over(config.watch) for n in "ab")
    assert (a.expect_sound, a.silence_s, a.on_silent) == (False, 30.0, "restart")
    assert (b.expect_sound, b.silence_s, b.on_silent, b.on_limiting) == (
        True, 4.0, "restart", "recall:calm")
    assert RoomWatch().over(WatchConfig()) == WatchConfig()


@pytest.mark.parametrize(("text", "where"), [
    ('[watch]\non_silent = "panic"\n[instances.a]\n', r"config\.toml:2: watch\.on_silent"),
    ('[instances.a]\n[instances.a.watch]\nsilence_s = 0\n',
     r"config\.toml:3: instances\.a\.watch\.silence_s"),
    ('[instances.a.watch]\nsilence_dbfs = 6\n', r"config\.toml:2: instances\.a\.watch"),
    ('[instances.a.watch]\non_nan = "recall:"\n', r"config\.toml:2: instances\.a\.watch"),
    ('[instances.a.watch]\nexpect_sonud = true\n', r"instances\.a\.watch\.expect_sonud"),
])
def test_a_bad_watch_line_is_an_error_at_its_line(tmp_path: Path, text: str,
                                                   where: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=where):
        parse_config(text, path)


@pytest.mark.parametrize("action", ["restart", "lower_gain", "recall:calm"])
def test_each_action_is_a_call_its_operation_takes(action: str) -> None:
    config = parse_config('[instances.lobby]\n[instances.lobby.watch]\n'
                          f'on_silent = "{action}"\n')
    watch = config.instances["lobby"].watch.over(config.watch)
    call = action_call("lobby", action, watch, gain_db=-3.0)
    parsed = load_all()[call.op].parse(dict(call.args))
    if action == "lower_gain":
        assert (parsed.db, parsed.fade) == (-9.0, 2.0)  # type: ignore[attr-defined]
    assert "lobby" in call.text()


def test_lower_gain_stops_at_the_stages_floor() -> None:
    call = action_call("lobby", "lower_gain", WatchConfig(lower_db=60), gain_db=-100.0)
    assert call.args["db"] == -120.0
    load_all()["gain"].parse(dict(call.args))
