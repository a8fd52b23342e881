"""Config validation: every bad config gives a message naming file, line, key and problem."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from scorch.config.installation import DEFAULT_CONFIG, load_config, parse_config
from scorch.config.lines import key_lines
from scorch.errors import ConfigError
from tests.support.skips import only_on

GOOD = """
[audio]
driver = "dummy"

[instances.lobby]
group = "ground"
port = 57110

[instances.gallery]
group = "ground"

[instances.gallery.nodes.pad]
synthdef = "ambient"
params = { freq = 220 }
"""

# (config text, substrings the error message must contain)
BAD = [
    pytest.param('[audio]\ndriver = "dummy"\n', ["instances: this key is required"],
                 id="no-instances"),
    pytest.param("[instances.a]\nprot = 57110\n",
                 ["cfg.toml:2", "instances.a.prot", "unknown key", "did you mean 'port'"],
                 id="typo-port"),
    pytest.param("[audoi]\n[instances.a]\n", ["cfg.toml:1", "audoi", "did you mean 'audio'"],
                 id="typo-table"),
    pytest.param("[instances.a]\nport = 80\n",
                 ["cfg.toml:2", "instances.a.port", "greater than or equal to 1024", "found 80"],
                 id="port-too-low"),
    pytest.param('[instances.a]\nport = "abc"\n',
                 ["cfg.toml:2", "instances.a.port", "valid integer", "found 'abc'"],
                 id="port-not-int"),
    pytest.param("[instances.a]\nport = 57110\n[instances.b]\nport = 57110\n",
                 ["'a' and 'b' both use port 57110"], id="duplicate-port"),
    pytest.param('[audio]\ndriver = "pulse"\n[instances.a]\n',
                 ["cfg.toml:2", "audio.driver", "'auto', 'dummy', 'jack' or 'alsa'",
                  "found 'pulse'"],
                 id="bad-driver"),
    pytest.param('[audio]\ndriver = "alsa"\n[instances.a]\n',
                 ["audio", "needs device = 'hw:N'"], id="alsa-without-device"),
    pytest.param("[audio]\nperiod = 100\n[instances.a]\n",
                 ["cfg.toml:2", "audio.period", "power of two", "found 100"], id="period"),
    pytest.param('[instances."1room"]\n',
                 ["cfg.toml:1", "instances.1room", "a room name must be", "a letter",
                  "found '1room'"], id="bad-room-name"),
    pytest.param('[instances.a]\ngroup = "x y"\n',
                 ["cfg.toml:2", "instances.a.group", "a group name must be", "found 'x y'"],
                 id="bad-group-name"),
    pytest.param('[instances.a.nodes.pad]\nsynthdef = "sine"\nparams = { freq = 1e39 }\n',
                 ["cfg.toml:3", "instances.a.nodes.pad.params.freq", "float32", "found 1e+39"],
                 id="param-beyond-float32"),
    pytest.param('[instances.a.nodes.pad]\nsynthdef = "sine"\nparams = { freq = nan }\n',
                 ["cfg.toml:3", "instances.a.nodes.pad.params.freq", "finite"],
                 id="param-nan"),
    pytest.param('[instances.a]\ngroup = "a"\n', ["group names clash with room names: a"],
                 id="group-clash"),
    pytest.param("[instances.a.nodes.pad]\nparams = { freq = 1 }\n",
                 ["cfg.toml:1", "instances.a.nodes.pad.synthdef", "this key is required"],
                 id="node-without-synthdef"),
    pytest.param('[instances.a.nodes.pad]\nsynthdef = "sine"\nparams = { freq = "high" }\n',
                 ["cfg.toml:3", "instances.a.nodes.pad.params.freq", "valid number"],
                 id="param-not-number"),
    pytest.param("[instances.a]\n[watchdog]\nbackoff_min = 5\nbackoff_max = 1\n",
                 ["cfg.toml:2", "watchdog", "backoff_min (5.0) is larger than backoff_max (1.0)"],
                 id="backoff-bounds"),
    pytest.param("[instances.a]\n[watchdog]\nintervall = 1\n",
                 ["cfg.toml:3", "watchdog.intervall", "did you mean 'interval'"],
                 id="typo-watchdog"),
    pytest.param('[instances.a]\nstartup = "missing.scd"\n',
                 ["cfg.toml:2", "instances.a.startup", "expected an existing .scd file",
                  "missing.scd"], id="startup-missing"),
    pytest.param("[instances.a\n", ["cfg.toml: invalid TOML", "line 1"], id="broken-toml"),
    pytest.param('[instances.a]\n[samples]\npaths = ["no-such-folder"]\n',
                 ["cfg.toml:3", "samples.paths.0", "expected an existing folder",
                  "no-such-folder"], id="samples-folder-missing"),
    pytest.param("[instances.a]\n[samples]\nmax_mb = 0\n",
                 ["cfg.toml:3", "samples.max_mb", "greater than 0"], id="samples-limit"),
    pytest.param("[instances.a]\n[sessions]\nautosave = -1\n",
                 ["cfg.toml:3", "sessions.autosave", "greater than or equal to 0"],
                 id="autosave-negative"),
    pytest.param('[instances.a]\n[[midi.scenes]]\nscene = "calm"\n',
                 ["cfg.toml:2", "midi.scenes.0", "exactly one of program (recall) and cc"],
                 id="scene-without-source"),
    pytest.param('[instances.a]\n[[midi.scenes]]\nscene = "calm"\ncc = 1\nseconds = 2\n',
                 ["cfg.toml:2", "seconds applies to program"], id="scene-cc-seconds"),
    pytest.param('[instances.a]\n[[midi.scenes]]\nscene = "calm"\nprogram = 128\n',
                 ["cfg.toml:4", "midi.scenes.0.program", "less than or equal to 127"],
                 id="scene-program-range"),
    pytest.param('[instances.a]\n[[midi.scenes]]\nscene = "two words"\nprogram = 1\n',
                 ["cfg.toml:3", "midi.scenes.0.scene", "a scene name must be"],
                 id="scene-name"),
    pytest.param('[instances.a]\n[[midi.scenes]]\nscene = "calm"\nprogram = 1\n'
                 'instance = "b"\n',
                 ["cfg.toml:5", "midi.scenes.0.instance", "no room or group named 'b'"],
                 id="scene-instance"),
    pytest.param('[instances.a]\n[[midi.cues]]\nport = "pad"\n',
                 ["cfg.toml:2", "midi.cues.0", "exactly one of control, note, cc, program"],
                 id="cue-button-without-source"),
    pytest.param('[instances.a]\n[[midi.cues]]\nnote = 36\naction = "back"\n',
                 ["cfg.toml:4", "midi.cues.0.action", "'go', 'stop' or 'standby'"],
                 id="cue-button-action"),
    pytest.param('[instances.a]\n[[midi.cues]]\nnote = 36\ncue = "two words"\n',
                 ["cfg.toml:4", "midi.cues.0.cue"], id="cue-button-number"),
    pytest.param('[instances.a]\nsynthdefs = "some"\n',
                 ["cfg.toml:2", "instances.a.synthdefs"], id="synthdefs-not-list"),
    pytest.param("[instances.a]\n[history]\nmax_rows = 10\n",
                 ["cfg.toml:3", "history.max_rows", "greater than or equal to 100", "found 10"],
                 id="history-too-few-rows"),
    pytest.param("[instances.a]\n[history]\nmax_age_days = 0\n",
                 ["cfg.toml:3", "history.max_age_days", "greater than 0", "found 0"],
                 id="history-no-age"),
    pytest.param("[instances.a]\n[history]\nmax_age = 7\n",
                 ["cfg.toml:3", "history.max_age", "unknown key", "did you mean 'max_age_days'"],
                 id="typo-history"),
    pytest.param('[instances.a]\n[docs]\nbuild = "later"\n',
                 ["cfg.toml:3", "docs.build", "'background' or 'on-demand'", "found 'later'"],
                 id="docs-build"),
    # issue 15: tempo, MIDI clock, MPE, max_hold
    pytest.param("[instances.a]\n[tempo]\nbpm = 1500\n",
                 ["cfg.toml:3", "tempo.bpm", "less than or equal to 999", "found 1500"],
                 id="tempo-too-fast"),
    pytest.param("[instances.a]\n[tempo]\nbmp = 90\n",
                 ["cfg.toml:3", "tempo.bmp", "did you mean 'bpm'"], id="tempo-typo"),
    pytest.param('[instances.a]\n[tempo]\nlink = "maybe"\n',
                 ["cfg.toml:3", "tempo.link", "valid boolean"], id="tempo-link-not-bool"),
    pytest.param('[instances.a]\ngroup = "g"\n[tempo.groups.h]\nbpm = 90\n',
                 ["cfg.toml:3", "tempo.groups.h", "no room is in group 'h'", "groups: g"],
                 id="tempo-unknown-group"),
    pytest.param('[instances.a]\ngroup = "g"\n[tempo.groups.g]\nbeats_per_bar = 3\n',
                 ["cfg.toml:3", "tempo.groups.g.bpm", "this key is required"],
                 id="group-tempo-without-bpm"),
    pytest.param('[instances.a]\n[[midi.clock_out]]\nport = "tr8"\ngroup = "nope"\n',
                 ["cfg.toml:4", "midi.clock_out.0.group", "no room is in group 'nope'"],
                 id="clock-out-unknown-group"),
    pytest.param('[instances.a]\n[[midi.clock_out]]\nport = "TR8"\n'
                 '[[midi.clock_out]]\nport = "tr8"\n',
                 ["cfg.toml:2", "midi", "names the port 'tr8' twice"], id="clock-out-twice"),
    pytest.param('[instances.a]\n[[midi.clock_out]]\nprt = "tr8"\n',
                 ["cfg.toml:3", "midi.clock_out.0.prt", "did you mean 'port'"],
                 id="clock-out-typo"),
    pytest.param('[instances.a]\n[midi]\nclock_in = ""\n',
                 ["cfg.toml:3", "midi.clock_in", "at least 1"], id="clock-in-empty"),
    pytest.param('[instances.a]\n[[midi.keys]]\ninstance = "a"\nsynthdef = "sine"\n'
                 'mpe = "middle"\n',
                 ["cfg.toml:5", "midi.keys.0.mpe", "'lower' or 'upper'", "found 'middle'"],
                 id="mpe-zone"),
    pytest.param('[instances.a]\n[[midi.keys]]\ninstance = "a"\nsynthdef = "sine"\n'
                 'mpe = "lower"\nchannel = 2\n',
                 ["cfg.toml:2", "midi.keys.0", "an MPE zone chooses its channels"],
                 id="mpe-with-channel"),
    pytest.param('[instances.a]\n[[midi.keys]]\ninstance = "a"\nsynthdef = "sine"\n'
                 "max_hold = 0\n",
                 ["cfg.toml:5", "midi.keys.0.max_hold", "greater than 0"], id="max-hold-zero"),
    pytest.param("[instances.a]\n[midi]\ncapture_notes = -1\n",
                 ["cfg.toml:3", "midi.capture_notes", "greater than or equal to 0", "found -1"],
                 id="capture-notes-negative"),
    pytest.param("[instances.a]\n[midi]\ncapture_notes = 1.5\n",
                 ["cfg.toml:3", "midi.capture_notes", "valid integer", "found 1.5"],
                 id="capture-notes-fraction"),
    pytest.param('[instances.a]\n[mcp]\nhttp = "10.0.0.1:99999"\n',
                 ["cfg.toml:3", "mcp.http", "port must be a number from 1 to 65535",
                  "'99999'"], id="mcp-http-port"),
    pytest.param('[instances.a]\n\n[mcp]\nhttp = "the lobby"\n',
                 ["cfg.toml:4", "mcp.http", "'the lobby' is not an address or a host name"],
                 id="mcp-http-host"),
    pytest.param("[instances.a]\n[mcp]\nhttp = 8000\n",
                 ["cfg.toml:3", "mcp.http", "valid string"], id="mcp-http-number"),
    pytest.param('[instances.a]\n[mcp]\nhtp = "127.0.0.1:8000"\n',
                 ["cfg.toml:3", "mcp.htp", "http"], id="mcp-typo"),
]


@pytest.mark.parametrize(("text", "expected"), BAD)
def test_bad_config_error_names_file_line_key_and_problem(
    text: str, expected: list[str], tmp_path: Path
) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, tmp_path / "cfg.toml")
    message = str(caught.value)
    for part in expected:
        assert part in message, f"{part!r} not in:\n{message}"


def test_tempo_scopes_follow_groups_with_their_own_tempo(tmp_path: Path) -> None:
    config = parse_config(GOOD + '[instances.attic]\ngroup = "top"\n[tempo]\nbpm = 96\n'
                          "[tempo.groups.top]\nbpm = 70\nbeats_per_bar = 3\n",
                          tmp_path / "cfg.toml")
    assert config.tempo.bpm == 96 and config.tempo.link is False
    assert config.tempo_scope("attic") == "top" == config.tempo_scope("top")
    assert config.tempo_scope("lobby") == "" == config.tempo_scope("ground")
    lines = config.timelines(10.0)
    assert (lines[""].bpm, lines["top"].bpm, lines["top"].beats_per_bar) == (96, 70, 3)


def test_good_config_parses_with_defaults_and_groups(tmp_path: Path) -> None:
    config = parse_config(GOOD, tmp_path / "cfg.toml")
    assert config.audio.jack_server == "scorch"
    assert config.instances["lobby"].port == 57110
    assert config.instances["gallery"].port is None
    assert config.groups() == {"ground": ["lobby", "gallery"]}
    assert config.instances["gallery"].nodes["pad"].params == {"freq": 220.0}
    assert config.watchdog.max_restarts == 5
    assert (config.history.max_age_days, config.history.max_rows) == (30.0, 100_000)
    assert config.docs.build == "background" and config.docs.help_dir is None


def test_the_embedded_default_and_the_example_installation_are_valid() -> None:
    default = load_config(DEFAULT_CONFIG)
    assert default.audio.driver == "auto"
    assert len(default.instances) == 1
    example = load_config(Path(__file__).resolve().parents[3] / "examples" / "installation.toml")
    assert len(example.instances) >= 3
    assert len(example.groups()) >= 2


def test_missing_config_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "nope.toml")


def test_state_path_is_per_config_file(tmp_path: Path) -> None:
    one = parse_config("[instances.a]\n", tmp_path / "one.toml").state_path()
    two = parse_config("[instances.a]\n", tmp_path / "two.toml").state_path()
    assert one != two
    explicit = parse_config('state_dir = "st"\n[instances.a]\n', tmp_path / "c.toml")
    assert explicit.state_path() == tmp_path / "st"


@only_on(sys.platform == "linux", "the XDG layout is Linux's")
def test_state_path_is_under_xdg_state_home_or_the_homes_local_state(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "rooms.toml"
    digest = hashlib.sha1(str(source.resolve()).encode()).hexdigest()[:8]
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    assert parse_config("[instances.a]\n", source).state_path() == (
        tmp_path / "home" / ".local" / "state" / "scorch" / f"rooms-{digest}")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert parse_config("[instances.a]\n", source).state_path() == (
        tmp_path / "state" / "scorch" / f"rooms-{digest}")


def test_each_installation_names_its_own_jack_server_after_its_state_folder(
        tmp_path: Path) -> None:
    one = parse_config("[instances.a]\n", tmp_path / "one.toml")
    two = parse_config("[instances.a]\n", tmp_path / "two.toml")
    assert one.jack_server() != two.jack_server()
    assert one.jack_server().startswith("scorch-")
    assert parse_config("[instances.a]\n", tmp_path / "one.toml").jack_server() == \
        one.jack_server()  # the same installation: the same name, start after start
    moved = parse_config('state_dir = "elsewhere"\n[instances.a]\n', tmp_path / "one.toml")
    assert moved.jack_server() != one.jack_server()
    named = parse_config('[audio]\njack_server = "studio"\n[instances.a]\n', tmp_path / "c.toml")
    assert named.jack_server() == "studio"
    joined = parse_config('[audio]\ndriver = "jack"\n[instances.a]\n', tmp_path / "c.toml")
    assert joined.jack_server() == "scorch"  # the server the jack driver joins, as before
    local = parse_config('[hosts.b]\nvia = "local"\n[instances.a]\nhost = "b"\n',
                         tmp_path / "one.toml")
    assert local.for_host("b").audio.jack_server == f"{local.jack_server()}-b"


def test_key_lines_maps_tables_keys_and_arrays_of_tables() -> None:
    text = "[audio]\nperiod = 64\n[[midi.controls]]\ncc = 1\n[[midi.controls]]\ncc = 2\n"
    lines = key_lines(text)
    assert lines[("audio", "period")] == 2
    assert lines[("midi", "controls", "0", "cc")] == 4
    assert lines[("midi", "controls", "1", "cc")] == 6


def test_a_midi_route_to_an_unknown_room_names_its_line(tmp_path: Path) -> None:
    text = ('[instances.lobby]\n[[midi.controls]]\nport = "x"\ncc = 1\ninstance = "lobbby"\n'
            'node = "pad"\nparam = "amp"\n')
    with pytest.raises(ConfigError) as caught:
        parse_config(text, tmp_path / "cfg.toml")
    assert "cfg.toml:5: midi.controls.0.instance: no room or group named 'lobbby'" in str(
        caught.value)


def test_unknown_synthdefs_are_named_with_their_lines_and_the_nearest_name(
    tmp_path: Path,
) -> None:
    from scorch.config.installation import check_synthdefs

    path = tmp_path / "cfg.toml"
    path.write_text('[instances.a]\nsynthdefs = ["sine", "sawz"]\n'
                    '[instances.a.nodes.pad]\nsynthdef = "broken"\n')
    config = load_config(path)
    with pytest.raises(ConfigError) as caught:
        check_synthdefs(config, {"sine", "saw"}, {"broken": "syntax error in broken.scd"})
    message = str(caught.value)
    assert f"{path}:2: instances.a.synthdefs: no SynthDef 'sawz' in synthdefs/; did you mean " \
           "'saw'?" in message
    assert f"{path}:4: instances.a.nodes.pad.synthdef: SynthDef 'broken' failed to load: " \
           "syntax error in broken.scd" in message
    check_synthdefs(config, {"sine", "sawz", "broken"}, {})  # all known: no error


def test_a_config_nested_too_deep_is_a_located_error_not_a_recursion(tmp_path: Path) -> None:
    from scorch.errors import ConfigError

    text = "[instances.a]\nstartup = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n"
    with pytest.raises(ConfigError, match=r"c\.toml: invalid TOML: line 2: nested more than 32"):
        parse_config(text, tmp_path / "c.toml")


@pytest.mark.parametrize("listen", ["0.0.0.0:x", "a b:3", "host:0", "host:70000", "[::1:80",
                                    "[host]:80", "", "h/x:80"])
def test_a_bad_web_listen_is_refused_naming_the_key(listen: str) -> None:
    with pytest.raises(ConfigError, match=r"web\.listen"):
        parse_config(f'[instances.a]\n[web]\nlisten = "{listen}"\n')


@pytest.mark.parametrize(("listen", "address"), [("127.0.0.1:8470", ("127.0.0.1", 8470)),
                                                 ("[::1]:80", ("::1", 80)),
                                                 ("stage.local:9000", ("stage.local", 9000)),
                                                 (":80", ("127.0.0.1", 80)),
                                                 ("127.0.0.1", ("127.0.0.1", 8470)),
                                                 ("::1", ("::1", 8470))])
def test_web_listen_gives_host_and_port(listen: str, address: tuple[str, int]) -> None:
    assert parse_config(f'[instances.a]\n[web]\nlisten = "{listen}"\n').web.address() == address
