// The default server `s` of an sclang scorch runs: a Server whose lifecycle is scorch's.
// scsynth is supervised by scorch (restarted, restored, re-attached); so quit, boot and
// reboot from code never start or stop a process here: they tell scorch (a
// `server-request` record) and say what happens.
ScorchServer : Server {
	classvar <>commands;
	var pendingReboot;

	// While a request runs (`commands` is a Set), the commands it sends are noted:
	// Scorch.eval tells scorch, which then reads what scsynth said about them
	// (server_errors). A raw packet is "*".
	*prCount { |msg|
		commands !? {
			commands.add(if(msg.isSequenceableCollection and: { msg.isString.not }) {
				msg[0].asString } { "*" })
		}
	}
	sendMsg { |... msg| ScorchServer.prCount(msg); ^super.sendMsg(*msg) }
	sendBundle { |time ... msgs| msgs.do { |m| ScorchServer.prCount(m) }; ^super.sendBundle(time, *msgs) }
	sendRaw { |rawArray| ScorchServer.prCount(nil); ^super.sendRaw(rawArray) }
	listSendMsg { |msg| ScorchServer.prCount(msg); ^super.listSendMsg(msg) }
	listSendBundle { |time, msgs|
		msgs.do { |m| ScorchServer.prCount(m) };
		^super.listSendBundle(time, msgs)
	}

	boot { |startAliveThread = true, recover = false, onFailure|
		if(this.serverRunning and: { this.unresponsive.not }) {
			"server '%' already running".format(this.name).postln;
			^this
		};
		"scorch: scsynth '%' is restarted by scorch when it stops; no need to boot it.".format(this.name).postln;
		this.prScorchRequest(\boot);
	}

	quit { |onComplete, onFailure, watchShutDown = true|
		("scorch: s.quit refused: scorch keeps scsynth '%' running (it is this room's sound). "
			++ "To stop the room, use the `instance` tool (action quit); to silence it, "
			++ "CmdPeriod.run or the `stop` tool.").format(this.name).postln;
		this.prScorchRequest(\quit);
	}

	reboot { |func, onFailure|
		("scorch: s.reboot: scorch restarts scsynth '%'; its named nodes come back, "
			++ "and `func` runs once the new server is attached.").format(this.name).postln;
		func !? { pendingReboot = pendingReboot.add(func) };
		this.prScorchRequest(\reboot);
	}

	// Called by Scorch.reattach once the new scsynth confirmed the client.
	scorchRebooted {
		var funcs = pendingReboot;
		pendingReboot = nil;
		funcs.do { |func| func.value(this) };
	}

	prScorchRequest { |what|
		Scorch.emit(Scorch.token ? "none", "server-request", what.asString ++ " " ++ this.name);
	}
}
