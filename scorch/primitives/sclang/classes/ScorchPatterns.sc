// What plays in sclang: Pdef, Pbindef, Tdef and Ndef, as scorch records them and brings
// them back after sclang restarts (scorch/primitives/sclang/patterns.py reads the records).
//
// Nothing of JITLib is overridden: `scan` compares the proxies' registries (Pdef.all,
// Tdef.all, Ndef.all) with what was last reported, after each request scorch runs
// (Scorch.eval) and twice a second for changes made by routines and responders. A change
// is one record, on the session's token:
//   pattern       "kind TAB playing TAB quant TAB how TAB mute TAB name NEWLINE text"
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
			var playing = this.isPlaying(kind, proxy), quant = proxy.quant;
			var mute = ScorchPatternOps.muteState(kind, name);
			var last = known[id];
			seen[id] = true;
			if(last.isNil or: { this.same(last[0], source).not } or: { last[1] != playing }
				or: { last[2] != quant } or: { last[3] != mute }) {
				known[id] = [source, playing, quant, mute];
				this.report(kind, name, proxy, playing, quant, code, last, mute);
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
		// isActive: a Pdef or Tdef whose stream ended is no longer playing (isPlaying
		// stays true until it is stopped)
		^if(kind == "Ndef") { proxy.isMonitoring } { proxy.isActive }
	}

	*report { |kind, name, proxy, playing, quant, code, last, mute = ""|
		var text = this.definition(kind, name, proxy), how = "source";
		if(text.isNil) {
			how = if(code.isNil) { "approx" } { "code" };
			text = code ?? { this.definition(kind, name, proxy, false) };
		};
		Scorch.emit(Scorch.token ? "none", "pattern",
			[kind, playing.binaryValue, quant.asCompileString, how, mute, name].join("\t")
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
				known[(e[0] ++ ":" ++ e[1]).asSymbol] = [this.shape(p.source), e[2], p.quant,
					if(e[2]) { e[6] ? "" } { "" }] }
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
