// Every event a pattern plays, seen as it plays and told to scorch in batches
// (scorch/primitives/sclang/pattern_events.py reads them): the last event time of each
// Pdef and Tdef (`playing`), and the notes they play (the `notes` capture).
//
// The hook is the `callback` of the default parent event, which Event's `play` calls after
// each event (a rest too), in the thread of the player that played it. Nothing of JITLib is
// overridden; a pattern that sets its own \callback replaces it for its events (they are
// then not seen). Which proxy played is found by its player's thread, looked up once per
// player. An event costs a dictionary lookup and a few of the event's own functions;
// the batch is written by a function scheduled `period` seconds after the first event
// that found the batch empty: nothing runs while no pattern plays.
//
// One record a batch, on the session's token:
//   pattern-events  "OFFSET\n" then a line per event "SECONDS TAB BEAT TAB SUSTAIN TAB AMP
//                   TAB PITCHES TAB KEY", OFFSET the Unix time of elapsed second 0, SECONDS the
//                   event's logical time (elapsed), BEAT its logical beat on the clock that
//                   follows scorch's grid (TempoClock.default, or ScorchTempo's LinkClock;
//                   empty on any other clock), SUSTAIN in seconds, PITCHES MIDI note
//                   numbers joined by "," (empty: a rest or an event that plays no note),
//                   KEY "Pdef acc", "Tdef loop" or "" (a player of no proxy: code)
//   A batch holds `limit` events at most; the rest of the period's are counted in a last
//   line "dropped TAB N".
ScorchPatternEvents {
	classvar <>period = 0.2, <>limit = 500, <>enabled = true;
	classvar batch, dropped = 0, owners, flushAt, hook;
	classvar noteTypes;

	*install {
		noteTypes = IdentitySet[\note, \monoNote, \monoSet, \midi];
		owners = IdentityDictionary.new;
		batch = Array.new(64);
		hook = { |event| ScorchPatternEvents.heard(event) };
		Event.parentEvents.default.put(\callback, hook);
	}

	// The callback: inside Event's play, `event` its current environment.
	*heard { |event|
		var thread = thisThread, key, clock, pitches, sustain, amp, time, beat;
		if(enabled.not or: { batch.isNil }) { ^this };
		key = owners[thread] ?? { this.owner(thread) };
		if(batch.size >= limit) { dropped = dropped + 1; ^this.due };
		clock = thread.clock;
		time = thread.seconds;
		// the beat the pattern played on, exact: its seconds pass through two clocks to reach
		// scorch's grid, and a downbeat a tenth of a millisecond early was beat 5 of the bar before
		if(clock === TempoClock.default or: { clock.notNil and: { clock === ScorchTempo.link } }) {
			beat = thread.beats };
		if(event.isRest.not and: { noteTypes.includes(event[\type] ? \note) }
			and: { event[\type] != \midi or: { event[\midicmd] == \noteOn } }) {
			// a note event that played holds its values: computed only when it did not
			pitches = event.at(\freq);
			sustain = event.at(\sustain);
			amp = event.at(\amp);
			if(pitches.isNumber.not and: { pitches.isArray.not }) { pitches = event.use { ~freq.value } };
			if(sustain.isNumber.not) { sustain = event.use { ~sustain.value } };
			if(amp.isNumber.not and: { amp.isArray.not }) { amp = event.use { ~amp.value } };
			if(clock.respondsTo(\tempo)) {
				sustain = sustain / clock.tempo;
				event[\timingOffset] !? { |o| if(o.isNumber) {
					time = time + (o / clock.tempo);
					beat !? { beat = beat + o } } };
			};
		};
		batch = batch.add([time, sustain, amp, pitches, key, beat]);
		this.due;
	}

	// The proxy whose player runs `thread` ("" for none), kept for the thread's next events.
	*owner { |thread|
		var found = "";
		Pdef.all.keysValuesDo { |name, proxy|
			proxy.player !? { |p| if(p.respondsTo(\routine) and: { p.routine === thread }) {
				found = "Pdef " ++ name } }
		};
		if(found.isEmpty) {
			Tdef.all.keysValuesDo { |name, proxy|
				proxy.player !? { |p| if(thread.threadPlayer === p) { found = "Tdef " ++ name } }
			}
		};
		if(owners.size > 256) { owners = IdentityDictionary.new };  // players of the past
		owners[thread] = found;
		^found
	}

	// Make sure a flush is coming (one lost to CmdPeriod's clear is scheduled again).
	*due {
		var now = Main.elapsedTime;
		if(flushAt.isNil or: { now > (flushAt + 1) }) {
			flushAt = now + period;
			SystemClock.sched(period, { this.flush; nil });
		}
	}

	// Send what is batched now: a pattern's state is told after the events it played
	// (a Pdef reported finished before its last notes read "finished, no event yet").
	*flushNow { if(batch.notNil) { this.flush } }

	// One record of the batch, written into one string (`join` costs tens of µs an event).
	*flush {
		var out, events = batch;
		flushAt = nil;
		if(events.isEmpty and: { dropped == 0 }) { ^this };
		batch = Array.new(64);
		out = CollStream(String.new(events.size * 48 + 64));
		out.putAll((Date.getDate.rawSeconds - Main.elapsedTime).asStringPrec(17));
		events.do { |e|
			var pitches = e[3], sustain = e[1] ? 0, amp = e[2] ? 0, first = true;
			if(sustain.isArray) { sustain = sustain.first ? 0 };
			if(amp.isArray) { amp = amp.first ? 0 };
			out.put($\n); out.putAll(e[0].asStringPrec(12));
			out.put($\t); e[5] !? { |b| out.putAll(b.asStringPrec(15)) };
			out.put($\t); out.putAll(sustain.asFloat.asStringPrec(6));
			out.put($\t); out.putAll(amp.asFloat.asStringPrec(6));
			out.put($\t);
			if(pitches.isNumber) { out.putAll(pitches.cpsmidi.round.asInteger.asString) } {
				if(pitches.isArray) {
					pitches.flat.do { |f|
						if(f.isNumber) {
							if(first.not) { out.put($,) };
							out.putAll(f.cpsmidi.round.asInteger.asString);
							first = false;
						}
					}
				}
			};
			out.put($\t); out.putAll(e[4]);
		};
		if(dropped > 0) { out.putAll("\ndropped\t" ++ dropped.asString); dropped = 0 };
		Scorch.emit(Scorch.token ? "none", "pattern-events", out.contents);
	}

	// A player's proxy may change (a Pdef stopped and played again): look again.
	*forget { owners = IdentityDictionary.new }
}
