// scorch's guard: sclang's ways out of SuperCollider closed to the code scorch runs in it,
// unless the installation allows them. Shell commands (unixCmd, systemCmd, Pipe,
// runInTerminal), file writes outside the installation's folders (File, SoundFile,
// archives, Image, /b_write to scsynth: Buffer.write, Server.record) and changes to the
// class library's paths (Platform.recordingsDir_, LanguageConfig) are refused, each with a
// ScorchGuardError saying what was refused and the config key that allows it. The methods
// that do them are overwritten in SystemOverwrites/ScorchGuardOverwrites.sc to call here.
//
// Inactive while the class library starts (its own start-up writes and runs what it
// needs); `activate` turns it on for good: Scorch.install, eval and check call it, so
// every request (and whatever it leaves running: routines, responders, patterns) is
// guarded, from the first request a new class library runs. What is allowed comes from
// the file scorch wrote (scorch/primitives/sclang/guard.py), named by SCORCH_GUARD in the
// environment sclang started with (/proc/self/environ: setenv cannot change it). No file:
// everything refused. A guard against mistakes and injected instructions, not a sandbox
// (docs/operations.md says what it leaves open).
ScorchGuard {
	classvar active = false, shellAllowed = false, own, allowed, denied, source;
	classvar bWrite;  // the /b_write command, as sclang may name it
	// What rewrites the messages to a room's own scsynth after the guard passed them
	// (ScorchStage, in a room's class library; nil in the guard's alone). Set once.
	classvar <stage;

	*stage_ { |keeper| if(stage.isNil) { stage = keeper } }

	*initClass { bWrite = IdentitySet[\b_write, '/b_write', 33] }

	*activate {
		if(active) { ^this };
		active = true;  // first: whatever fails below leaves everything refused
		shellAllowed = false;
		own = [];
		allowed = [];
		denied = [];
		{ this.prRead } .try { |err| source = "unreadable: " ++ err.errorString };
		denied = denied ++ this.prLibraryFolders;
	}

	// What the guard holds, for people and tests.
	*describe {
		^"active: % shell: % source: %\nown: %\nallow: %\ndeny: %".format(
			active, shellAllowed, source, own, allowed, denied)
	}

	// A shell command: refused unless the installation allows the shell.
	*shell { |what, command|
		if(active and: { shellAllowed.not }) {
			this.refuse("% (%)".format(what, this.shown(command)), "runs a shell command")
		}
	}

	// A change to where the class library reads or writes: refused unless the shell is allowed.
	*change { |what, value|
		if(active and: { shellAllowed.not }) {
			this.refuse("% (%)".format(what, this.shown(value)),
				"changes a path of the class library")
		}
	}

	// A file written, created or deleted at `path`: refused outside the allowed folders.
	*write { |what, path|
		if(this.allowsWrite(path).not) {
			this.refuse("% (%)".format(what, this.shown(path)),
				"writes a file outside the folders this installation allows ("
				++ (if((own ++ allowed).isEmpty) { "none" } { (own ++ allowed).join(", ") }) ++ ")",
				"[files] allow (a folder), or [security] sclang_shell = true,")
		}
	}

	// Whether an fopen mode writes: "w", "a" or "+" in it (anything but a string does).
	*writes { |mode| ^mode.isString.not or: { mode.any { |c| "wa+".includes(c) } } }

	// An OSC message to a server: a /b_write (scsynth writes a file) goes where `write` says;
	// one in a completion message (scsynth runs the last argument of an asynchronous
	// command: an array, or a blob, which is refused) or in raw bytes too. Every message
	// sclang sends comes here: it looks at the first and the last argument only.
	*osc { |msg|
		var last;
		if(active.not or: { shellAllowed }) { ^this };
		if(msg.isKindOf(RawArray)) { ^this.prBlob(msg) };
		if(msg.isSequenceableCollection.not or: { msg.size < 2 }) { ^this };
		if(bWrite.includes(msg[0]) or: { msg[0].isString and: { bWrite.includes(msg[0].asSymbol) } }) {
			this.write("the OSC command /b_write", msg[2])
		};
		last = msg.last;
		if(last.isKindOf(Int8Array)) { ^this.prBlob(last) };
		if(last.isArray and: { last.isString.not }) { this.osc(last) };
	}

	*bundle { |msgs|
		if(active.not or: { shellAllowed }) { ^this };
		msgs.do { |msg| this.osc(msg) }
	}

	// Posted as well as thrown: code that catches the error (or a class library `protect`
	// whose cleanup fails next, as SynthDef:store's does) still leaves the refusal in sight.
	*refuse { |what, why, key = "[security] sclang_shell = true"|
		var text = "scorch refused %: it % and code sent through scorch may not; the "
			"installation allows it with % in its config".format(what, why, key);
		("WARNING: " ++ text).postln;
		ScorchGuardError(text).throw
	}

	*shown { |value|
		var text = value.asString;
		^if(text.size > 200) { text.keep(200) ++ "..." } { text }
	}

	// `path` absolute, its symlinks followed (as the system will follow them to write), or
	// nil when that cannot be told (a symlink to nowhere, no path at all).
	*resolve { |path|
		var text, parts, real = "";
		if(path.isKindOf(String).not and: { path.isKindOf(Symbol).not }) { ^nil };
		text = path.asString.standardizePath;
		if(text.isEmpty or: { text.includes(0.asAscii) }) { ^nil };
		if(text[0] != $/) { text = File.getcwd +/+ text };
		parts = text.split($/).reject { |p| p.isEmpty or: { p == "." } };
		parts.do { |part, i|
			var next, type;
			if(part == "..") { if(real.notEmpty) { real = real.dirname; if(real == "/") { real = "" } } } {
				next = real ++ "/" ++ part;
				type = File.type(next);
				case
				{ type == \not_found } {  // the rest is made as named: taken as it reads
					^this.prLexical(next, parts.drop(i + 1))
				}
				{ type == \symlink } {
					next = File.realpath(next);
					if(next.isNil) { ^nil };  // leads nowhere: where a write goes is not known
					real = if(next == "/") { "" } { next };
				}
				{ real = next }
			}
		};
		^if(real.isEmpty) { "/" } { real }
	}

	*allows { |path|
		if(own.any { |folder| this.prInside(path, folder) }) { ^true };
		if(denied.any { |folder| this.prInside(path, folder) }) { ^false };
		^allowed.any { |folder| this.prInside(path, folder) }
	}

	*prInside { |path, folder|
		^folder == "/" or: { path == folder } or: { path.beginsWith(folder ++ "/") }
	}

	*prLexical { |base, rest|
		var out = base;
		rest.do { |part| if(part == "..") { out = out.dirname } { out = out ++ "/" ++ part } };
		^out
	}

	// Bytes sent as a blob (a completion message) or raw: a /b_write in them is refused (they
	// are not parsed: any that holds the command's name, or starts with its number). A
	// SynthDef's bytes ("SCgf", /d_recv) are data.
	*prBlob { |bytes|
		var codes = bytes.asArray.collect { |b| b.asInteger.bitAnd(255) };
		if(codes.keep(4) == "SCgf".ascii) { ^this };
		if(codes.find("b_write".ascii).notNil or: { codes.keep(4) == [0, 0, 0, 33] }) {
			this.refuse("an OSC /b_write in raw bytes or a completion message",
				"may write a file where scsynth is told")
		}
	}

	// Whether `path` may be written: inside the allowed folders, its symlinks followed.
	*allowsWrite { |path|
		var real;
		if(active.not or: { shellAllowed }) { ^true };
		real = this.resolve(path);
		^real.notNil and: { this.allows(real) }
	}

	// The file named by SCORCH_GUARD in the environment sclang started with.
	*prRead {
		var name = this.prStartEnv("SCORCH_GUARD"), lines;
		if(name.isNil) { source = "no SCORCH_GUARD: everything refused"; ^this };
		source = name;
		lines = File.readAllString(name).split($\n);
		lines.do { |line, i|
			var space = line.indexOf($ ) ? line.size, kind = line.keep(space), path = line.drop(space + 1);
			case
			{ i == 0 } { shellAllowed = line == "shell 1" }
			{ kind == "own" } { own = own.add(path) }
			{ kind == "allow" } { allowed = allowed.add(path) }
			{ kind == "deny" } { denied = denied.add(path) }
		};
	}

	*prStartEnv { |key|
		var file, bytes = Int8Array.new, byte, entries;
		if(File.exists("/proc/self/environ").not) { ^key.getenv };
		file = File("/proc/self/environ", "rb");
		if(file.isOpen.not) { ^nil };
		while { (byte = file.getInt8).notNil } { bytes = bytes.add(byte) };
		file.close;
		entries = bytes.collect { |b| if(b == 0) { $\n } { b.asInteger.bitAnd(255).asAscii } }
			.as(String).split($\n);
		entries.do { |entry| if(entry.beginsWith(key ++ "=")) { ^entry.copyToEnd(key.size + 1) } };
		^nil
	}

	// Where the class library and its configuration live: a file written there would run as
	// part of the next class library (a class, a startup file, an include path).
	*prLibraryFolders {
		var found = [Platform.userAppSupportDir, Platform.userConfigDir,
			Platform.userExtensionDir, Platform.systemExtensionDir, Platform.systemAppSupportDir,
			Platform.classLibraryDir, LanguageConfig.currentPath] ++ LanguageConfig.includePaths;
		^found.select(_.notNil).collect { |p| this.resolve(p) ? p }
	}
}

// What the guard throws: its message says what was refused and the config key that allows it.
ScorchGuardError : Error {}
