"""Voice allocation: ids, limits with stealing of the oldest, sustain pedal."""

from __future__ import annotations

from midi.voices import FIRST_NODE_ID, NODE_ID_SPAN, Voice, Voices

CH = ("keys", 0)


def play(voices: Voices, note: int, limit: int = 3, route: str = "r", sustain: bool = True):
    voice = Voice(voices.new_id(), ("127.0.0.1", 57110), "a", route, CH, note, note, 2.0, sustain)
    return voice, voices.note_on(voice, limit)


def test_node_ids_start_at_2_27_and_wrap_within_2_26():
    voices = Voices()
    assert voices.new_id() == FIRST_NODE_ID
    voices._next = NODE_ID_SPAN - 1
    assert voices.new_id() == FIRST_NODE_ID + NODE_ID_SPAN - 1
    assert voices.new_id() == FIRST_NODE_ID


def test_beyond_the_limit_the_oldest_voice_is_stolen_in_order():
    voices = Voices()
    played = [play(voices, note) for note in (60, 62, 64)]
    assert all(stolen == [] for _, stolen in played)
    stolen_notes = [[v.note for v in play(voices, note)[1]] for note in (65, 67, 69)]
    assert stolen_notes == [[60], [62], [64]]
    assert sorted(v.note for v in voices) == [65, 67, 69]


def test_limits_count_per_route():
    voices = Voices()
    play(voices, 60, limit=1, route="bass")
    _, stolen = play(voices, 72, limit=1, route="lead")
    assert stolen == []
    assert len(voices) == 2


def test_retriggering_a_sounding_key_releases_its_old_voice():
    voices = Voices()
    first, _ = play(voices, 60)
    _, released = play(voices, 60)
    assert released == [first]
    assert len(voices) == 1


def test_note_off_releases_unless_the_pedal_holds_it():
    voices = Voices()
    a, _ = play(voices, 60)
    b, _ = play(voices, 64)
    assert voices.note_off(CH, 60) == [a]
    assert voices.pedal(CH, True) == []
    assert voices.note_off(CH, 64) == []
    c, _ = play(voices, 67)
    assert voices.pedal(CH, False) == [b]  # c is still held by its key
    assert voices.note_off(CH, 67) == [c]
    assert len(voices) == 0


def test_a_route_without_sustain_ignores_the_pedal():
    voices = Voices()
    a, _ = play(voices, 60, sustain=False)
    voices.pedal(CH, True)
    assert voices.note_off(CH, 60) == [a]


def test_note_off_for_an_unknown_key_releases_nothing():
    assert Voices().note_off(CH, 61) == []


def test_clear_returns_every_voice_and_lifts_the_pedal():
    voices = Voices()
    voices.pedal(CH, True)
    a, _ = play(voices, 60)
    voices.note_off(CH, 60)
    assert voices.clear() == [a]
    b, _ = play(voices, 62)
    assert voices.note_off(CH, 62) == [b]


def test_an_input_that_goes_away_takes_its_voices_and_pedals_with_it():
    voices = Voices()
    play(voices, 60)
    other = Voice(voices.new_id(), ("127.0.0.1", 57110), "a", "r", ("other", 0), 61, 61, 2.0,
                  True)
    voices.note_on(other, 3)
    voices.pedal(CH, True)
    dropped = voices.drop_port("keys")
    assert [v.note for v in dropped] == [60]
    assert list(voices) == [other]
    play(voices, 62)
    assert [v.note for v in voices.note_off(CH, 62)] == [62]  # the pedal went with the port


def test_release_forgets_a_voice_once():
    voices = Voices()
    voice, _ = play(voices, 60)
    assert voices.release(voice) is True
    assert voices.release(voice) is False
    assert len(voices) == 0


def test_an_mpe_zone_masters_pedal_holds_its_member_voices():
    voices = Voices()
    member = Voice(voices.new_id(), ("127.0.0.1", 57110), "a", "r", ("keys", 3), 60, 60, 48.0,
                   True, zone=("keys", 0))
    voices.note_on(member, 3)
    voices.pedal(("keys", 0), True)
    assert voices.note_off(("keys", 3), 60) == []
    assert voices.in_zone(("keys", 0)) == [member]
    assert voices.pedal(("keys", 0), False) == [member]
