// scorch's evaluator: runs the code scorch sends, and reports what happened as records
// that posted text cannot be mistaken for (scorch/primitives/sclang/protocol.py).
// sclang loads it from scorch's class directory (`sclang -l <yaml>`), so user code cannot
// redefine these methods at run time.
//
// A request is two silent stdin chunks:
//   Scorch.eval("ID", "<code as a string literal>", raw)\x1b  Scorch.done("ID")\x1b
// A record is one post:  @@scorch:<id>:<name>:<payload bytes>@@<payload>\n
Scorch {
	classvar <token, active, <>valueLimit = 1048576, <>receiverLimit = 1024, <>frameLimit = 32;
	classvar endReattach;  // ends the asks of a re-attach that scorch gave up on

	*install { |aToken, replyId|
		ScorchGuard.activate;  // from here on, sclang's ways out are the guard's to allow
		token = aToken;
		active = nil;
		thisProcess.mainThread.exceptionHandler = this;
		ShutDown.add(this);
		ScorchPatternEvents.install;  // what patterns play, told in batches
		this.emit(token, "installed", "");
		replyId !? { this.emit(replyId, "installed", "") };
	}

	// One record, written by one post call (postln would write its newline separately).
	*emit { |id, name, payload|
		payload = payload.asString;
		("@@scorch:" ++ id ++ ":" ++ name ++ ":" ++ payload.size ++ "@@" ++ payload ++ "\n").post;
	}

	*eval { |id, code, raw = false, at|
		var interp = thisProcess.interpreter, func, result, string;
		ScorchGuard.activate;  // a request that ran before `install` in a new class library
		thisProcess.mainThread.exceptionHandler = this;
		active = id;
		ScorchServer.commands = Set.new;
		this.prepare(id, code, raw) !? { |prepared| code = prepared };
		this.emit(id, "compile", "");
		func = interp.compile(code);
		if(func.isNil) {
			active = nil;
			^this.emit(id, "end", "parse");
		};
		interp.cmdLine = code;
		this.emit(id, "start", "");
		result = if(at.isNil) { func.value } { this.schedule(func, at, id) };
		{ ScorchPatterns.scan(if(raw) { nil } { code }) }.try;  // what it did to Pdef, Ndef...
		thisProcess.nowExecutingPath = nil;  // as interpretPrintCmdLine does
		string = result.asString;  // exactly what sclang prints after "-> "
		this.emitSent(id);
		active = nil;
		if(string.size > valueLimit) {
			this.emit(id, "value-size", string.size);
			string = string.keep(valueLimit);
		};
		this.emit(id, "value", string);
		this.emit(id, "end", "ok");
		interp.codeDump.value(code, result, func, interp);
	}

	// The commands the request sent to `s` while it ran (names or numbers), when it sent any.
	*emitSent { |id|
		var commands = ScorchServer.commands;
		ScorchServer.commands = nil;
		if(commands.size > 0) { this.emit(id, "server-sent", commands.asArray.join(" ")) };
	}

	// Run `func` so that scsynth hears it at the wall-clock time `when` (Unix seconds): on
	// the SystemClock s.latency before `when`, inside a bundle stamped `when`. Its own
	// messages and the first events of the patterns it starts (which add s.latency too)
	// then reach scsynth at `when`. Its value and errors come later, on the console, told
	// as request `id`'s (a `running` record says when it begins).
	*schedule { |func, when, id|
		var server = Server.default, lead = server.latency ? 0.2;
		var offset = Date.getDate.rawSeconds - Main.elapsedTime;  // wall = elapsed + offset
		var target = when - offset, runAt = max(thisThread.seconds, target - lead);
		SystemClock.schedAbs(runAt, {
			this.emit(token ? "none", "running", id ? "");
			server.makeBundle(max(0, target - thisThread.seconds), func);
			nil
		});
		^"scheduled: runs at % (in % s)".format(when.asStringPrec(17),
			(target - Main.elapsedTime).round(0.001))
	}

	// The user's preprocessor, as interpretPrintCmdLine runs it; what it posts is the
	// request's (`prepare` opens the posts). nil: no preprocessor (or scorch's own code).
	*prepare { |id, code, raw|
		var pre = thisProcess.interpreter.preProcessor;
		if(raw or: { pre.isNil }) { ^nil };
		this.emit(id, "prepare", "");
		^pre.value(code, thisProcess.interpreter)
	}

	// Compile without running: only the compiler's messages and `end` parse|ok.
	*check { |id, code, raw = false|
		var interp = thisProcess.interpreter, func;
		ScorchGuard.activate;
		thisProcess.mainThread.exceptionHandler = this;
		active = id;
		this.prepare(id, code, raw) !? { |prepared| code = prepared };
		this.emit(id, "compile", "");
		func = interp.compile(code);
		active = nil;
		this.emit(id, "end", if(func.isNil) { "parse" } { "ok" });
	}

	// Its own chunk after every request: it runs even when the request was cut short by a
	// top-level ^ or by halt, and puts the handler back.
	*done { |id|
		thisProcess.mainThread.exceptionHandler = this;
		if(active == id) { active = nil; this.emitSent(id); this.emit(id, "end", "aborted") };
		ScorchServer.commands = nil;
		this.emit(id, "done", "");
	}

	// Attach the default server to scsynth on `port` (once per sclang start or recompile),
	// after reading the library's SynthDescs from `descs` (a directory, or nil). Answered by
	// `attached` "<clientID> <asks>" (asks: /notify sent again before scsynth answered), or
	// `attach-failed` "<why>" when scsynth refuses the login (too many users).
	*attach { |name, port, id, host = "127.0.0.1", descs|
		var server;
		descs !? { this.readDescs(descs) };
		server = Server.named[name] ?? { ScorchServer.remote(name, NetAddr(host, port)) };
		Server.default = server;
		server.addr.port = port;
		ScorchStage.port = port;  // its messages pass the room's guard from now on
		thisProcess.interpreter.s = server;
		server.aliveThreadPeriod = 0.02;
		fork {
			var asks = this.login(server, id);
			asks !? {
				server.aliveThreadPeriod = 0.7;
				// A remote server never runs ServerBoot, so the library's own SynthDefs
				// (\default for Pbind, JITLib's system_link_*) would be missing.
				// (The library's own came from scorch, which restores them: not sent again.)
				SynthDescLib.global.synthDescs.do { |desc|
					desc.def !? { |def| if(def.isKindOf(ScorchSynthDef).not) { def.send(server) } }
				};
				this.syncSurely(server);
				this.emit(id, "attached", server.clientID.asString ++ " " ++ asks);
			}
		};
	}

	// Log `server` in to scsynth and finish its boot; return how many times /notify was sent
	// again (nil: scsynth refused the login). Call from a Routine.
	// The status watcher would log in only after a /status reply, by a single /notify,
	// and finish after a Server.sync: under a parallel boot a datagram lost on a loaded
	// loopback (a reply, the /notify, the /synced) left the attach waiting out its whole
	// timeout. So the watcher is kept out of it (`notified` set first, before any reply is
	// read), and the login is asked here at once, then every `every` s until scsynth
	// answers; "already registered" means an earlier ask got through.
	*login { |server, id, every = 0.5|
		var sw = server.statusWatcher, answered = false, refused, asks = -1, due = 0;
		var take = { |clientID, maxLogins|
			sw.notified = false;  // clientID can only be set while the server is not running
			server.prHandleClientLoginInfoFromServer(clientID, maxLogins);
			sw.notified = true;
			answered = true;
		};
		var done = OSCFunc({ |msg| if(answered.not) { take.(msg[2], msg[3]) } },
			'/done', server.addr, argTemplate: ['/notify']);
		var fail = OSCFunc({ |msg|
			if(answered.not) {
				if(msg[2].asString.contains("already registered")) { take.(msg[3]) } {
					refused = msg[2].asString }
			}
		}, '/fail', server.addr, argTemplate: ['/notify']);
		sw.notified = true;
		while { answered.not and: { refused.isNil } } {
			if(due <= 0) { server.sendMsg("/notify", 1, server.clientID); asks = asks + 1; due = every };
			0.005.wait;
			due = due - 0.005;
		};
		done.free;
		fail.free;
		refused !? { this.emit(id, "attach-failed", refused); ^nil };
		// As the watcher's prFinalizeBoot does, with a sync that cannot be lost.
		ServerBoot.run(server);
		this.syncSurely(server, every);
		server.initTree;
		sw.serverRunning = true;
		server.changed(\serverRunning);
		^asks
	}

	// The library's SynthDefs, which scsynth got from scorch by /d_recv, into the
	// SynthDescLib (scorch/primitives/synthdefs/descs.py): patterns then send every
	// control, and no gate to a def without one. `names`: only these (nil: all). Each
	// desc's def is a ScorchSynthDef holding the bytes (sent again only when code asks).
	*readDescs { |dir, names|
		var lib = SynthDescLib.global;
		names = names ?? { (dir +/+ "*.scsyndef").pathMatch.collect { |p| p.basename.splitext[0] } };
		names.do { |name|
			var path = dir +/+ name ++ ".scsyndef", meta, bytes;
			if(File.exists(path)) {
				this.safe {  // one unreadable file must not stop the attach
					meta = File.readAllString(path.splitext[0] ++ ".scmeta").interpret;
					meta = if(meta.isKindOf(Dictionary)) { meta } { () };
					File.use(path, "rb", { |file|  // a File reads fast, a CollStream slowly
						bytes = Int8Array.newClear(file.length);
						file.read(bytes);
						file.seek(0, 0);
						lib.readStream(file, false)
					}).do { |desc|
						desc.metadata = meta;
						desc.def = ScorchSynthDef.fromBytes(desc.name, bytes, meta);
					}
				}
			}
		}
	}

	// Server.sync, asking again until scsynth answers: under a parallel boot a datagram to or
	// from scsynth can be lost on a loaded loopback, and Server.sync would then wait for
	// ever (the attach was lost for its whole timeout). Every ask carries the same id, so
	// any answer means what was sent before the first ask is done. Call from a Routine.
	*syncSurely { |server, every = 0.25|
		var id = UniqueID.next, synced = false, due = 0;
		var responder = OSCFunc({ |msg| if(msg[1] == id) { synced = true } }, '/synced', server.addr);
		while { synced.not } {
			if(due <= 0) { server.sendMsg("/sync", id); due = every };
			0.005.wait;
			due = due - 0.005;
		};
		responder.free;
	}

	// After scorch restarted scsynth (on the same port or another): register again with the
	// SAME clientID, keep the node/bus/buffer allocators, and let registered nodes read "not
	// playing" until the new server's /n_go says otherwise. scorch restores its nodes after
	// the `reattached` record, so their /n_go reaches the NodeWatcher.
	*reattach { |server, port, id|
		var watcher = NodeWatcher.all[server.name], sw = server.statusWatcher, answered, done, fail;
		// mutate the NetAddr in place: NodeWatcher, the status watcher and every OSCFunc
		// made with srcID: s.addr hold this very object and compare its port on arrival
		if(port.notNil and: { port != server.addr.port }) { server.addr.port = port };
		ScorchStage.port = server.addr.port;
		watcher !? { watcher.nodes.do { |n| n.isPlaying = false; n.isRunning = false } };
		if(sw.aliveThread.isNil) {
			// a quit tore the status watcher down: bring it back without the boot sequence,
			// which would reset the allocators and run ServerBoot/ServerTree again
			sw.notified = true;
			sw.serverRunning = true;
			server.startAliveThread;
		};
		// Asked again every 0.5 s until scsynth answers: one lost datagram must not cost the
		// whole timeout. "already registered" answers an ask whose /done was lost.
		answered = false;
		done = OSCFunc({ |msg| if(answered.not) { answered = true; this.prReattached(server, id, msg[2]) } },
			'/done', server.addr, argTemplate: ['/notify']);
		fail = OSCFunc({ |msg|
			if(answered.not) {
				answered = true;
				if(msg[2].asString.contains("already registered")) {
					this.prReattached(server, id, msg[3])
				} { this.emit(id, "reattach-failed", msg[1..].asString) }
			}
		}, '/fail', server.addr, argTemplate: ['/notify']);
		endReattach.value;
		endReattach = { answered = true; done.free; fail.free };
		fork {
			var asks = 0;  // scorch gives up on a reattach long before 30 s
			while { answered.not and: { (asks = asks + 1) <= 60 } } {
				server.sendMsg("/notify", 1, server.clientID);
				0.5.wait
			};
			done.free;
			fail.free;
		};
		server.sendStatusMsg;  // its reply clears `unresponsive` now
	}

	*prReattached { |server, id, clientID|
		this.emit(id, "reattached", clientID);
		if(server.respondsTo(\scorchRebooted)) { server.scorchRebooted };
	}

	// sclang is going away (end of stdin, recompile): tell scorch first.
	*doOnShutDown { this.emit(token ? "none", "exiting", "") }

	// The main thread's exceptionHandler: every error nobody caught arrives here, its stack
	// intact. Not a `try`: a top-level ^ would leave a dead try handler behind.
	*handleError { |err|
		var id = active, trace = this.getBackTrace;
		if(id.notNil) {
			active = nil;
			this.emitSent(id);
			this.fields(id, "error-", err, trace);
			this.emit(id, "end", "error");
			this.halt;  // abort the rest of the request, as sclang does after reporting
		} {
			// nobody waits: a routine, a scheduled function, an OSC/MIDI responder...
			this.fields(token, "async-", err, trace);
			this.emit(token, "async-end", "");
			nil.handleError(err);  // sclang's own report on the console, then halt
		}
	}

	*fields { |id, prefix, err, trace|
		var isExc = err.isKindOf(Exception);
		this.emit(id, prefix ++ "class", this.realClass(err).name);
		this.emit(id, prefix ++ "string", this.safe {
			if(isExc) { err.errorString } { "ERROR: " ++ err.asString } });
		if(isExc) { this.emit(id, prefix ++ "what", this.safe { err.what.asString }) };
		if(err.isKindOf(MethodError)) {
			this.emit(id, prefix ++ "receiver",
				this.safe { this.bounded(err.receiver.asString, receiverLimit) });
			this.emit(id, prefix ++ "receiver-class", this.safe { this.realClass(err.receiver).name });
		};
		if(err.isKindOf(DoesNotUnderstandError)) {
			this.emit(id, prefix ++ "selector", err.selector);
			this.emit(id, prefix ++ "args", this.safe { this.bounded(err.args.asString, receiverLimit) });
		};
		if(err.isKindOf(PrimitiveFailedError)) {
			this.emit(id, prefix ++ "primitive", err.failedPrimitiveName)
		};
		if(isExc and: { err.path.notNil }) { this.emit(id, prefix ++ "path", err.path) };
		this.safe { this.frames(trace, true) }.do { |line| this.emit(id, prefix ++ "frame", line) };
		if(isExc and: { err.protectedBacktrace.notNil }) {
			this.safe { this.frames(err.protectedBacktrace, false) }.do { |line|
				this.emit(id, prefix ++ "protected", line) }
		};
	}

	*safe { |func| ^func.try { |e| "<" ++ this.realClass(e).name ++ " while describing>" } }

	*bounded { |string, limit| ^if(string.size > limit) { string.keep(limit) ++ "...etc..." } { string } }

	// err.class lies for SubclassResponsibilityError, ShouldNotImplementError, DeprecatedError
	// (an instance variable named 'class'); isMemberOf is a primitive and does not.
	*realClass { |obj|
		var c = obj.class;
		^if(c.isKindOf(Class) and: { obj.isMemberOf(c) }) { c } {
			Exception.allSubclasses.detect { |k| obj.isMemberOf(k) } ?? { Object }
		}
	}

	// Frames of the failing code, innermost first, as "user|library<TAB>description".
	// Left out: the error machinery down to Object:throw, and Scorch:eval (or :check, where
	// a user's preprocessor may fail) and below.
	*frames { |trace, skipThrow|
		var out = Array.new, f = trace, def, n = 0;
		var stops = [this.class.findMethod(\eval), this.class.findMethod(\check)];
		var seenThrow = false;
		if(skipThrow) {
			while { f.notNil and: { seenThrow.not } and: { n < 20 } } {
				def = f.functionDef;
				if(def.isKindOf(Method) and: { def.name == \throw }) { seenThrow = true };
				f = f.caller; n = n + 1;
			};
			if(seenThrow.not) { f = trace };
		};
		n = 0;
		while { f.notNil and: { stops.includes(f.functionDef).not } and: { n < frameLimit } } {
			out = out.add(this.describeFrame(f));
			f = f.caller; n = n + 1;
		};
		^out
	}

	*describeFrame { |frame|
		var def = frame.functionDef;
		^if(def.isKindOf(Method)) {
			"library\t" ++ def.ownerClass.name ++ ":" ++ def.name
		} {
			(if(this.isInterpreted(frame)) { "user" } { "library" })
			++ "\ta FunctionDef\t" ++ (def.sourceCode ? "").keep(200)
		}
	}

	// A closure frame is the user's if its outermost lexical frame is interpreted code
	// (Interpreter:functionCompileContext) rather than a class-library method.
	*isInterpreted { |frame|
		var c = frame, home, n = 0;
		while { c.notNil and: { n < 100 } } {
			home = c.functionDef;
			c = if(c.context === c) { nil } { c.context };
			n = n + 1;
		};
		^home.isKindOf(Method).not or: { home === Interpreter.findMethod(\functionCompileContext) }
	}
}
