"""The ``## MIDI`` section of BENCHMARKS.md from ``bench.midi.latency``'s figures."""

from __future__ import annotations

import os
import time

from bench.midi.latency import PARAMS, VARIANTS, percentile


def _server(figures: dict) -> str:
    return "realtime" if figures["realtime"] else "no realtime"


def latency_lines(runs: list[dict]) -> list[str]:
    """End to end and own time, every variant beside the bare callback."""
    names = list(VARIANTS)
    lines = [
        "End-to-end latency, JACK MIDI port to OSC datagram at a UDP listener, one control "
        "change at a time, 2-4 ms apart. In one run, blocks of 100 samples per path, one "
        "router alive at a time beside the bare callback, the two interleaved at random and "
        "the routers' order shuffled in each block; each ratio is to the bare callback's "
        "samples of the same blocks:",
        "",
        "| jackd | | bare rtmidi callback -> UDP | "
        + " | ".join(f"{name} | ratio" for name in names) + " | load |",
        "|---|---|---|" + "---|---|" * len(names) + "---|",
    ]
    for figures in runs:
        lat = figures["latency"]["samples"]
        for label, q in (("median", 0.5), ("p99", 0.99)):
            b = percentile(lat["baseline"], q)
            cells = []
            for name in names:
                r = percentile(lat[name], q)
                cells.append(f"{r:.0f} us | {r / percentile(lat['baseline:' + name], q):.3f}x")
            lines.append(f"| {_server(figures)} | {label} | {b:.0f} us | " + " | ".join(cells)
                         + f" | {figures['load']:.1f} |")
    lines += ["", "Own time, from taking a message (a router) or entering the callback (the "
              "bare one) to its datagram sent, over the same samples (a cold cache, a thread "
              "just woken); goal: the router's p99 < 150 us, and the capture under 5 % of it:",
              "", "| jackd | bare p50 | p99 | "
              + " | ".join(f"{name} p50 | p99" for name in names) + " | capture's share (p50) |",
              "|---|---|---|" + "---|---|" * len(names) + "---|"]
    for figures in runs:
        own, base = figures["own"], figures["base_own"]
        row = " | ".join(f"{own[n]['p50']:.1f} us | {own[n]['p99']:.1f} us" for n in names)
        share = (own["capture"]["p50"] - own["router"]["p50"]) / own["router"]["p50"]
        lines.append(f"| {_server(figures)} | {base['p50']:.1f} us | {base['p99']:.1f} us | "
                     f"{row} | {share:+.1%} |")
    lines += ["", "Paths: " + "; ".join(f"**{name}**: {what}"
                                        for name, (_, _, what) in VARIANTS.items()) + "."]
    return lines


def report(runs: list[dict], hot: dict, hot_count: int, idle: list[str]) -> str:
    lines = [
        "## MIDI",
        "",
        "`python -m bench.midi.latency` on this machine "
        f"({time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs shared with other test runs, "
        "load average in the tables, jackd dummy driver 48 kHz / 64 frames, so a JACK MIDI hop "
        "costs up to one 1.33 ms period). The hardware and the UDP listener standing in for "
        "scsynth run in a separate process, as they would in real life. Everything is measured "
        "twice: with jackd as the tests run it (no realtime scheduling) and with `[audio] "
        "realtime = true` (`jackd -R`), as a stage machine runs it. On JACK the router's inputs "
        "are scorch's own client (`midi/io/backends/jack_in.c`): its process callback, in C, "
        "copies the cycle's events into a lock-free ring and writes an eventfd that the input "
        "thread sleeps on, so no JACK thread runs Python and the thread wakes only when MIDI "
        "came.",
        "",
        *latency_lines(runs),
        "",
        *idle,
    ]
    lines += ["", "CPU cost of the hot path in process (`python -m bench.midi.hotpath`, run by "
              "the command above after jackd stopped): what the input thread does with one "
              "queued message (the router's lock, the engine, the datagram; coalescing off), "
              "timed per call; the baseline is a cached `/n_set` with its float packed, and "
              f"`sendto`. {hot_count} control changes over {PARAMS} parameters and "
              f"{hot_count // 5} note messages, each with the garbage collector on, off, and on "
              "after `gc.freeze()`; then 300 control changes 3 ms apart (a sleep before each "
              "call, untimed), as the router meets them when MIDI comes a few milliseconds "
              "apart: its caches cold, each call costs several times a warm one, the "
              "baseline's `sendto` too. That, not the wake-up, is most of the router's own "
              "time above (one Python thread cannot keep the interpreter's and the engine's "
              "data in cache while it sleeps; polling every 0.25 ms kept part of it warm, which "
              "is why the polled router's own time is a little lower while its latency is "
              "not).", "",
              "| us per message | p50 | p99 | max |", "|---|---|---|---|"]
    lines += [f"| {name} | {f['p50']:.1f} | {f['p99']:.1f} | {f['max']:.1f} |"
              for name, f in hot.items()]
    lines += ["", "Flood: control changes over 16 parameters at 20,000 /s with a note on/off "
              "pair after every 40, on one port that the router and a bare rtmidi callback both "
              "listen to, in the same run. Lost = sent - received.", "",
              "| jackd | sent | bare callback received | lost | router received | lost | "
              "thinned in batches | notes on/off (router) | /s_new, releases sent | voices "
              "left | last values right |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for figures in runs:
        t = figures["throughput"]
        bare = t["bare"]["count"]
        lines.append(
            f"| {_server(figures)} | {t['injected']} | {bare} | {t['injected'] - bare} | "
            f"{t['received']} | {t['injected'] - t['received']} | {t['thinned']} | "
            f"{t['notes_on'][0]}/{t['notes_off'][0]} of {t['notes_injected']} | "
            f"{t['notes_on'][1]}, {t['notes_off'][1]} | {t['voices_left']} | "
            f"{PARAMS - len(t['wrong_vs_injected'])}/{PARAMS} |")
    lines += ["",
              'Without realtime scheduling on a loaded machine every JACK client misses cycles and '
              'JACK drops the MIDI of a missed cycle for that client; a callback that waits for '
              "Python's GIL misses more. scorch's own input client takes realtime scheduling for "
              'its process thread where allowed even when the server runs without it (it only '
              "copies bytes), so what it still loses there comes from the sending client's late "
              "cycles; with a realtime server nothing is lost. The router's releases include those "
              "held back until scsynth confirmed the voice's start (a note whose release reached "
              "scsynth in the same audio period as its start would otherwise leave a synth that "
              "never ends); the benchmark's listener answers `/sync` as scsynth does.",
              "",
              "Reading: scorch's own JACK input removes the poll (0.25 ms while MIDI flows, up to 4"
              ' ms after a quiet spell) and every idle wake-up of the input thread, and loses '
              'almost nothing under the flood; end to end it still stays above 1.1x the bare '
              "callback at the median on this loaded 2-core machine, because the router's own time "
              'is mostly the cost of a cold cache (the hot path\'s "3 ms apart" rows: each call '
              "after a sleep costs several times a warm one, the baseline's `sendto` too), which a "
              "thread woken per message pays and a callback already running in JACK's thread pays "
              'less of.',
              ""]
    return "\n".join(lines)
