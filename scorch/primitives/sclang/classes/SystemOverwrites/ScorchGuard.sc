// Where every OSC message sclang sends converges (the three primitives below): messages to
// this room's scsynth pass ScorchStage first, so no code places a node after the room's
// safety stage or moves, frees, pauses or sets it. Replies pass ScorchStage.incoming.
// In a SystemOverwrites folder, so sclang does not warn about the overwrites at startup.
+ NetAddr {
	sendMsg { arg ... args;
		var out;
		if(ScorchStage.guards(this).not) { ^this.prScorchSendMsg(*args) };
		out = ScorchStage.message(args);
		if(out.size == 1) { ^this.prScorchSendMsg(*out[0]) };
		if(out.size > 1) { ^this.prScorchSendBundle(nil, *out) };
	}

	sendBundle { arg time ... args;
		if(ScorchStage.guards(this)) {
			args = ScorchStage.messages(args);
			if(args.isEmpty) { ^this };
		};
		^this.prScorchSendBundle(time, *args)
	}

	sendRaw { arg rawArray;
		if(ScorchStage.guards(this) and: { ScorchStage.rawAllowed(rawArray).not }) { ^this };
		^this.prScorchSendRaw(rawArray)
	}

	prScorchSendMsg { arg ... args;
		_NetAddr_SendMsg
		^this.primitiveFailed;
	}

	prScorchSendBundle { arg time ... args;
		_NetAddr_SendBundle
		^this.primitiveFailed;
	}

	prScorchSendRaw { arg rawArray;
		_NetAddr_SendRaw
		^this.primitiveFailed;
	}
}

+ Main {
	recvOSCmessage { arg time, replyAddr, recvPort, msg;
		ScorchStage.incoming(replyAddr, msg);
		recvOSCfunc.value(time, replyAddr, msg);
		prRecvOSCFunc.value(msg, time, replyAddr, recvPort); // same order as OSCFunc
		OSCresponder.respond(time, replyAddr, msg);
	}
}
