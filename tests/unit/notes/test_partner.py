"""The partner: what it plays was learned, its seed makes it repeatable, its controls hold."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorch.notes.capture import Note
from scorch.notes.partner import GAPS, LENGTHS, MAX_NOTES, Partner, Symbol, scale

BEAT = 0.5  # 120 bpm


def _phrase(pitches: list[int], lengths: list[float] | None = None, start: float = 0.0,
            velocity: int = 80) -> list[Note]:
    notes, onset = [], start
    for i, pitch in enumerate(pitches):
        beats = lengths[i % len(lengths)] if lengths else 0.5
        notes.append(Note(onset, beats * BEAT, pitch, velocity))
        onset += beats * BEAT
    return notes


def _occurs(gram: tuple[Symbol, ...], learned: list[list[Symbol]]) -> bool:
    k = len(gram)
    return any(tuple(seq[i:i + k]) == gram for seq in learned for i in range(len(seq) - k + 1))


phrases = st.lists(st.lists(st.sampled_from([55, 57, 60, 62, 64, 65, 67, 69, 71, 72]),
                            min_size=2, max_size=24), min_size=1, max_size=4)


@settings(max_examples=60, deadline=None)
@given(phrases, st.integers(0, 2**32), st.integers(1, 5), st.sampled_from([0.0, 0.5, 1.0, 3.0]),
       st.sampled_from([None, scale(0), scale(9, "minor")]))
def test_every_ngram_played_at_order_one_or_more_occurs_in_what_it_learned(
        learned, seed, order, temperature, allowed):
    partner = Partner(max_order=order, seed=seed)
    sequences = []
    for i, pitches in enumerate(learned):
        notes = _phrase(pitches, [0.5, 1.0, 0.25][: 1 + i % 3])
        partner.learn(notes)
        sequences.append(partner.encode(notes))
    seed_notes = _phrase(learned[0][: 1 + seed % len(learned[0])])
    made = partner.continue_(seed_notes, notes=12, temperature=temperature, allowed=allowed)
    played = partner.encode(seed_notes) + made.symbols
    offset = len(played) - len(made.symbols)
    assert len(made.notes) == 12
    for i, used in enumerate(made.orders):
        assert -1 <= used <= order
        if used >= 1:
            gram = tuple(played[offset + i - used: offset + i + 1])
            assert _occurs(gram, sequences), (gram, used)


def test_the_same_seed_plays_the_same_notes_and_another_seed_can_differ():
    tune = _phrase([60, 62, 64, 65, 67, 65, 64, 62, 60, 64, 67, 72, 67, 64, 60], [0.5, 0.5, 1.0])

    def play(seed: int) -> list[Note]:
        partner = Partner(max_order=1, seed=seed)
        partner.learn(tune)
        return partner.continue_(tune[:3], notes=20, temperature=2.0).notes

    assert play(7) == play(7)
    assert any(play(7) != play(s) for s in range(8, 20))


def test_a_fully_determined_phrase_is_continued_as_learned():
    tune = _phrase([60, 62, 64, 65, 67, 69, 71, 72])
    partner = Partner(max_order=3, seed=1)
    partner.learn(tune)
    made = partner.continue_(tune[:3], notes=5)
    assert [n.pitch for n in made.notes] == [65, 67, 69, 71, 72]
    assert made.orders == [3] * 5
    assert [n.onset for n in made.notes] == [n.onset for n in tune[3:]]
    assert [n.duration for n in made.notes] == [BEAT * LENGTHS[3]] * 5


def test_the_scale_constraint_backs_off_and_never_leaves_the_scale():
    # learned: chromatic runs; asked: C major only
    partner = Partner(max_order=3, seed=5)
    partner.learn(_phrase(list(range(60, 73)) + list(range(72, 59, -1))))
    c_major = scale(0)
    made = partner.continue_(_phrase([60, 61, 62]), notes=30, allowed=c_major)
    assert all(n.pitch % 12 in c_major for n in made.notes)
    assert min(made.orders) < 3  # it had to back off


def test_with_nothing_in_the_scale_it_invents_the_nearest_pitch_and_says_so():
    partner = Partner(max_order=2, seed=5)
    partner.learn(_phrase([61, 63, 66]))
    made = partner.continue_(_phrase([61]), notes=4, allowed=scale(0))
    assert made.orders == [-1] * 4
    assert all(n.pitch % 12 in scale(0) for n in made.notes)


def test_scales_are_the_keys_pitch_classes():
    assert scale(0) == {0, 2, 4, 5, 7, 9, 11}
    assert scale(9, "minor") == {9, 11, 0, 2, 4, 5, 7, 8}
    with pytest.raises(ValueError):
        scale(0, "dorian")


def test_bars_bound_the_continuation_by_onset():
    partner = Partner(max_order=1, seed=2, beats_per_bar=4)
    tune = _phrase([60, 62, 64, 65] * 4)  # eighths
    partner.learn(tune)
    made = partner.continue_(tune[:2], bars=2)
    assert len(made.notes) == 15  # onsets 0.5 .. 7.5 beats after the seed's last: 8 would be bar 3


def test_density_favours_shorter_gaps():
    partner = Partner(max_order=0, seed=3)
    partner.learn(_phrase([60] * 20, [0.25]) + _phrase([62] * 20, [2.0], start=100.0))

    def mean_gap(density: float) -> float:
        symbols = partner.continue_(_phrase([60]), notes=300, density=density).symbols
        return sum(GAPS[s.gap] for s in symbols) / len(symbols)

    assert mean_gap(4.0) < mean_gap(1.0) < mean_gap(0.25)


def test_temperature_zero_plays_the_most_frequent_continuation():
    partner = Partner(max_order=1, seed=4)
    for ending in (64, 64, 67):
        partner.learn(_phrase([60, ending]))
    assert [n.pitch for n in partner.continue_(_phrase([60]), notes=1,
                                               temperature=0).notes] == [64]


def test_an_answer_learns_the_phrase_and_starts_when_it_ends_or_when_asked():
    partner = Partner(max_order=2, seed=9)
    call = _phrase([60, 64, 67, 64, 60, 64, 67, 72], start=10.0)
    made = partner.answer(call)
    assert len(made.notes) == len(call)
    assert made.notes[0].onset == pytest.approx(call[-1].end)
    assert {n.pitch for n in made.notes} <= {60, 64, 67, 72}
    assert partner.answer(call, notes=3, start=20.0).notes[0].onset == 20.0


def test_an_infill_continues_the_left_phrase_and_leads_into_the_right_one_before_it():
    partner = Partner(max_order=2, seed=11)
    scale_up = _phrase([60, 62, 64, 65, 67, 69, 71, 72, 74, 76])
    partner.learn(scale_up)
    left, right = scale_up[:2], scale_up[6:]
    made = partner.infill(left, right, notes=4)
    assert [n.pitch for n in made.notes] == [64, 65, 67, 69]
    assert made.join == 2
    assert made.notes[-1].onset < right[0].onset


def test_an_infill_that_cannot_fit_says_so():
    partner = Partner(max_order=1, seed=1)
    tune = _phrase([60, 62, 64, 65])
    partner.learn(tune)
    with pytest.raises(ValueError):
        partner.infill(tune[:1], tune[1:], notes=3)
    with pytest.raises(ValueError):
        partner.infill(tune, [], notes=1)
    with pytest.raises(ValueError):
        partner.continue_(tune, notes=3, density=0)


def test_probabilities_interpolate_every_order_and_sum_to_at_most_one():
    partner = Partner(max_order=2)
    tune = _phrase([60, 62, 64, 60, 62, 65, 60, 62, 64])
    partner.learn(tune)
    symbols = partner.encode(tune)
    alphabet = set(partner.counts[()])
    for i in range(len(symbols)):
        total = sum(partner.probability(symbols[:i], s) for s in alphabet)
        assert 0.5 < total < 1.0  # the rest is kept for a symbol never seen
        best = partner.predict(symbols[:i])
        assert partner.probability(symbols[:i], best) == max(
            partner.probability(symbols[:i], s) for s in alphabet)
    # after 60 62 the model has seen 64 twice and 65 once
    assert partner.predict(symbols[:2]).pitch == 64
    # with no history: counts, plus the uniform share of each seen symbol; the rest is unseen
    seen, total = len(alphabet), len(symbols)
    unseen = seen / (seen + 1) / (total + seen)
    assert math.isclose(sum(partner.probability([], s) for s in alphabet) + unseen, 1.0)


def test_an_untrained_partner_says_it_learned_nothing():
    with pytest.raises(ValueError):
        Partner().continue_(_phrase([60]), notes=1)
    with pytest.raises(ValueError):
        Partner().predict([])
    with pytest.raises(ValueError):
        Partner().continue_(_phrase([60]))


def test_a_phrase_learned_transposed_is_continued_in_the_other_key_too():
    partner = Partner(max_order=3, seed=1)
    partner.learn(_phrase([60, 62, 64, 65, 67, 69]), transpose=(0, 2, 100))  # +100 is out of range
    made = partner.continue_(_phrase([62, 64, 66]), notes=3)
    assert [n.pitch for n in made.notes] == [67, 69, 71]
    assert made.orders == [3, 3, 3]
    assert max(s.pitch for s in partner.counts[()]) == 71


def test_a_continuation_of_chords_alone_for_some_bars_ends():
    partner = Partner(max_order=1, seed=1)
    chord = [Note(0.0, 1.0, p, 80) for p in (60, 64, 67)]
    partner.learn(chord)
    partner.counts[()] = {s: c for s, c in partner.counts[()].items() if s.gap == 0}
    made = partner.continue_(chord, bars=1)
    assert len(made.notes) == MAX_NOTES  # no time passes: the bound ends it


@given(st.text(max_size=30))
def test_any_key_name_gives_seven_or_eight_pitch_classes_or_a_clear_refusal(name: str) -> None:
    from scorch.notes.partner import key
    try:
        classes = key(name)
    except ValueError as err:
        assert "a key is a tonic" in str(err)
    else:
        assert len(classes) in (7, 8) and all(0 <= c < 12 for c in classes)


def test_keys_are_named_as_musicians_name_them() -> None:
    from scorch.notes.partner import key, scale
    assert key("C") == scale(0) == key("c major")
    assert key("F# minor") == scale(6, "minor") == key("Gbm")
    assert key("Bb") == scale(10) and key("Am") == scale(9, "minor")
