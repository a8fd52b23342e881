// Calls that would reach beyond this room, refused while scorch runs this sclang.
// In a SystemOverwrites folder, so sclang does not warn about the overwrite at startup.
+ Server {
	// The original runs `killall -9 scsynth`: every scsynth on the machine, every room.
	*killAll {
		("scorch: Server.killAll refused: it would kill every scsynth on this machine "
			++ "(all rooms, and other people's). Use the `instance` tool to restart a room.").postln;
		Scorch.emit(Scorch.token ? "none", "server-request", "killAll");
	}
}

+ Integer {
	// sclang is this room's interpreter; scorch restarts it on request (`instance` restart).
	exit {
		("scorch: %.exit refused: scorch runs this sclang; restart it with the `instance` tool "
			++ "(action restart).").format(this).postln;
		Scorch.emit(Scorch.token ? "none", "server-request", "exit " ++ this);
	}
}
