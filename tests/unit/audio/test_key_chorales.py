"""Key detection on music21's bundled Bach chorales, against music21's own analysis.

music21 (a dev dependency) ships the chorales and its own key analyses: its
Krumhansl-Schmuckler (the same method and profiles as scorch's, written by others)
must agree on every chorale; its default (Aarden-Essen profiles, another method)
on most, and on the key signature (the key or its relative) on nearly all.
"""

from __future__ import annotations

from functools import cache

from scorch.audio.music.key import find_key, profile_of

#: Every twentieth chorale of the corpus: 20-odd pieces (music21 parses one in about a
#: second).
EVERY = 20


@cache
def chorales() -> list[tuple[str, list[tuple[int, float]], object, object]]:
    """(name, its notes as (MIDI pitch, quarter lengths), music21's KS key, its default key)."""
    from music21 import corpus

    paths = [p for p in corpus.getComposer("bach") if "bwv" in str(p)][::EVERY]
    found = []
    for path in paths:
        score = corpus.parse(path)
        notes = [(pitch.midi, float(n.quarterLength))
                 for n in score.recurse().notes for pitch in n.pitches]
        if notes:
            found.append((path.name, notes, score.analyze("krumhansl"), score.analyze("key")))
    return found


def _same(ours: tuple[int, str], theirs: object) -> bool:
    return ours == (theirs.tonic.pitchClass, theirs.mode)  # type: ignore[attr-defined]


def _related(ours: tuple[int, str], theirs: object) -> bool:
    """A closely related key: the same key signature or one a fifth away (the relative,
    the dominant, the subdominant and theirs), or the parallel key."""
    tonic, mode = ours
    other, other_mode = theirs.tonic.pitchClass, theirs.mode  # type: ignore[attr-defined]
    major = tonic if mode == "major" else (tonic + 3) % 12
    other_major = other if other_mode == "major" else (other + 3) % 12
    return (major - other_major) % 12 in (0, 5, 7) or tonic == other


def test_every_chorale_gets_music21s_krumhansl_schmuckler_key() -> None:
    pieces = chorales()
    assert len(pieces) >= 20
    differ = []
    for name, notes, krumhansl, _ in pieces:
        key = find_key(profile_of(notes))
        assert key is not None
        if not _same((key.tonic, key.mode), krumhansl):
            differ.append((name, key.plain, str(krumhansl)))
    assert differ == []


def test_where_music21s_default_method_differs_it_names_a_closely_related_key() -> None:
    keys = [(find_key(profile_of(notes)), default) for _, notes, _, default in chorales()]
    found = [((k.tonic, k.mode), d) for k, d in keys if k is not None]
    same = sum(_same(ours, theirs) for ours, theirs in found) / len(found)
    assert same >= 0.6, f"{same:.0%} agree with music21's Aarden-Essen key"
    assert [str(theirs) for ours, theirs in found if not _related(ours, theirs)] == []
