"""The SynthDesc directory sclang reads: named after its content, written once, never changed."""

from __future__ import annotations

from pathlib import Path

from scorch.primitives.sclang import protocol
from scorch.primitives.synthdefs.descs import META_SUFFIX, write_descs

DEFS = {"kick": (b"SCgf-kick", "( 'category': 'drums' )"), "pad": (b"SCgf-pad", "")}


def test_each_synthdef_has_its_bytes_and_its_metadata_side_by_side(tmp_path: Path) -> None:
    where = write_descs(tmp_path, DEFS)
    assert (where / "kick.scsyndef").read_bytes() == b"SCgf-kick"
    assert (where / f"kick{META_SUFFIX}").read_text() == "( 'category': 'drums' )"
    assert (where / f"pad{META_SUFFIX}").read_text() == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == [where.name]  # no work dir left


def test_the_same_content_is_the_same_directory_and_other_content_another(tmp_path: Path) -> None:
    first = write_descs(tmp_path, DEFS)
    (first / "kick.scsyndef").touch()
    assert write_descs(tmp_path, dict(reversed(DEFS.items()))) == first
    changed = write_descs(tmp_path, {**DEFS, "kick": (b"SCgf-kick", "( 'category': 'bass' )")})
    assert changed != first
    assert (first / f"kick{META_SUFFIX}").read_text() == "( 'category': 'drums' )"


def test_attach_names_the_directory_as_a_string_literal_or_nil() -> None:
    assert protocol.attach("room", 57110, "ab12").endswith(b'"127.0.0.1", nil)\x1b')
    chunk = protocol.attach("room", 57110, "ab12", descs='/tmp/a "b"')
    assert b'"127.0.0.1", "/tmp/a \\"b\\"")\x1b' in chunk
    assert protocol.read_descs("/d", ["kick", "pad"]) == 'Scorch.readDescs("/d", ["kick", "pad"]);'
