// The room's side of its safety stage (scorch/primitives/scsynth/layout.py). Every message
// this sclang sends to its scsynth passes ScorchStage.message before it leaves (after the
// guard, in NetAddr's sends: guard/SystemOverwrites/ScorchGuardOverwrites.sc): code can
// neither place a node after the stage nor move, free, pause or set the stage, the room
// group or scorch's readers. The root group (0) is the room group: code plays in it as it
// would in the root, and scsynth's replies say 0 where they said the room group. The ids are layout.py's (a test compares).
ScorchStage {
	classvar <room = 268435454, <stage = 268435453, <readers = 268435452, <meter = 268435455;
	classvar <>port, kinds, <refused = 0, lastPost = -inf, replies;

	*initClass {
		ScorchGuard.stage = this;  // NetAddr's sends ask it, after the guard
		kinds = IdentityDictionary.new;
		[
			[\s_new, 9, \synth], [\s_newargs, 59, \synth], [\g_new, 21, \groups],
			[\p_new, 63, \groups], [\n_free, 11, \free], [\s_noid, 49, \free],
			[\n_before, 18, \moves], [\n_after, 19, \moves], [\n_order, 62, \order],
			[\g_head, 22, \into], [\g_tail, 23, \into], [\n_run, 12, \run],
			[\n_set, 15, \first], [\n_setn, 16, \first], [\n_fill, 17, \first],
			[\n_map, 14, \first], [\n_mapn, 48, \first], [\n_mapa, 60, \first],
			[\n_mapan, 61, \first], [\n_cmd, 13, \first], [\u_cmd, 20, \first],
			[\g_freeAll, 24, \groupsOnly], [\g_deepFree, 50, \groupsOnly],
			[\g_queryTree, 57, \tree], [\g_dumpTree, 56, \tree],
			[\d_recv, 5, \done], [\d_load, 6, \done], [\d_loadDir, 7, \done],
			[\b_alloc, 28, \done], [\b_allocRead, 29, \done], [\b_read, 30, \done],
			[\b_write, 31, \done], [\b_free, 32, \done], [\b_close, 33, \done],
			[\b_zero, 34, \done], [\b_allocReadChannel, 54, \done], [\b_readChannel, 55, \done]
		].do { |row|
			kinds[row[0]] = row[2];
			kinds[("/" ++ row[0]).asSymbol] = row[2];
			kinds[row[1]] = row[2];
		};
		replies = IdentitySet['/n_go', '/n_end', '/n_off', '/n_on', '/n_move', '/n_info',
			'/g_queryTree.reply'];
	}

	// Whether messages to `addr` are this room's scsynth's.
	*guards { |addr| ^port.notNil and: { addr.port == port } }

	// One message as sclang sends it (command, args...) -> the messages to send instead:
	// an Array of them, empty when nothing is to be sent.
	*message { |msg|
		var kind, out;
		if(msg.isKindOf(Array).not or: { msg.size == 0 }) { ^[msg] };
		kind = msg[0];
		kind = kinds[if(kind.isString) { kind.asSymbol } { kind }];
		if(kind.isNil) { ^[msg] };
		// The common cases (a pattern's events) as they are, without a copy: a node, or a
		// new synth's id and target, that is an ordinary one.
		if(kind == \first and: { this.ordinary(msg[1]) }) { ^[msg] };
		if(kind == \synth and: { msg.size >= 5 } and: { this.ordinary(msg[4]) }
			and: { msg[3].isInteger } and: { msg[3] <= 4 }
			and: { this.ordinary(msg[2]) or: { msg[2] == -1 } }) { ^[msg] };
		out = this.perform(kind, this.sendable(msg));
		if(out.isNil) { this.refuse(msg); ^[] };
		^out
	}

	// The messages of a bundle (sendBundle's arguments after the time).
	*messages { |msgs|
		^msgs.collect { |msg| if(msg.isKindOf(Array)) { this.message(msg) } { [msg] } }.flatten(1)
	}

	// A raw packet goes as it is unless it holds a message that would be changed: refused.
	*rawAllowed { |bytes|
		var msgs = this.decode(bytes);
		if(msgs.isNil) { ^true };
		msgs.do { |msg|
			if(this.message(msg) != [msg]) { this.refuse(msg); ^false }
		};
		^true
	}

	// scsynth's replies about the room group speak of the root (in place, before any
	// responder sees them).
	*incoming { |addr, msg|
		if(port.notNil and: { addr.port == port } and: { msg.size > 2 }
			and: { msg[2] == room } and: { replies.includes(msg[0]) }) {
			msg[2] = 0
		}
	}

	*refuse { |msg|
		refused = refused + 1;
		if(Main.elapsedTime - lastPost > 1) {
			lastPost = Main.elapsedTime;
			("scorch: refused % (it would move, free, pause or set the room's safety stage or "
				++ "its groups, or place a node after the stage; node paths are refused too)")
			.format(msg.asCompileString.keep(200)).postln;
		}
	}

	// What sclang would put on the wire: arguments OSC cannot carry add nothing.
	*sendable { |msg|
		^msg.select { |x|
			x.isNumber or: { x.isString } or: { x.isKindOf(Symbol) }
			or: { x.isKindOf(Int8Array) } or: { x.isKindOf(Array) }
		}
	}

	// A node reference as scsynth reads it (nil: a node path, refused).
	*node { |x|
		^case
			{ x.isInteger } { x }
			{ x.isFloat } { x.asInteger }
			{ x.isString or: { x.isKindOf(Symbol) } } { nil }
			{ 0 }
	}

	*number { |x| ^case { x.isInteger } { x } { x.isFloat } { x.asInteger } { 0 } }

	*isRoot { |n| ^n == 0 or: { n == room } }

	// An Integer node id that is neither the root, the room group nor a kept node.
	*ordinary { |n|
		^n.isInteger and: { n != 0 } and: { n != room } and: { n != stage } and: { n != readers }
			and: { n != meter }
	}

	*isKept { |n| ^n == stage or: { n == readers } or: { n == meter } }

	// An add action and target -> where it goes (nil: refused).
	*place { |action, target|
		action = this.number(action);
		target = this.node(target);
		if(target.isNil) { ^nil };
		if(this.isRoot(target)) {
			^[if(action == 0 or: { action == 2 }) { 0 } { if(action > 4) { action } { 1 } }, room]
		};
		if(this.isKept(target)) { ^[1, room] };
		^[action, target]
	}

	*newId { |x| x = this.number(x); ^if(x == room or: { this.isKept(x) }) { -1 } { x } }

	*synth { |msg|
		var where;
		msg = msg.extend(max(msg.size, 5), 0);
		where = this.place(msg[3], msg[4]) ?? { ^nil };
		^[[msg[0], msg[1], this.newId(msg[2]), where[0], where[1]] ++ msg.drop(5)]
	}

	*groups { |msg|
		var out = [msg[0]], args = msg.drop(1);
		args = args.extend(args.size.roundUp(3), 0);
		args.clump(3).do { |triplet|
			var where = this.place(triplet[1], triplet[2]) ?? { ^nil };
			out = out ++ [this.newId(triplet[0]), where[0], where[1]];
		};
		^[out]
	}

	*free { |msg|
		var ids = msg.drop(1).collect { |x| this.node(x) ?? { ^nil } };
		ids = ids.reject { |n| n == room or: { this.isKept(n) } };
		^if(ids.isEmpty) { [] } { [[msg[0]] ++ ids] }
	}

	*moves { |msg|
		var runs = [], before = [18, \n_before, '/n_before', "/n_before", "n_before"].includes(msg[0]);
		var args = msg.drop(1);
		args = args.extend(args.size.roundUp(2), 0);
		args.clump(2).do { |pair|
			var a = this.node(pair[0]) ?? { ^nil }, b = this.node(pair[1]) ?? { ^nil };
			case
				{ this.isRoot(a) or: { this.isKept(a) } } { }
				{ this.isRoot(b) } { runs = runs.add([if(before) { "/g_head" } { "/g_tail" }, room, a]) }
				{ this.isKept(b) } { runs = runs.add(["/g_tail", room, a]) }
				{ runs = runs.add([msg[0], a, b]) };
		};
		^this.joined(runs)
	}

	// Consecutive messages of one command as one message.
	*joined { |runs|
		var out = [];
		runs.do { |run|
			if(out.notEmpty and: { out.last[0] == run[0] }) {
				out[out.size - 1] = out.last ++ run.drop(1)
			} { out = out.add(run) }
		};
		^out
	}

	*order { |msg|
		var where, ids;
		msg = msg.extend(max(msg.size, 3), 0);
		where = this.place(msg[1], msg[2]) ?? { ^nil };
		ids = msg.drop(3).collect { |x| this.node(x) ?? { ^nil } };
		ids = ids.reject { |n| this.isRoot(n) or: { this.isKept(n) } };
		^if(ids.isEmpty) { [] } { [[msg[0], where[0], where[1]] ++ ids] }
	}

	*into { |msg|
		var out = [msg[0]], args = msg.drop(1);
		args = args.extend(args.size.roundUp(2), 0);
		args.clump(2).do { |pair|
			var g = this.node(pair[0]) ?? { ^nil }, n = this.node(pair[1]) ?? { ^nil };
			if(this.isRoot(n).not and: { this.isKept(n).not }) {
				out = out ++ [if(this.isRoot(g) or: { this.isKept(g) }) { room } { g }, n]
			}
		};
		^if(out.size == 1) { [] } { [out] }
	}

	*run { |msg|
		var out = [msg[0]], args = msg.drop(1);
		args = args.extend(args.size.roundUp(2), 0);
		args.clump(2).do { |pair|
			var n = this.node(pair[0]) ?? { ^nil };
			if(this.isKept(n).not) { out = out ++ [if(this.isRoot(n)) { room } { n }, pair[1]] }
		};
		^if(out.size == 1) { [] } { [out] }
	}

	*first { |msg|
		var n;
		if(msg.size < 2) { ^[msg] };
		n = this.node(msg[1]) ?? { ^nil };
		if(this.isKept(n)) { ^nil };
		^[[msg[0], if(this.isRoot(n)) { room } { n }] ++ msg.drop(2)]
	}

	*groupsOnly { |msg|
		var ids = msg.drop(1).collect { |x| this.node(x) ?? { ^nil } };
		ids = ids.reject { |n| this.isKept(n) }.collect { |n| if(this.isRoot(n)) { room } { n } };
		^if(ids.isEmpty) { [] } { [[msg[0]] ++ ids] }
	}

	*tree { |msg|
		var out = [msg[0]], args = msg.drop(1);
		args = args.extend(args.size.roundUp(2), 0);
		args.clump(2).do { |pair|
			var g = this.node(pair[0]) ?? { ^nil };
			out = out ++ [if(this.isRoot(g)) { room } { g }, pair[1]]
		};
		^[out]
	}

	// An asynchronous command: its completion message (an Array, or raw bytes) is guarded.
	*done { |msg|
		var out = [];
		msg.do { |x, i|
			case
				{ i == 0 } { out = out.add(x) }
				{ x.isKindOf(Int8Array) } { if(this.rawAllowed(x)) { out = out.add(x) } { ^nil } }
				{ x.isKindOf(Array) and: { x.size > 1 } and: { x[1].isKindOf(Array) } } {
					x = this.messages(x.drop(1));
					if(x.notEmpty) { out = out.add([nil] ++ x) }
				}
				{ x.isKindOf(Array) } {
					x = this.message(x);
					case
						{ x.size == 1 } { out = out.add(x[0]) }
						{ x.size > 1 } { out = out.add([nil] ++ x) }
				}
				{ out = out.add(x) }
		};
		^[out]
	}

	// The messages of a raw OSC packet (nil: not one this can read).
	*decode { |bytes|
		var msgs = [], pos = 16, size;
		if(bytes.size < 4) { ^nil };
		if(bytes[0] == 35) {
			if(bytes.size < 16 or: { this.text(bytes, 0)[0] != "#bundle" }) { ^nil };
			while { pos + 4 <= bytes.size } {
				size = this.int(bytes, pos);
				if(size < 0 or: { pos + 4 + size > bytes.size }) { ^nil };
				msgs = msgs ++ (this.decode(bytes.copyRange(pos + 4, pos + 3 + size)) ?? { ^nil });
				pos = pos + 4 + size;
			};
			^msgs
		};
		^[this.decodeMessage(bytes) ?? { ^nil }]
	}

	*decodeMessage { |bytes|
		var address, tags, pos, msg, size;
		if(bytes[0] == 0) { address = this.int(bytes, 0); pos = 4 } {
			#address, pos = this.text(bytes, 0);
			address = address.asSymbol;
		};
		if(pos >= bytes.size or: { bytes[pos] != 44 }) { ^[address] };
		#tags, pos = this.text(bytes, pos);
		msg = [address];
		tags.drop(1).do { |tag|
			case
				{ tag == $i or: { tag == $c } or: { tag == $r } or: { tag == $m } } {
					msg = msg.add(this.int(bytes, pos)); pos = pos + 4 }
				{ tag == $f } { msg = msg.add(Float.from32Bits(this.int(bytes, pos))); pos = pos + 4 }
				{ tag == $d } {
					msg = msg.add(Float.from64Bits(this.int(bytes, pos), this.int(bytes, pos + 4)));
					pos = pos + 8 }
				{ tag == $h or: { tag == $t } } { msg = msg.add(0.5); pos = pos + 8 }
				{ tag == $s or: { tag == $S } } {
					var string;
					#string, pos = this.text(bytes, pos);
					msg = msg.add(string) }
				{ tag == $b } {
					size = this.int(bytes, pos);
					if(size < 0 or: { pos + 4 + size > bytes.size }) { ^nil };
					msg = msg.add(bytes.copyRange(pos + 4, pos + 3 + size));
					pos = pos + 4 + size.roundUp(4) }
				{ "TFNI".includes(tag) } { }
				{ ^nil };
			if(pos > bytes.size) { ^nil };
		};
		^msg
	}

	*int { |bytes, pos|
		if(pos + 4 > bytes.size) { ^0 };
		^((bytes[pos] & 255) << 24) | ((bytes[pos + 1] & 255) << 16)
			| ((bytes[pos + 2] & 255) << 8) | (bytes[pos + 3] & 255)
	}

	// The NUL-ended text at `pos` and where the next field starts.
	*text { |bytes, pos|
		var end = pos;
		while { end < bytes.size and: { bytes[end] != 0 } } { end = end + 1 };
		^[String.newFrom(bytes.copyRange(pos, end - 1).asArray.collect(_.asAscii)),
			(end + 1).roundUp(4)]
	}
}
