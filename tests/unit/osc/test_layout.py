"""The Open Stage Control session scorch generates: every fader speaks the door's language."""

from __future__ import annotations

import json
from pathlib import Path

from scorch.config.installation import load_config
from scorch.osc.addresses import Panic, SetParam, Surface, parse
from scorch.osc.layout import session
from scorch.primitives.osc import OscMessage
from scorch.primitives.synthdefs.library import SynthDefLibrary

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "installation.toml"


def widgets(node: dict) -> list[dict]:
    found = [node]
    for key in ("tabs", "widgets"):
        for child in node.get(key, []):
            found += widgets(child)
    return found


def test_every_fader_is_a_named_nodes_param_with_its_specs_range() -> None:
    config = load_config(EXAMPLE)
    library = SynthDefLibrary()
    document = session(config, library)
    faders = [w for w in widgets(document["content"]) if w["type"] == "fader"]
    assert faders
    for fader in faders:
        command = parse(OscMessage(fader["address"], (0.5,)))
        assert isinstance(command, SetParam)
        spec = config.instances[command.room].nodes[command.node]
        param = next(p for p in library.info(spec.synthdef).params if p.name == command.param)
        assert (fader["range"]["min"], fader["range"]["max"]) == tuple(
            sorted((param.minval, param.maxval)))
    named = {(room, node) for room, inst in config.instances.items() for node in inst.nodes}
    assert {tuple(parse(OscMessage(f["address"], (0.0,)))[:2]) for f in faders} == named


def test_the_session_registers_itself_and_has_a_panic_button() -> None:
    document = session(load_config(EXAMPLE), SynthDefLibrary())
    found = widgets(document["content"])
    script = next(w for w in found if w["type"] == "script")
    address = script["onCreate"].split("'")[1]
    assert parse(OscMessage(address, ())) == Surface(True, None)
    panic = next(w for w in found if w.get("id") == "scorch_panic")
    assert parse(OscMessage(panic["address"], (panic["on"],))) == Panic()


def test_the_session_in_the_docs_is_the_examples_own() -> None:
    written = json.loads((ROOT / "docs" / "osc" / "installation.session.json").read_text())
    assert written == session(load_config(EXAMPLE), SynthDefLibrary()), \
        "regenerate: python -m scorch.osc.layout examples/installation.toml"
