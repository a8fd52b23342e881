"""The jackd command line scorch builds from the audio config."""

from __future__ import annotations

from pathlib import Path

import pytest

from actors.jack import jackd_options
from scorch.config.installation import parse_config
from scorch.primitives.system import jackd


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ("[instances.a]\n",
         ["jackd", "-n", "scorch", "-r", "--port-max", "128", "-d", "dummy", "-C", "2", "-P", "2",
          "-r", "48000", "-p", "64"]),
        ('[audio]\njack_server = "x"\nperiod = 256\nsample_rate = 44100\n'
         "[instances.a]\noutputs = 4\n[instances.b]\noutputs = 2\ninputs = 3\n",
         ["jackd", "-n", "x", "-r", "--port-max", "128", "-d", "dummy", "-C", "3", "-P", "6",
          "-r", "44100", "-p", "256"]),
        ('[instances.a]\nconnect = ["system:playback_7", "system:playback_8"]\n',
         ["jackd", "-n", "scorch", "-r", "--port-max", "128", "-d", "dummy", "-C", "2", "-P", "8",
          "-r", "48000", "-p", "64"]),
        ('[audio]\ndriver = "alsa"\ndevice = "hw:1"\n[instances.a]\n',
         ["jackd", "-n", "scorch", "-r", "-d", "alsa", "-d", "hw:1",
          "-r", "48000", "-p", "64"]),
        ('[audio]\nrealtime = true\n[instances.a]\n',
         ["jackd", "-n", "scorch", "-R", "--port-max", "128", "-d", "dummy", "-C", "2", "-P", "2",
          "-r", "48000", "-p", "64"]),
        # Twice the rooms' and the driver's ports, and spare: 2 * (60 + 20 + 40) + 64.
        ("".join(f"[instances.r{i}]\ninputs = 2\noutputs = 4\n" for i in range(10)),
         ["jackd", "-n", "scorch", "-r", "--port-max", "304", "-d", "dummy", "-C", "20",
          "-P", "40", "-r", "48000", "-p", "64"]),
    ],
    ids=["default", "many-rooms", "connect-beyond-outputs", "alsa", "realtime",
         "ports-for-every-room"],
)
def test_jackd_argv(toml: str, expected: list[str], tmp_path: Path,
                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jackd, "realtime_granted", lambda: True)
    assert jackd_options(parse_config(toml, tmp_path / "c.toml")).argv() == expected


@pytest.mark.parametrize(("granted", "period"), [(True, "64"), (False, "512")])
def test_an_unset_period_is_as_short_as_the_machines_scheduling_keeps(
        granted: bool, period: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jackd, "realtime_granted", lambda: granted)
    argv = jackd_options(parse_config("[instances.a]\n", tmp_path / "c.toml")).argv()
    assert argv[-2:] == ["-p", period]
    told = jackd_options(parse_config("[audio]\nperiod = 128\n[instances.a]\n",
                                      tmp_path / "d.toml")).argv()
    assert told[-2:] == ["-p", "128"]
