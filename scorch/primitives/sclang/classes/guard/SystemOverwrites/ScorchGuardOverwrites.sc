// sclang's ways out of SuperCollider, each asking ScorchGuard first (ScorchGuard.sc).
// In a SystemOverwrites folder, so sclang does not warn about the overwrites at start-up.
// Each overwritten method that held a primitive calls it through a prScorch... method of
// its own: the public method and the class library's own private one (prUnixCmd,
// prOpen...) are both checked, and `perform` reaches the same checks.

+ String {
	prUnixCmd { |postOutput = true|
		ScorchGuard.shell("String:unixCmd", this);
		^this.prScorchPOpen(postOutput)
	}
	prScorchPOpen { |postOutput = true|
		_String_POpen
		^this.primitiveFailed
	}

	systemCmd {
		ScorchGuard.shell("String:systemCmd", this);
		^this.prScorchSystem
	}
	prScorchSystem {
		_String_System
		^this.primitiveFailed
	}

	// The class library's own (platform by platform), after the guard: it writes a script,
	// makes it executable and opens a terminal on it.
	runInTerminal { |shell|
		var fpath, cmd;
		ScorchGuard.shell("String:runInTerminal", this);
		if(thisProcess.platform.name == \osx) {
			fpath = PathName.tmp ++ "SCStringForTerminal" ++ this.hash.asString ++ ".command";
			File.use(fpath, "w") { |file|
				file.write("#!" ++ (shell ? "/bin/bash") ++ "\n" ++ this ++ "\nrm" + fpath.shellQuote ++ "\n")
			};
			("/bin/chmod +x" + fpath.shellQuote).systemCmd;
			^("/usr/bin/open -a Terminal" + fpath.shellQuote).systemCmd
		};
		cmd = thisProcess.platform.class.tryPerform(\runInTerminalCmd)
			?? { thisProcess.platform.class.tryPerform(\getTerminalEmulatorCmd) };
		if(cmd.isNil) {
			"String:runInTerminal couldn't find a supported terminal emulator.".error;
			^this
		};
		fpath = PathName.tmp +/+ "SCStringForTerminal%.sh".format(this.hash.asString);
		File.use(fpath, "w") { |file|
			file.write(["#!" ++ (shell ? "/bin/sh"), this, "rm" + fpath.shellQuote,
				"printf 'Press ENTER to close this window.'; read _"].join($\n))
		};
		("/bin/chmod +x" + fpath).systemCmd;
		cmd.format("SuperCollider runInTerminal".shellQuote, fpath.shellQuote).unixCmd;
	}
}

+ SequenceableCollection {
	prUnixCmd { |postOutput = true|
		ScorchGuard.shell("unixCmd", this.join(" "));
		^this.prScorchPOpen(postOutput)
	}
	prScorchPOpen { |postOutput = true|
		_ArrayPOpen
		^this.primitiveFailed
	}
}

+ Pipe {
	prOpen { |pathName, mode|
		ScorchGuard.shell("Pipe", pathName);
		^this.prScorchOpen(pathName, mode)
	}
	prScorchOpen { |pathName, mode|
		_PipeOpen
		^this.primitiveFailed
	}
	prOpenArgv { |args, mode|
		ScorchGuard.shell("Pipe.argv", args.asArray.join(" "));
		^this.prScorchOpenArgv(args, mode)
	}
	prScorchOpenArgv { |args, mode|
		_PipeOpenArgv
		^this.primitiveFailed
	}
}

+ File {
	prOpen { |pathName, mode|
		if(ScorchGuard.writes(mode)) { ScorchGuard.write("File.open(..., %)".format(mode.asCompileString), pathName) };
		^this.prScorchOpen(pathName, mode)
	}
	prScorchOpen { |pathName, mode|
		_FileOpen
		^this.primitiveFailed
	}

	*delete { |pathName|
		ScorchGuard.write("File.delete", pathName);
		^this.prScorchDelete(pathName)
	}
	*prScorchDelete { |pathName|
		_FileDelete
		^this.primitiveFailed
	}
	*deleteAll { |pathName|
		ScorchGuard.write("File.deleteAll", pathName);
		^this.prScorchDeleteAll(pathName)
	}
	*prScorchDeleteAll { |pathName|
		_FileDeleteAll
		^this.primitiveFailed
	}
	*mkdir { |pathName|
		ScorchGuard.write("File.mkdir", pathName);
		^this.prScorchMkdir(pathName)
	}
	*prScorchMkdir { |pathName|
		_FileMkDir
		^this.primitiveFailed
	}
	*copy { |pathNameFrom, pathNameTo|
		ScorchGuard.write("File.copy", pathNameTo);
		^this.prScorchCopy(pathNameFrom, pathNameTo)
	}
	*prScorchCopy { |pathNameFrom, pathNameTo|
		_FileCopy
		^this.primitiveFailed
	}
}

+ SoundFile {
	prOpenWrite { |pathName|
		ScorchGuard.write("SoundFile.openWrite", pathName);
		^this.prScorchOpenWrite(pathName)
	}
	prScorchOpenWrite { |pathName|
		_SFOpenWrite
		^this.primitiveFailed
	}
}

+ Object {
	writeBinaryArchive { |pathname|
		ScorchGuard.write("Object:writeBinaryArchive", pathname);
		^this.prScorchWriteArchive(pathname)
	}
	prScorchWriteArchive { |pathname|
		_WriteArchive
		^this.primitiveFailed
	}
}

+ Image {
	write { |path, format, quality = -1|
		ScorchGuard.write("Image:write", path);
		^this.prScorchWrite(path, format, quality)
	}
	prScorchWrite { |path, format, quality = -1|
		_QImage_Write
		^this.primitiveFailed
	}
}

+ Buffer {
	write { |path, headerFormat = "aiff", sampleFormat = "int24", numFrames = -1,
		startFrame = 0, leaveOpen = false, completionMessage|
		path = path ?? { thisProcess.platform.recordingsDir +/+ "SC_" ++ Date.localtime.stamp
			++ "." ++ headerFormat };
		ScorchGuard.write("Buffer:write", path);
		server.listSendMsg(this.writeMsg(path, headerFormat, sampleFormat, numFrames,
			startFrame, leaveOpen, completionMessage))
	}
}

+ NetAddr {
	// The guard first, then (in a room) ScorchStage, which keeps the safety stage last.
	sendMsg { |... args|
		var stage = ScorchGuard.stage, out;
		ScorchGuard.osc(args);
		if(stage.isNil or: { stage.guards(this).not }) { ^this.prScorchSendMsg(*args) };
		out = stage.message(args);
		if(out.size == 1) { ^this.prScorchSendMsg(*out[0]) };
		if(out.size > 1) { ^this.prScorchSendBundle(nil, *out) };
	}
	prScorchSendMsg { |... args|
		_NetAddr_SendMsg
		^this.primitiveFailed
	}
	sendBundle { |time ... args|
		var stage = ScorchGuard.stage;
		ScorchGuard.bundle(args);
		if(stage.notNil and: { stage.guards(this) }) {
			args = stage.messages(args);
			if(args.isEmpty) { ^this };
		};
		^this.prScorchSendBundle(time, *args)
	}
	prScorchSendBundle { |time ... args|
		_NetAddr_SendBundle
		^this.primitiveFailed
	}
	sendRaw { |rawArray|
		var stage = ScorchGuard.stage;
		ScorchGuard.osc(rawArray);
		if(stage.notNil and: { stage.guards(this) and: { stage.rawAllowed(rawArray).not } }) {
			^this
		};
		^this.prScorchSendRaw(rawArray)
	}
	prScorchSendRaw { |rawArray|
		_NetAddr_SendRaw
		^this.primitiveFailed
	}
}

+ Archive {
	// Called at every exit and recompile (Process:shutdown): sclang reads the archive back at
	// its next start, before the guard is on, so code may not fill it. Outside the allowed
	// folders (its default place is), the archive stays as it was.
	*write { |filename|
		var expandedFileName = filename ?? (archiveDir ++ "/archive.sctxar");
		if(filename.isNil and: { ScorchGuard.allowsWrite(expandedFileName).not }) { ^this };
		global.writeArchive(expandedFileName);
	}
}

+ Platform {
	recordingsDir_ { |path|
		ScorchGuard.change("Platform:recordingsDir_", path);
		recordingsDir = path
	}
	devpath_ { |path|
		ScorchGuard.change("Platform:devpath_", path);
		devpath = path
	}
}

+ LanguageConfig {
	*store { |file|
		ScorchGuard.write("LanguageConfig.store", file ? this.currentPath);
		^this.prScorchStore(file)
	}
	*prScorchStore { |file|
		_LanguageConfig_writeConfigFile
		^MethodError("Could not write to file %".format(file.asCompileString), this).throw
	}
	*addIncludePath { |aPath|
		ScorchGuard.change("LanguageConfig.addIncludePath", aPath);
		^this.prScorchAddInclude(aPath)
	}
	*prScorchAddInclude { |aPath|
		_LanguageConfig_addIncludePath
		^this.primitiveFailed
	}
	*removeIncludePath { |aPath|
		ScorchGuard.change("LanguageConfig.removeIncludePath", aPath);
		^this.prScorchRemoveInclude(aPath)
	}
	*prScorchRemoveInclude { |aPath|
		_LanguageConfig_removeIncludePath
		^this.primitiveFailed
	}
	*addExcludePath { |aPath|
		ScorchGuard.change("LanguageConfig.addExcludePath", aPath);
		^this.prScorchAddExclude(aPath)
	}
	*prScorchAddExclude { |aPath|
		_LanguageConfig_addExcludePath
		^this.primitiveFailed
	}
	*removeExcludePath { |aPath|
		ScorchGuard.change("LanguageConfig.removeExcludePath", aPath);
		^this.prScorchRemoveExclude(aPath)
	}
	*prScorchRemoveExclude { |aPath|
		_LanguageConfig_removeExcludePath
		^this.primitiveFailed
	}
	*excludeDefaultPaths_ { |aBoolean|
		ScorchGuard.change("LanguageConfig.excludeDefaultPaths_", aBoolean);
		^this.prScorchExcludeDefaults(aBoolean)
	}
	*prScorchExcludeDefaults { |aBoolean|
		_LanguageConfig_setExcludeDefaultPaths
		^this.primitiveFailed
	}
}
