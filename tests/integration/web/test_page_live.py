"""What the page and the Claude panel show of what plays: patterns, levels, tempo, MIDI.

Shares the web tests' ``scorch run``, browser and page (``conftest.py``); runs after
``test_page.py`` and ends with the test that closes the page, after the pictures.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.conftest import scsynth_param
from tests.support.midi.devices import Hardware
from tests.support.web.harness import IMAGES, KEYS_PORT, Dialogs, Served, open_panel

pytestmark = pytest.mark.integration

PDEF = r"Pdef(\webpat, Pbind(\instrument, \sine, \freq, 660, \dur, 0.25, \amp, 0.02)).play;"


def voices(served: Served) -> int:
    """The MIDI voices sounding, as the router counts them."""
    return int(served.api.call("live", {}).model_dump()["midi"]["voices"])


def test_a_playing_pdef_shows_its_main_params_mute_and_last_event(
        served: Served, page: Any) -> None:
    done = served.api.call("execute", {"instance": "lobby", "code": PDEF}).model_dump()
    assert not done.get("error"), done
    item = page.locator("#room-lobby li.pattern[data-pattern=webpat][data-playing=true]")
    item.wait_for(timeout=5000)
    page.wait_for_function(  # the first events come on the next beat
        "() => /last event/.test(document.querySelector("
        "'#room-lobby li[data-pattern=webpat]').textContent)", timeout=5000)
    text = item.inner_text()
    assert "Pdef" in text and "freq 660" in text and "dur 0.25" in text and "amp 0.02" in text
    served.api.call("pattern", {"action": "mute", "instance": "lobby", "name": "webpat",
                                "at": "now"})
    page.wait_for_selector("#room-lobby li[data-pattern=webpat][data-mute=muted]", timeout=5000)
    assert "muted" in page.inner_text("#room-lobby li[data-pattern=webpat]")


def test_the_sparkline_draws_the_level_of_the_playing_hum(page: Any) -> None:
    page.wait_for_function(
        "() => (document.querySelector('#room-lobby svg.spark polyline')?.getAttribute('points')"
        " || '').trim().split(' ').length >= 2", timeout=5000)
    points = page.get_attribute("#room-lobby svg.spark polyline", "points") or ""
    heights = [float(p.split(",")[1]) for p in points.split()]
    # -60 dB is the bottom (y 35); the hum (amp 0.05, -26 dB) draws well above it.
    assert min(heights) < 25, points


def test_tempo_transport_and_the_servers_xruns_and_dsp_load_are_shown_once(
        served: Served, page: Any) -> None:
    served.api.call("tempo", {"bpm": 123.0})
    page.wait_for_selector("#tempo[data-bpm='123']", timeout=5000)
    playing = served.api.call("tempo", {}).model_dump()["playing"]
    assert page.get_attribute("#tempo", "data-playing") == str(playing).lower()
    assert ("▶ playing" if playing else "■ stopped") in page.inner_text("#tempo")
    assert page.locator("#xruns").count() == 1 and page.locator(".room #xruns").count() == 0
    assert "JACK xruns, last minute" in page.inner_text("#xruns")
    # The rooms' /status CPU is the JACK server's DSP load: once, in the summary; each room
    # shows its scsynth's own process CPU.
    assert page.locator("#dsp").count() == 1 and "JACK DSP load" in page.inner_text("#dsp")
    page.wait_for_function(
        "() => /%/.test(document.querySelector('#room-lobby .facts .cpu').textContent)",
        timeout=3000)


def test_the_meters_arrive_10_to_20_times_a_second(page: Any) -> None:
    counted = page.evaluate("""async () => {
        const source = new EventSource('/api/stream');
        let n = 0;
        source.addEventListener('meters', () => { n += 1; });
        await new Promise((r) => source.addEventListener('open', r));
        await new Promise((r) => setTimeout(r, 2000));
        source.close();
        return n;
    }""")
    print(f"\nmeters events in 2 s: {counted} ({counted / 2:.1f}/s, meter_hz = 20)")
    assert 16 <= counted <= 50, f"{counted / 2:.1f} meters events a second"


def test_a_note_moves_its_inputs_activity_and_panic_releases_once_confirmed(
        served: Served, page: Any, dialogs: Dialogs) -> None:
    keys = Hardware(KEYS_PORT, "webhw", served.jack)
    try:
        port = f"#summary .input[data-port$='{KEYS_PORT}']"
        deadline = time.monotonic() + 10
        while voices(served) < 1:
            assert time.monotonic() < deadline, "the router did not take the note"
            keys.send(0x90, 60, 100)  # a new port is connected within a rescan
            time.sleep(0.2)
        page.wait_for_selector(port, timeout=3000)
        page.wait_for_function(
            "() => Number(document.querySelector('#voices')?.textContent) >= 1", timeout=3000)
        before = int(page.get_attribute(port, "data-taken") or 0)
        keys.send(0x90, 64, 100)
        page.wait_for_function(
            f"n => Number(document.querySelector(\"{port}\").dataset.taken) > n", arg=before,
            timeout=3000)
        assert "active" in (page.get_attribute(port, "class") or "")
        # Declined: nothing is asked of scorch, the voices sound on.
        said = page.get_attribute("#notice", "data-action")
        dialogs.declines = 1
        page.click("#panic")
        assert dialogs.asked[-1].startswith("Panic")
        page.wait_for_timeout(600)
        assert page.get_attribute("#notice", "data-action") == said != "panic"
        assert voices(served) >= 1
        page.click("#panic")  # confirmed
        page.wait_for_selector("#notice[data-action=panic]", timeout=5000)
        page.wait_for_function("() => document.querySelector('#voices').textContent === '0'",
                               timeout=3000)
        assert voices(served) == 0
    finally:
        keys.unplug()
def test_the_claude_panel_shows_the_rooms_and_its_fader_moves_the_param_on_scsynth(
        served: Served, page: Any) -> None:
    tools = {t["name"]: t for t in served.mcp.request("tools/list", {})["result"]["tools"]}
    uri = tools["status"]["_meta"]["ui"]["resourceUri"]
    assert tools["listen"]["_meta"]["ui"]["resourceUri"] == uri
    assert tools["live"]["_meta"]["ui"]["visibility"] == ["app"]
    assert tools["fader"]["_meta"]["ui"]["visibility"] == ["app"]
    read = served.mcp.request("resources/read", {"uri": uri})["result"]["contents"][0]
    assert read["mimeType"] == "text/html;profile=mcp-app"
    status = served.mcp.call("status", {})
    assert "lobby" in status["content"][0]["text"], "status lost its text for other clients"
    host = page.context.new_page()  # the host page is a page of its own (about:blank)
    host.set_viewport_size({"width": 820, "height": 620})
    try:
        panel = open_panel(host, served.mcp, read["text"], status)
        panel.locator("section[data-room=lobby][data-state=READY]").wait_for(timeout=5000)
        panel.locator("section[data-room=gallery]").wait_for(timeout=2000)
        fader = panel.locator("input[data-room=lobby][data-node=hum][data-param=freq]")
        fader.wait_for(timeout=3000)
        fader.fill("800")  # the input event: the panel calls the fader tool
        lo, hi = float(fader.get_attribute("data-lo")), float(fader.get_attribute("data-hi"))
        exp = fader.get_attribute("data-warp") == "exp"
        shown = lo * (hi / lo) ** 0.8 if exp else lo + (hi - lo) * 0.8
        node = served.status()["lobby"]["nodes"]["hum"]
        port = served.status()["lobby"]["port"]
        deadline = time.monotonic() + 3.0
        while abs((value := scsynth_param(port, node["node_id"], "freq")) - shown) > 0.01 * shown:
            assert time.monotonic() < deadline, f"freq on scsynth is {value}, the fader {shown}"
            time.sleep(0.05)
        kept = served.status()["lobby"]["nodes"]["hum"]["params"]["freq"]
        assert abs(kept - shown) < 0.01 * shown, "the value is not kept for restarts"
        calls = len(host.evaluate("window.appTools"))
        host.wait_for_timeout(1200)  # a refresh or two: the meters, the value read back
        tools = host.evaluate("window.appTools")[calls:]
        print(f"\nthe panel's calls in 1.2 s: {tools.count('live')} live, "
              f"{tools.count('live:meters')} meters only")
        assert tools.count("live:meters") >= 4, tools  # about 7 a second while visible
        lobby = panel.locator("section[data-room=lobby]")
        rooms = served.api.call("live", {}).model_dump()["rooms"]
        outputs = len(next(r for r in rooms if r["name"] == "lobby")["meter"]["peak"])
        assert lobby.locator(".out").count() == outputs >= 1
        assert float(lobby.locator(".out").first.get_attribute("data-rms") or -90) > -60
        facts = lobby.locator(":scope > .facts").inner_text()
        assert "up " in facts and "restarts" in facts and "CPU" in facts
        assert "freq 660" in lobby.locator(".pattern[data-pattern=webpat]").inner_text()
        assert panel.locator("#tempo[data-bpm='123']").count() == 1
        summary = panel.locator("#summary").inner_text()
        assert "voices" in summary and "JACK xruns, last minute" in summary
        assert panel.locator("#events li").count() >= 1
        IMAGES.mkdir(parents=True, exist_ok=True)
        host.screenshot(path=str(IMAGES / "claude-panel.png"), full_page=True)
        assert "tools/call" in host.evaluate("window.appCalls")
    finally:
        host.close()




def test_the_page_fits_a_phone_and_its_pictures_go_to_the_docs(
        served: Served, page: Any) -> None:
    """Last, so that the pictures show a log with a crash and a restart, and a sparkline."""
    played = served.mcp.call("play", {"instance": "gallery", "synthdef": "sine",
                                      "name": "drone", "params": {"freq": 110, "amp": 0.1}})
    assert not played.get("isError"), played
    page.wait_for_selector("#room-gallery .nodes button[data-node=drone]", timeout=3000)
    IMAGES.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(IMAGES / "web-page.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})  # a phone's width
    page.wait_for_timeout(300)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the phone must scroll sideways: the page is {width} px wide"
    page.screenshot(path=str(IMAGES / "web-page-phone.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 860})
    served.api.call("release", {"instance": "gallery", "node": "drone"})




def test_the_meters_stop_once_the_last_page_closed(served: Served, page: Any) -> None:
    page.context.close()
    for room in ("lobby", "gallery"):
        served.wait_metered(room, False, timeout=10.0)  # the panel's lease ends too
