// Changes to one pattern or proxy while it plays, on the room's grid: scorch's `pattern`
// operation (scorch/api/ops/patterns.py, code from scorch/primitives/sclang/pattern_ops.py)
// calls these. Each answers the seconds until the change lands (0: now).
//
// A change due on a beat or a bar is made a little before it (LEAD beats): the events due
// on that beat are computed when it comes, so they are the first to play the change (a
// Pdef's or a Pbindef key's own quant then swaps its stream on that same beat).
ScorchPatternOps {
	classvar <muted, soloed, fading;
	const lead = 0.05;

	// Run `func` just before the next multiple of `grid` beats of the room's clock
	// (0: now); then report what changed (`text`: the code that defines it now, or nil).
	*atGrid { |grid, func, text|
		var clock = TempoClock.default, at, wait;
		if(grid <= 0) { func.value; ScorchPatterns.scan(text); ^0 };
		at = clock.nextTimeOnGrid(grid) - lead;
		wait = (at - clock.beats).max(0) / clock.tempo;
		clock.schedAbs(at.max(clock.beats), {
			{ func.value } .try { |err| ScorchPatterns.failed("change", err) };
			ScorchPatterns.scan(text);
			nil
		});
		^wait
	}

	*grid { |when|
		^switch(when.asString, "beat", { 1 }, "bar", { ScorchTempo.beatsPerBar }, { 0 })
	}

	// The proxy, or an error naming it (the operation checked it exists; sclang may differ).
	*find { |kind, name|
		^ScorchPatterns.proxy(kind, name) ?? {
			Error("no % %: it is not defined in this room".format(kind, name)).throw
		}
	}

	*replace { |kind, name, source, when, text|
		var proxy = this.find(kind, name);
		^this.atGrid(this.grid(when), { proxy.source = source }, text)
	}

	*setKey { |name, key, value, when|
		this.find("Pdef", name);
		^this.atGrid(this.grid(when), { Pbindef(name, key, value) }, nil)
	}

	*play { |kind, name, when|
		var proxy = this.find(kind, name), grid = this.grid(when);
		^this.atGrid(grid, {
			if(kind == "Ndef") { proxy.play } {
				// a new player: one a CmdPeriod caught waiting for its quant never plays again,
				// and a fade's (under way or just ended) would stop when the fade's stop comes
				if(proxy.isPlaying.not or: { this.fades(proxy) }) { proxy.stop };
				proxy.play(quant: 0);
				proxy.playQuant = grid  // the grid it started on (atGrid's), as `playing` tells
			}
		}, nil)
	}

	*stop { |kind, name, when|
		var proxy = this.find(kind, name);
		^this.atGrid(this.grid(when), {
			this.unmuteOne(kind, name);
			proxy.stop
		}, nil)
	}

	// Fade out over `seconds`, then stop: an Ndef's monitor fades; a Pdef's events' \amp
	// falls to 0 (PfadeOut around its stream), and it stops at the end.
	*fade { |kind, name, seconds, when|
		var proxy = this.find(kind, name);
		if(kind == "Tdef") { Error("a Tdef has no level to fade: stop it").throw };
		^this.atGrid(this.grid(when), {
			if(kind == "Ndef") { proxy.stop(seconds) } {
				var player = proxy.player, clock = TempoClock.default;
				player !? {
					player.stream = PfadeOut(player.stream, seconds * clock.tempo).asStream;
					fading = (fading ?? { IdentitySet.new }).add(player);
					clock.sched(seconds * clock.tempo + lead, {
						fading.remove(player);
						if(proxy.player === player) { proxy.stop; ScorchPatterns.scan(nil) }; nil
					})
				}
			}
		}, nil)
	}

	// Its player fades out, or has faded out and waits for the fade's stop.
	*fades { |proxy|
		^proxy.player.notNil and: { fading.notNil and: { fading.includes(proxy.player) } }
	}

	// Mute: a Pdef's events become rests, an Ndef's monitor goes silent, a Tdef pauses.
	*mute { |kind, name, when|
		var proxy = this.find(kind, name);
		^this.atGrid(this.grid(when), { this.muteOne(kind, name) }, nil)
	}

	*unmute { |kind, name, when|
		^this.atGrid(this.grid(when), {
			if(name.isNil) { soloed = nil; this.mutedList.do { |e| this.unmuteOne(e[0], e[1]) } } {
				this.unmuteOne(kind, name)
			}
		}, nil)
	}

	// Every other pattern and proxy that plays is muted (unmute with no name ends it).
	*solo { |kind, name, when|
		this.find(kind, name);
		^this.atGrid(this.grid(when), {
			this.unmuteOne(kind, name);
			soloed = this.id(kind, name);
			ScorchPatterns.proxies.do { |e|
				var k = if(e[0] == "Pbindef") { "Pdef" } { e[0] };
				if((k != kind or: { e[1] != name }) and: { ScorchPatterns.isPlaying(e[0], e[2]) }) {
					this.muteOne(k, e[1])
				}
			}
		}, nil)
	}

	*id { |kind, name| ^(kind ++ " " ++ name).asSymbol }

	*mutedList {
		^(muted ?? { IdentityDictionary.new }).values.asArray
	}

	*muteOne { |kind, name|
		var proxy = ScorchPatterns.proxy(kind, name), id = this.id(kind, name);
		muted = muted ?? { IdentityDictionary.new };
		if(soloed == id) { soloed = nil };
		if(proxy.isNil or: { muted[id].notNil }) { ^this };
		switch(kind.asString,
			"Ndef", { muted[id] = [kind, name, proxy.vol]; proxy.vol = 0 },
			"Tdef", { muted[id] = [kind, name]; proxy.pause },
			{ proxy.player !? { |p| p.mute; muted[id] = [kind, name, p] } });
	}

	*unmuteOne { |kind, name|
		var proxy = ScorchPatterns.proxy(kind, name), id = this.id(kind, name), entry;
		entry = (muted ?? { IdentityDictionary.new }).removeAt(id);
		if(proxy.isNil or: { entry.isNil }) { ^this };
		switch(kind.asString,
			"Ndef", { proxy.vol = entry[2] },
			"Tdef", { proxy.resume },
			{ if(proxy.player === entry[2]) { entry[2].unmute } });
	}

	// "muted", "solo" or "" (neither): what scorch records (a Pbindef is a Pdef here). A
	// Pdef muted, then stopped and played again by code has a new player: not muted.
	*muteState { |kind, name|
		var id = this.id(if(kind == "Pbindef") { "Pdef" } { kind }, name);
		var entry = (muted ?? { IdentityDictionary.new })[id], proxy;
		if(entry.notNil) {
			if(entry.size < 3 or: { entry[2].isNumber }) { ^"muted" };
			proxy = ScorchPatterns.proxy(entry[0], entry[1]);
			if(proxy.notNil and: { proxy.player === entry[2] }) { ^"muted" };
			muted.removeAt(id);
		};
		^if(soloed == id) { "solo" } { "" }
	}

	// Put one back as recorded (a restore, an undo, a session load): now.
	*setMute { |kind, name, state|
		var id = this.id(kind, name);
		switch(state.asString,
			"muted", { this.muteOne(kind, name) },
			"solo", { this.unmuteOne(kind, name); soloed = id },
			{ this.unmuteOne(kind, name); if(soloed == id) { soloed = nil } });
		ScorchPatterns.scan(nil);
	}

	// "kind name" of every muted pattern, one a line (what `playing` shows).
	*mutedText {
		^this.mutedList.collect { |e| e[0] ++ " " ++ e[1] }.join("\n")
	}
}
