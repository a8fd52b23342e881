"""The control names read back from SynthDef bytes: what `midi map` checks a code-sent
SynthDef's params against."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorch.primitives.synthdefs.library import SynthDefLibrary
from scorch.primitives.synthdefs.scgf import CONTROL, UGen, param_names, synthdef

NAMES = st.lists(st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=20),
                 max_size=12, unique=True)


def test_every_library_synthdef_compiled_by_sclang_reads_back_its_params() -> None:
    library = SynthDefLibrary()
    for name in library.names():
        assert param_names(library.compiled(name)) == [
            p.name for p in library.info(name).params], name


@given(NAMES, st.lists(st.floats(width=32, allow_nan=False), max_size=5))
def test_the_params_written_are_the_params_read(params: list[str],
                                                constants: list[float]) -> None:
    ugens = [UGen("Control", CONTROL, (), len(params))] if params else []
    data = synthdef("x", tuple(params), tuple(constants), ugens)
    assert param_names(data) == params


@pytest.mark.parametrize("data", [b"", b"SCgf", b"RIFF" + bytes(20),
                                  synthdef("x", ("freq",), (), [])[:-12]])
def test_bytes_that_are_no_synthdef_are_refused(data: bytes) -> None:
    with pytest.raises(ValueError, match="SynthDef file"):
        param_names(data)
