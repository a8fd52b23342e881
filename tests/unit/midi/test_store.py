"""Run-time routes on disk: round trip, atomic replace, a bad file set aside."""

from __future__ import annotations

import json

from midi.routes import RouteEntry
from midi.schema import ControlRoute, KeyRoute
from midi.store import load_routes, save_routes


def test_routes_round_trip(tmp_path):
    path = tmp_path / "state" / "midi_routes.json"
    entries = [
        RouteEntry("c1", ControlRoute(cc=7, instance="*", node="n", param="p"), "runtime"),
        RouteEntry("k1", KeyRoute(instance="g", synthdef="s", params={"pan": -1}), "runtime"),
    ]
    save_routes(path, entries)
    assert load_routes(path) == entries
    assert [p.name for p in path.parent.iterdir()] == ["midi_routes.json"]  # no temp left


def test_a_missing_file_is_no_routes(tmp_path):
    assert load_routes(tmp_path / "none.json") == []


def test_a_half_written_file_is_set_aside_and_survived(tmp_path):
    path = tmp_path / "midi_routes.json"
    path.write_text('{"version": 1, "routes": [{"id"')
    assert load_routes(path) == []
    assert not path.exists()
    assert (tmp_path / "midi_routes.corrupt").exists()


def test_an_invalid_route_in_the_file_is_set_aside(tmp_path):
    path = tmp_path / "midi_routes.json"
    bad = {"id": "x", "type": "control", "route": {"cc": 999}}
    path.write_text(json.dumps({"version": 1, "routes": [bad]}))
    assert load_routes(path) == []
    assert (tmp_path / "midi_routes.corrupt").exists()
