"""The devices the router knows by profile: their tables, pages, outputs and feedback.

:class:`Devices` belongs to the router's actor thread. For each open input it
finds the device's profile (so routes may name its controls), the page it shows,
and, for a device with feedback, its output (:func:`midi.controllers.devices.pair`);
it then tells the :class:`~actors.router.feedback.FeedbackSender` which control
shows which param. A device whose output comes back after an unplug is a new
:class:`~actors.router.feedback.Surface`: it is set up and drawn again whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from actors.router.feedback import Binding, Surface, ValueKey
from midi import (
    PageRoute,
    RouteEntry,
    Table,
    compile_table,
    control_of,
    page_key,
    pages_of,
    port_matches,
)
from midi.controllers import Profile, address, has_feedback, pair
from midi.io import OutputPort
from scorch.config import Profiles


class Devices:
    """Profiles, pages and feedback surfaces of the open inputs (router actor thread)."""

    def __init__(self, profiles: Profiles, feedback: bool) -> None:
        self.profiles = profiles
        self._feedback = feedback
        self.pages: dict[str, str] = {}
        """Input port -> the page it shows (a device's first page until a button says)."""
        self.surfaces: dict[str, Surface] = {}
        """Input port -> the device's feedback surface."""
        self._drawn: dict[str, tuple[object, ...]] = {}

    def named(self, port: str) -> Profile | None:
        """The profile of the device on ``port`` (not the fallback)."""
        return self.profiles.for_port(port, fallback=False)

    def outputs(self, available: Mapping[str, list[str]],
                wanted_inputs: Iterable[str]) -> list[str]:
        """The outputs of the devices on wanted inputs that can be shown their params."""
        if not self._feedback:
            return []
        patterns = list(wanted_inputs)
        found = []
        for name in available.get("inputs", []):
            profile = self.named(name)
            if profile is None or not has_feedback(profile) or \
                    not any(port_matches(p, name) for p in patterns):
                continue
            output = pair(name, available.get("outputs", []), profile)
            if output is not None:
                found.append(output)
        return found

    def switch(self, port: str, page: str) -> bool:
        """Show ``page`` on the device of ``port``; False if it showed it already."""
        if self.pages.get(port) == page:
            return False
        self.pages[port] = page
        return True

    def tables(self, inputs: Iterable[str], entries: list[RouteEntry],
               resolved: Mapping[str, tuple[str, ...]]) -> dict[str, Table]:
        """Each input's table: its profile's control names, the page it shows."""
        tables = {}
        for name in inputs:
            pages = pages_of(entries, name)
            if pages and self.pages.get(name) not in pages:
                self.pages[name] = pages[0]
            tables[name] = compile_table(name, entries, resolved, self.profiles.for_port(name),
                                         self.pages.get(name), name in self.surfaces)
        return tables

    def surface(self, inputs: Iterable[str], outputs: Mapping[str, OutputPort]) -> bool:
        """Keep a surface for each input whose device's output is open; True if any changed."""
        changed = False
        wanted: dict[str, tuple[OutputPort, Profile]] = {}
        if self._feedback:
            for name in inputs:
                profile = self.named(name)
                if profile is None or not has_feedback(profile):
                    continue
                paired = pair(name, list(outputs), profile)
                if paired is not None:
                    wanted[name] = (outputs[paired], profile)
        for name in list(self.surfaces):
            kept = wanted.get(name)
            if kept is None or kept[0] is not self.surfaces[name].output \
                    or self.surfaces[name].broken:
                del self.surfaces[name]
                self._drawn.pop(name, None)
                changed = True
        for name, (port, profile) in wanted.items():
            if name not in self.surfaces:
                self.surfaces[name] = Surface(name, port, profile)
                changed = True
        return changed

    def bindings(self, tables: Mapping[str, Table], entries: list[RouteEntry]
                 ) -> tuple[tuple[Surface, ...], dict[ValueKey, tuple[Binding, ...]],
                            set[Surface]]:
        """Which control of which surface shows which param; the surfaces to redraw."""
        found: dict[ValueKey, list[Binding]] = {}
        redraw: set[Surface] = set()
        for name, surface in self.surfaces.items():
            table = tables.get(name)
            surface.page = self.pages.get(name)
            surface.controls = {}
            surface.pages = self._page_lights(surface, entries)
            shown: list[tuple[object, ...]] = []
            for targets in (table.controls.values() if table is not None else ()):
                for target in targets:
                    control = control_of(target.route, surface.profile)
                    if control is None or control.feedback is None \
                            or control.name in surface.controls:
                        continue
                    route = target.route
                    waits = route.button is None and route.relative is None and \
                        route.takeover != "immediate"
                    for slot in target.slots:
                        binding = Binding(surface, control.feedback, slot.value_key,
                                          target.curve, slot.takeover_key if waits else None,
                                          address(control.feedback))
                        surface.controls.setdefault(control.name, binding)
                        found.setdefault(slot.value_key, []).append(binding)
                        shown.append((control.name, slot.value_key, str(route.curve),
                                      route.range, waits))
            drawn = (surface.page, tuple(sorted(surface.pages)), tuple(sorted(shown)))
            if surface.fresh or self._drawn.get(name) != drawn:
                self._drawn[name] = drawn
                redraw.add(surface)
        return (tuple(self.surfaces.values()),
                {key: tuple(bindings) for key, bindings in found.items()}, redraw)

    def _page_lights(self, surface: Surface, entries: list[RouteEntry]) -> dict[str, Any]:
        """The page buttons of ``surface`` that have a light, by the page each shows."""
        lights: dict[str, Any] = {}
        by_key = surface.profile.by_key()
        for entry in entries:
            route = entry.route
            if not isinstance(route, PageRoute) or not port_matches(route.port, surface.input):
                continue
            key = page_key(route, surface.profile)
            if key is None:
                continue
            control = by_key.get((key[0], key[1] if key[1] >= 0 else 0, key[2]))
            if control is not None and control.feedback is not None:
                lights[route.page] = control.feedback
        return lights

    def describe(self, ports: Iterable[str]) -> dict[str, str]:
        """The devices recognised among ``ports``: port -> the device's name."""
        return {name: profile.name for name in ports
                if (profile := self.named(name)) is not None}
