"""What a reload applies, from two configs (pure: no process runs here)."""

from __future__ import annotations

import pytest

from scorch.config.installation import parse_config
from scorch.config.reload import config_changes
from scorch.errors import InvalidRequest

BASE = """
[instances.lobby]
group = "ground"
synthdefs = ["sine"]
[instances.lobby.nodes.drone]
synthdef = "sine"
params = { freq = 220 }
[instances.attic]
"""


def changes(after: str, before: str = BASE):  # type: ignore[no-untyped-def]
    return config_changes(parse_config(before), parse_config(after))


def test_the_same_config_changes_nothing() -> None:
    found = changes(BASE)
    assert not found and found.summary() == ["nothing changed"]


def test_rooms_added_and_removed_restart_midi_and_the_watchdog_but_touch_no_other_room() -> None:
    found = changes(BASE.replace("[instances.attic]\n", "[instances.cellar]\n"))
    assert found.added == ("cellar",) and found.removed == ("attic",)
    assert found.rooms == {} and found.midi
    assert found.summary()[:2] == ["room attic: removed (stopped)", "room cellar: added (booting)"]


def test_nodes_are_added_set_replaced_and_released_by_name() -> None:
    after = BASE.replace("params = { freq = 220 }", "params = { freq = 330 }") + (
        '[instances.attic.nodes.hum]\nsynthdef = "sine"\n')
    found = changes(after)
    assert list(found.rooms) == ["lobby", "attic"]
    assert dict(found.rooms["lobby"].nodes.changed)["drone"].params == {"freq": 330}
    assert list(found.rooms["attic"].nodes.added) == ["hum"]
    assert not found.rooms["lobby"].restart_for and not found.midi
    replaced = changes(BASE.replace('synthdef = "sine"\nparams', 'synthdef = "saw"\nparams'))
    assert list(replaced.rooms["lobby"].nodes.replaced) == ["drone"]
    released = changes(BASE.replace('[instances.lobby.nodes.drone]\nsynthdef = "sine"\n'
                                    "params = { freq = 220 }\n", ""))
    assert released.rooms["lobby"].nodes.removed == ("drone",)


@pytest.mark.parametrize(("edit", "restart_for"), [
    ('[instances.attic]\nport = 57990\n', ("port",)),
    ('[instances.attic]\noutputs = 4\ninputs = 2\n', ("inputs", "outputs")),
    ('[instances.attic]\nconnect = ["system:playback_1"]\n', ("connect",)),
    ('[instances.attic]\n[instances.attic.safety]\nceiling_dbfs = -3\n', ("safety",)),
])
def test_process_settings_restart_the_room(edit: str, restart_for: tuple[str, ...]) -> None:
    found = changes(BASE.replace("[instances.attic]\n", edit))
    assert found.rooms["attic"].restart_for == restart_for
    assert f"room attic: restarted for {', '.join(restart_for)}" in found.summary()


def test_safety_restarts_just_the_rooms_whose_stage_it_changes() -> None:
    both = changes("[safety]\nceiling_dbfs = -3\n" + BASE)
    assert {name: room.restart_for for name, room in both.rooms.items()} == {
        "lobby": ("safety",), "attic": ("safety",)}
    own = BASE.replace("[instances.attic]\n", "[instances.attic]\n[instances.attic.safety]\n"
                       "max_lufs = -20\n")
    one = changes("[safety]\nmax_lufs = -20\n" + own, own)  # attic's limit was its own
    assert list(one.rooms) == ["lobby"] and one.rooms["lobby"].restart_for == ("safety",)


def test_groups_synthdefs_and_startup_apply_without_a_restart() -> None:
    found = changes(BASE.replace('group = "ground"', 'group = "upstairs"').replace(
        'synthdefs = ["sine"]', 'synthdefs = ["sine", "saw"]'))
    room = found.rooms["lobby"]
    assert room.group and room.synthdefs_added == ("saw",) and not room.restart_for
    assert changes(BASE.replace('synthdefs = ["sine"]', 'synthdefs = "all"')).rooms[
        "lobby"].synthdefs_added == ("all",)


def test_what_a_running_installation_cannot_take_refuses_the_whole_reload() -> None:
    with pytest.raises(InvalidRequest, match=r"\[audio\] changed.*nothing was changed"):
        changes('[audio]\njack_server = "other"\n' + BASE + "[instances.new]\n")
    with pytest.raises(InvalidRequest, match="state_dir changed"):
        changes('state_dir = "/tmp/elsewhere"\n' + BASE)


def test_samples_and_the_watchdog_are_taken_live() -> None:
    found = changes("[samples]\npaths = [\"/tmp\"]\n[watchdog]\ninterval = 1\n" + BASE)
    assert found.samples and found.watchdog and not found.rooms
