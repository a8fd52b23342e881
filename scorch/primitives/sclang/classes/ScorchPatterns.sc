// What plays in sclang: Pdef, Pbindef, Tdef and Ndef, as scorch records them and brings
// them back after sclang restarts (scorch/primitives/sclang/patterns.py reads the records).
//
// Nothing of JITLib is overridden: `scan` compares the proxies' registries (Pdef.all,
// Tdef.all, Ndef.all) with what was last reported, after each request scorch runs
// (Scorch.eval) and twice a second for changes made by routines and responders. A change
// is one record, on the session's token:
//   pattern       "kind TAB playing TAB quant TAB how TAB mute TAB play quant TAB name NEWLINE text"
//                 playing: "1" plays, "0" does not, "2" played to the end of its stream (JITLib
//                 still calls it playing: a new source plays it again)
//                 quant: the proxy's own (where a new source lands); play quant: the grid it
//                 was last played on ("nil": none, or an Ndef)
//                 mute: "muted", "solo" or "" (ScorchPatternOps.muteState)
//                 how: "source" (text is the definition, rebuilt from the source's compile
//                 string, which compiles back to the same) or "code" (text is the code of
//                 the request that defined it: its source does not round-trip) or
//                 "approx" (changed outside a request, and its compile string is all there is)
//   pattern-gone  "kind TAB name"
//   pattern-error "name: message" (a restore could not define or play it)
ScorchPatterns {
	classvar known, scanner, restoring = false, gridTold = false, pending;

	// One look at every proxy; `code` is the request that ran just before (or nil).
	*scan { |code|
		var seen = IdentityDictionary.new;
		if(restoring) { ^this };
		known = known ?? { IdentityDictionary.new };
		scanner ?? { this.startScanner };
		this.proxies.do { |entry|
			var kind = entry[0], name = entry[1], proxy = entry[2];
			var id = (kind ++ ":" ++ name).asSymbol, source = this.shape(proxy.source);
			var playing = this.state(kind, proxy), quant = proxy.quant;
			var mute = ScorchPatternOps.muteState(kind, name), playQuant = proxy.tryPerform(\playQuant);
			var last = known[id];
			seen[id] = true;
			if(last.isNil or: { this.same(last[0], source).not } or: { last[1] != playing }
				or: { last[2] != quant } or: { last[3] != mute } or: { last[4] != playQuant }) {
				known[id] = [source, playing, quant, mute, playQuant];
				this.report(kind, name, proxy, playing, quant, code, last, mute, playQuant);
			};
		};
		known.keys.copy.do { |id|
			if(seen[id].isNil) {
				known.removeAt(id);
				Scorch.emit(Scorch.token ? "none", "pattern-gone",
					id.asString.replace(":", "\t"));
			}
		};
	}

	// What a source is made of: itself, and a Pbindef's keys and their values (setting one
	// key changes the value a key's proxy holds, not the source itself).
	*shape { |source|
		^[source] ++ if(source.isKindOf(PbindProxy)) {
			source.pairs.collect { |x, i| if(i.odd) { x.source } { x } }
		} { [] }
	}

	*same { |a, b| ^a.size == b.size and: { a.every { |x, i| x === b[i] } } }

	// [kind, name, proxy] of every defined proxy (one with a source). A name with a tab or a
	// newline in it (the record's separators) is left out.
	*proxies {
		var out = Array.new;
		Pdef.all.keysValuesDo { |name, proxy|
			proxy.source !? {
				out = out.add([if(proxy.source.isKindOf(PbindProxy)) { "Pbindef" } { "Pdef" },
					name, proxy])
			}
		};
		Tdef.all.keysValuesDo { |name, proxy| proxy.source !? { out = out.add(["Tdef", name, proxy]) } };
		Ndef.all.do { |space|
			space.envir.keysValuesDo { |name, proxy|
				proxy.source !? { out = out.add(["Ndef", name, proxy]) }
			}
		};
		^out.reject { |e| e[1].asString.any { |c| c == $\t or: { c == $\n } } }
	}

	*isPlaying { |kind, proxy|
		^if(kind == "Ndef") { proxy.isMonitoring } { proxy.isPlaying }
	}

	// 1: it plays; 0: it does not; 2: it played to the end of its stream (a Pdef or Tdef whose
	// player JITLib still calls playing, though no event is coming).
	*state { |kind, proxy|
		^case
			{ this.isPlaying(kind, proxy).not } { 0 }
			{ kind != "Ndef" and: { proxy.player.streamHasEnded } } { 2 }
			{ 1 }
	}

	// The `stop` tool: what plays in sclang, then CmdPeriod. The answer: the number of routines
	// code started (see `routines`), then a line "kind name" for each proxy that plays.
	*silence {
		var playing = this.proxies.select { |e| this.state(e[0], e[2]) == 1 };
		var told = ([this.routines] ++ playing.collect { |e| e[0] ++ " " ++ e[1] }).join("\n");
		CmdPeriod.run;
		^told
	}

	// Routines, tasks and pattern players waiting on the clocks (TempoClock's and the
	// SystemClock's), but for the proxies' own players and scorch's SkipJacks. A clock's queue
	// holds three slots an entry: its time, the item, and its priority.
	*routines {
		var own = IdentitySet.new, count = 0;
		this.proxies.do { |e| if(e[0] != "Ndef") { e[2].player !? { |p| own.add(p) } } };
		SkipJack.all.do { |jack| own.add(jack.task) };
		(TempoClock.all.asArray.collect(_.queue) ++ [thisProcess.prSchedulerQueue]).do { |queue|
			if(queue.size > 1) {
				forBy(1, queue.size - 1, 3) { |i|
					var item = queue[i + 1];
					if(item.isKindOf(Stream) and: { own.includes(item).not }) { count = count + 1 }
				}
			}
		};
		^count
	}

	*report { |kind, name, proxy, playing, quant, code, last, mute = "", playQuant|
		var text = this.definition(kind, name, proxy), how = "source";
		ScorchPatternEvents.flushNow;
		if(text.isNil) {
			how = if(code.isNil) { "approx" } { "code" };
			text = code ?? { this.definition(kind, name, proxy, false) };
		};
		Scorch.emit(Scorch.token ? "none", "pattern",
			[kind, playing, quant.asCompileString, how, mute, playQuant.asCompileString, name]
				.join("\t")
			++ "\n" ++ text);
	}

	// The code that defines the proxy again, or nil when its source's compile string does
	// not compile back to the same source (`strict` false: that string anyway).
	*definition { |kind, name, proxy, strict = true|
		var args = if(kind == "Pbindef") {
			proxy.source.pairs.collect { |x, i| if(i.odd) { x.source } { x } }
		} { [proxy.source] };
		var texts = args.collect { |x| x.asCompileString };
		if(strict and: { texts.any { |t| this.roundTrips(t).not } }) { ^nil };
		^kind ++ "(" ++ ([name.asCompileString] ++ texts).join(", ") ++ ")"
	}

	// A compile string names the same thing again: it parses (quietly) and prints the same.
	*roundTrips { |text|
		var func;
		// what prints as "a Buffer" or "an Object" does not parse: never compile it (the
		// compiler's complaint would show in the request's posts)
		if(text.isNil or: { text.contains("open Function") }
			or: { text.findRegexp("(^|[^A-Za-z0-9_])an? [A-Z]").notEmpty }) { ^false };
		func = thisProcess.interpreter.compile(text);
		^func.notNil and: { { func.value.asCompileString == text }.try { false } }
	}

	*startScanner {
		scanner = SkipJack({ { this.scan(nil) }.try }, 0.5, name: "scorch-patterns", clock: SystemClock);
	}

	// After sclang restarted: define every entry again, then play those that played on the
	// next bar of the room's clock once scorch has told it the grid (or in 2 s at most).
	// entries: [kind, name, playing, how, text, quant, mute] each (mute: as recorded, put
	// back when it resumes).
	*restore { |entries|
		var done = Set.new;
		restoring = true;
		known = IdentityDictionary.new;
		entries.do { |e|
			var name = e[1].asSymbol, text = e[4];
			if(done.includes(text).not) {
				done.add(text);
				{ text.interpret }.try { |err| this.failed(name, err) };
			};
		};
		entries.do { |e|
			{ this.proxy(e[0], e[1].asSymbol) !? { |p| p.quant = e[5].interpret } }.try
		};
		entries.do { |e|
			this.proxy(e[0], e[1].asSymbol) !? { |p|
				known[(e[0] ++ ":" ++ e[1]).asSymbol] = [this.shape(p.source), e[2].binaryValue,
					p.quant, if(e[2]) { e[6] ? "" } { "" }, p.tryPerform(\playQuant)] }
		};
		pending = entries.select { |e| e[2] };
		// code that defined them may have played them now: they wait for the bar too
		pending.do { |e| { this.proxy(e[0], e[1].asSymbol) !? { |p| p.stop } }.try };
		if(gridTold) { this.resume } {
			SystemClock.sched(2, { if(restoring) { this.resume }; nil })
		};
	}

	*proxy { |kind, name|
		^switch(kind.asString,
			"Ndef", { Ndef.all.values.detect { |space| space.envir[name].notNil } !? { |space|
				space.envir[name] } },
			"Tdef", { Tdef.all[name] },
			{ Pdef.all[name] })
	}

	// ScorchTempo.follow calls this: the clock now stands on scorch's grid.
	*gridReady {
		gridTold = true;
		if(restoring) { this.resume };
	}

	*resume {
		var clock = TempoClock.default, bar = ScorchTempo.beatsPerBar;
		var items = pending ? [];
		pending = nil;
		items.do { |e|
			var kind = e[0].asString, name = e[1].asSymbol;
			{
				if(kind == "Ndef") {
					clock.schedAbs(clock.nextTimeOnGrid(bar), {
						{ this.proxy(kind, name).play }.try { |err| this.failed(name, err) }; nil })
				} { this.proxy(kind, name).play(quant: bar) }
			}.try { |err| this.failed(name, err) };
		};
		// muted again before their first event: a Pdef's player exists now; an Ndef plays
		// and a Tdef starts on the bar, just before this
		items.do { |e|
			if(e[0] != "Ndef" and: { e[0] != "Tdef" } and: { (e[6] ? "") != "" }) {
				{ ScorchPatternOps.setMute(this.opsKind(e[0]), e[1].asSymbol, e[6]) }.try
			}
		};
		clock.schedAbs(clock.nextTimeOnGrid(bar), {
			items.do { |e|
				if((e[0] == "Ndef" or: { e[0] == "Tdef" }) and: { (e[6] ? "") != "" }) {
					{ ScorchPatternOps.setMute(e[0], e[1].asSymbol, e[6]) }.try
				}
			};
			restoring = false; this.scan(nil); nil
		});
	}

	*opsKind { |kind| ^if(kind.asString == "Pbindef") { "Pdef" } { kind.asString } }

	*failed { |name, err|
		Scorch.emit(Scorch.token ? "none", "pattern-error",
			name.asString ++ ": " ++ (err.tryPerform(\errorString) ? err.asString));
	}
}
