"""The alert policy: which events make messages, rate limits, reminders, recoveries."""

from __future__ import annotations

from scorch.app.alerts import AlertPolicy, Phase, matches


def policy(rate_s: float = 60.0, remind_s: float = 600.0) -> AlertPolicy:
    return AlertPolicy(("CRASHED", "FAILED", "SOUND_*"), rate_s, remind_s)


def test_kinds_are_patterns_so_kinds_added_later_are_chosen_by_name() -> None:
    assert matches("SOUND_HOWL", ("SOUND_*",)) and matches("CRASHED", ("CRASHED",))
    assert not matches("SOUND_OK", ("CRASHED",)) and not matches("crashed", ("CRASHED",))
    assert policy().event("a", "NODE_ENDED", "x", 0.0) == []
    [message] = policy().event("a", "SOUND_HOWL", "a howl at 2 kHz", 0.0, {"hz": 2000})
    assert message.phase is Phase.FAULT and "SOUND_HOWL" in message.title
    assert "hz: 2000" in message.body


def test_a_crash_then_its_restoration_makes_a_fault_and_a_recovery() -> None:
    p = policy()
    [fault] = p.event("lobby", "CRASHED", "scsynth died (SIGKILL)", 10.0)
    assert (fault.room, fault.kind, fault.phase) == ("lobby", "CRASHED", Phase.FAULT)
    assert p.event("lobby", "RESTARTING", "restarting", 10.1) == []
    [back] = p.event("lobby", "RESTORED", "restored", 11.5)
    assert (back.kind, back.phase) == ("CRASHED", Phase.RECOVERED)
    assert "1.5 s" in back.body and p.open_faults() == []


def test_the_same_room_and_kind_is_held_back_within_the_rate_and_counted_after() -> None:
    p = policy(rate_s=60.0)
    assert len(p.event("a", "CRASHED", "1", 0.0)) == 1
    p.event("a", "RESTORED", "", 1.0)
    assert p.event("a", "CRASHED", "2", 5.0) == []
    assert p.event("a", "RESTORED", "", 6.0) == []  # its fault was never told: nor its end
    assert p.event("a", "CRASHED", "3", 30.0) == []
    assert len(p.event("b", "CRASHED", "other room", 31.0)) == 1  # per room
    assert len(p.event("a", "FAILED", "other kind", 32.0)) == 1  # per kind
    [later] = p.event("a", "CRASHED", "4", 61.0)
    assert "2 more since the last message" in later.title


def test_a_lasting_fault_is_reminded_every_remind_s_and_not_after_it_ends() -> None:
    p = policy(remind_s=100.0)
    p.event("a", "FAILED", "gave up", 0.0)
    assert p.tick(99.0) == []
    [reminder] = p.tick(100.0)
    assert reminder.phase is Phase.REMINDER and "still FAILED" in reminder.title
    assert p.tick(150.0) == [] and len(p.tick(200.0)) == 1
    p.event("a", "READY", "booted", 210.0)
    assert p.tick(1000.0) == []
    assert AlertPolicy(("FAILED",), 0.0, 0.0).tick(1e9) == []


def test_sound_ok_ends_sound_faults_only_and_ready_ends_process_faults_only() -> None:
    p = policy()
    p.event("a", "SOUND_SILENT", "silent 30 s", 0.0)
    p.event("a", "CRASHED", "died", 1.0)
    [ended] = p.event("a", "READY", "", 2.0)
    assert ended.kind == "CRASHED" and p.open_faults() == [("a", "SOUND_SILENT")]
    assert p.event("b", "SOUND_OK", "", 3.0) == []  # another room's recovery
    [ok] = p.event("a", "SOUND_OK", "sound again", 4.0)
    assert (ok.kind, ok.phase) == ("SOUND_SILENT", Phase.RECOVERED)
    assert p.open_faults() == []
