// The installation's tempo in a room: TempoClock.default follows scorch's beat grid.
// scorch (actors/conductor.py) calls these; user code plays on TempoClock.default as usual.
//
// Without Link, scorch sends the tempo and the beat of "now" whenever they change, and
// when the room's sclang starts. With Link, the room keeps a LinkClock (`ScorchTempo.link`,
// an Ableton Link peer) and TempoClock.default follows it: same tempo, same beat. The
// default clock is never replaced, so routines already scheduled on it keep their clock.
ScorchTempo {
	classvar <link, <beatsPerBar = 4;

	// Follow scorch's grid: `bpm` and `beat` at Unix time `sent` (local), or join Link
	// (`useLink`). The code takes tens of ms to come (more while sclang is busy, as after a
	// recompile): the clock is set to the beat of now, not of when scorch read it.
	*follow { |bpm, beat, bpb, useLink = false, sent|
		beatsPerBar = bpb;
		if(useLink) {
			if(link.isNil) {
				// A new peer takes the session's tempo and phase if there is one.
				link = LinkClock(bpm / 60).permanent_(true);
				link.addDependant(this);
			};
			link.quantum = bpb;
			this.align;
		} {
			link !? { link.removeDependant(this); link.stop; link = nil };
			TempoClock.default.tempo = bpm / 60;
			TempoClock.default.beats = beat + if(sent.isNil) { 0 } {
				(Date.getDate.rawSeconds - sent).clip(0, 1) * bpm / 60 };
		};
		ScorchPatterns.gridReady;  // patterns waiting to resume on the grid may start
	}

	// A new tempo, the beat running on without a jump (to the whole session with Link).
	*setTempo { |bpm|
		if(link.notNil) { link.tempo = bpm / 60 } { TempoClock.default.tempo = bpm / 60 };
	}

	// Jump to `beat` now (Link: the session's beat moves for every peer).
	*setBeat { |beat|
		if(link.notNil) { link.beats = beat } { TempoClock.default.beats = beat };
	}

	// Link told us the session moved (tempo, phase, peers): the default clock follows.
	*update { |who, what|
		if(who === link) { this.align };
	}

	*align {
		link !? {
			TempoClock.default.tempo = link.tempo;
			TempoClock.default.beats = link.beats;
		}
	}

	// One record: "bpm beats peers beatsPerBar linked", the clock scorch follows.
	*report { |id|
		var clock = link ? TempoClock.default;
		Scorch.emit(id, "tempo", [(clock.tempo * 60).asStringPrec(15), clock.beats.asStringPrec(15),
			if(link.notNil) { link.numPeers } { 0 }, beatsPerBar, link.notNil.binaryValue].join(" "));
	}
}
