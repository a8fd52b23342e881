"""What the server tells Claude about working with scorch, sent once at initialisation."""

INSTRUCTIONS = """\
scorch runs several named SuperCollider instances ("rooms" or parts of a set), each an
scsynth audio server with its own sclang interpreter. Address an instance by its name,
a group of instances by the group name, or every instance with "*".

How to work:
1. Start with list_instances: names, groups, states (only READY instances take code),
   CPU and synth counts. Use status for one instance's details and its named nodes.
2. For sounds, look in the SynthDef library first: synthdefs(action="list") gives each
   SynthDef's description and params with their ranges and units. play starts one;
   synthdefs(action="load") makes a SynthDef available to code you write; sclang's
   SynthDescLib knows every library SynthDef, so a Pbind sends all its params.
3. Give play a `node` name for anything you will tweak later: a named node survives crashes
   and restarts with its last values, and set(instance, node, params) changes it while
   it plays; release(instance, node) fades it out. Unnamed synths are fire-and-forget.
4. For everything else (patterns, routines, buses, effects, new SynthDefs) write
   SuperCollider code with execute. The server variable `s` is the instance's own server.
   Wrap multi-statement code in ( ... ) like in the IDE. The result shows the value of
   the last expression and what the code posted.
5. When execute fails, the error names the line and character in YOUR code with the
   source around it: fix that line and run again. A runtime error shows the receiver
   and the call stack. Code that runs too long is stopped (timeout_s) and sclang is
   restarted: its routines and patterns stop (Pdef, Tdef, Ndef come back), synths on
   scsynth play on. Code that returned but left a routine that
   holds sclang busy gives its value, and left_running says so. What scsynth refused
   of the messages the code sent (an unknown SynthDef, a node gone) is in server_errors.
6. Asynchronous output (a routine posting later, a server message) lands in the console:
   read it with console, or block until a line matches with wait_for (pass the last seq
   you saw as `since` so a line printed in between is not missed).
7. stop silences an instance like Cmd-Period (named nodes are forgotten). instance
   boots, quits or restarts one. events shows crashes, restarts and recoveries, and
   which synths made by code a crash took (only named nodes come back: play a SynthDef
   your code added, with target and add_action, to have an effect restored in place).
8. midi lists ports and routes and maps controllers to node params; action start
   switches MIDI on. Long answers (posted lines, console, history, events) are cut to
   a budget and say how many more: ask again with full=true.
9. Before writing code with a class you are not sure of, ask docs(name="Pan2") for its
   methods with the argument names and defaults this machine's class library uses, or
   docs(query="stereo reverb") to find the class. history finds code and calls run
   earlier (action rerun runs one again by id); snippet lists starters (patterns,
   effects, a MIDI responder...) to show or run, and keeps code you save.
10. Samples: buffer(action="search", query=...) finds sound files in the configured sample
   folders; buffer(action="load", instance, path) loads one (it comes back after crashes
   under the same bufnum); play it with synthdef "sampler" (mono) or "sampler_stereo"
   and params {"bufnum": N, "loop": 1}.
11. session(action="save", name) keeps the whole state (nodes, params, buffers, MIDI
   routes, tempo); session(action="diff") shows what a load would change, "load" applies only
   that. scene saves the params of named nodes; recall it, or morph toward it with
   position 0..1 or over seconds.
12. To hear what you made, listen(instance, seconds): a picture (waveform over a
    spectrogram) and numbers (pitch with note name, loudness, clipping, onsets) with one
    sentence. listen(instance, node=NAME) hears one named node alone. render plays a
    SynthDef or a Score offline, with no room; record keeps a room's sound in a file.
13. To start things together (on several instances, even on several hosts), give play,
   set, release or execute the same `at` (a Unix time) or one `delay` in one call: the
   server does it then, sample-accurately. With several hosts, list_instances shows each
   instance's host and each host's state; rooms of an UNREACHABLE host are UNKNOWN.

An instance that is RESTARTING comes back by itself within seconds: wait and retry.
A FAILED instance used up its restart budget: read events and console, fix the cause,
then instance(name, action="boot").
"""
