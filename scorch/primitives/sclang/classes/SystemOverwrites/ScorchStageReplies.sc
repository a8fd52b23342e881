// scsynth's replies pass ScorchStage.incoming first (they say 0 where they said the room
// group). The messages sclang sends pass ScorchStage after the guard (NetAddr's sends,
// guard/SystemOverwrites/ScorchGuardOverwrites.sc). In a SystemOverwrites folder, so
// sclang does not warn about the overwrite at startup.
+ Main {
	recvOSCmessage { arg time, replyAddr, recvPort, msg;
		ScorchStage.incoming(replyAddr, msg);
		recvOSCfunc.value(time, replyAddr, msg);
		prRecvOSCFunc.value(msg, time, replyAddr, recvPort); // same order as OSCFunc
		OSCresponder.respond(time, replyAddr, msg);
	}
}
