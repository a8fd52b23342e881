"""An Open Stage Control session for an installation: a tab per room, a fader per param.

Generated from the config's named nodes and their SynthDefs' specs (range and warp),
so each fader sends the address the OSC door takes and shows what scorch sends back.
The session registers itself as a surface when it opens (a script widget's
``onCreate``), and has a panic button. ``python -m scorch.osc.layout CONFIG > x.json``
writes one (docs/controllers.md).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from scorch.config import Config, load_config
from scorch.osc.addresses import PREFIX, param_address
from scorch.primitives.synthdefs import ParamSpec, SynthDefLibrary

#: Open Stage Control's session format this writes (its converters read older ones).
VERSION = "1.26.2"
#: Controls a fader makes no sense for: set by scorch or by the SynthDef's own envelope.
SKIPPED = frozenset({"gate", "out", "bus"})


def session(config: Config, library: SynthDefLibrary) -> dict[str, Any]:
    """The session (a JSON document) for ``config``'s named nodes."""
    tabs = []
    for room, inst in config.instances.items():
        panels = []
        for node, spec in inst.nodes.items():
            params = library.info(spec.synthdef).params if spec.synthdef in library else []
            faders = [_fader(room, node, p, spec.params.get(p.name, p.default))
                      for p in params if p.name not in SKIPPED]
            if faders:
                panels.append({"type": "panel", "id": f"{room}_{node}", "label": node,
                               "layout": "horizontal", "widgets": faders})
        tabs.append({"type": "tab", "id": room, "label": room, "layout": "horizontal",
                     "widgets": panels})
    tools = [
        {"type": "script", "id": "scorch_surface", "visible": False,
         "onCreate": f"send('{PREFIX}/surface/add')"},
        {"type": "button", "id": "scorch_panic", "label": "panic", "mode": "tap",
         "address": f"{PREFIX}/panic", "on": 1, "off": 0},
    ]
    tabs.append({"type": "tab", "id": "scorch", "label": "scorch", "widgets": tools})
    return {"createdWith": "Open Stage Control", "version": VERSION, "type": "session",
            "content": {"type": "root", "id": "root", "tabs": tabs}}


def _fader(room: str, node: str, spec: ParamSpec, value: float) -> dict[str, Any]:
    low, high = sorted((spec.minval, spec.maxval))
    return {"type": "fader", "id": f"{room}_{node}_{spec.name}",
            "label": f"{spec.name}" + (f" ({spec.units})" if spec.units else ""),
            "address": param_address(room, node, spec.name),
            "range": {"min": low, "max": high}, "logScale": spec.warp == "exp" and low > 0,
            "default": value, "value": value, "decimals": 3 if high - low < 10 else 1,
            "doubleTap": True}


def main(argv: list[str] | None = None) -> int:
    """Print the session of the config named on the command line."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m scorch.osc.layout CONFIG.toml > session.json", file=sys.stderr)
        return 2
    document = session(load_config(args[0]), SynthDefLibrary())
    print(json.dumps(document, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
