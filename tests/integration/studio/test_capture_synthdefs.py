"""The capture SynthDefs scorch writes as bytes are the bytes sclang writes for the same graph."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from scorch.primitives.sclang.launch import SCLANG_ENV
from scorch.primitives.synthdefs.capture import (
    MAX_CHANNELS,
    pass_synthdef,
    record_name,
    record_synthdef,
)
from scorch.primitives.system.process import DIE_WITH_PARENT, child_env

CHANNELS = (1, 2, 5)
SOURCE = """
SynthDef(\\scorch_record_%(n)d, { |buf = 0, bus = 0, seconds = 0|
    DiskOut.ar(buf, In.ar(bus, %(n)d));
    Line.kr(0, 1, seconds, doneAction: 2);
}).writeDefFile(%(dir)s);
SynthDef(\\scorch_pass_%(n)d, { |bus = 0, out = 0|
    Out.ar(out, In.ar(bus, %(n)d));
}).writeDefFile(%(dir)s);
"""


@pytest.mark.integration
def test_the_bytes_match_what_sclang_compiles(tmp_path: Path) -> None:
    folder = f'"{tmp_path}"'
    script = tmp_path / "defs.scd"
    script.write_text("".join(SOURCE % {"n": n, "dir": folder} for n in CHANNELS) + "0.exit;\n")
    env = child_env({**SCLANG_ENV, "XDG_CONFIG_HOME": str(tmp_path / "config"),
                     "XDG_DATA_HOME": str(tmp_path / "data")})
    subprocess.run(["sclang", str(script)], env=env, cwd=tmp_path, capture_output=True,
                   timeout=60, check=True, preexec_fn=DIE_WITH_PARENT)
    for n in CHANNELS:
        assert record_synthdef(n) == (tmp_path / f"scorch_record_{n}.scsyndef").read_bytes()
        assert pass_synthdef(n) == (tmp_path / f"scorch_pass_{n}.scsyndef").read_bytes()


@pytest.mark.parametrize("channels", [0, MAX_CHANNELS + 1])
def test_channel_counts_outside_the_range_are_refused(channels: int) -> None:
    with pytest.raises(ValueError, match=f"1 to {MAX_CHANNELS} channels"):
        record_name(channels)
