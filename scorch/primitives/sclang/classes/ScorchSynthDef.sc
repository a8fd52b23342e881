// A library SynthDef as scorch compiled it and scsynth got it: its bytes, read back by
// Scorch.readDescs. Marked shouldNotSend, as sclang marks a def read from a file, so the
// sends sclang makes on its own (ServerBoot's SynthDescLib.send) leave it to scorch, whose
// desired state restores it. Code that asks (SynthDescLib.send(s), def.send(s)) gets
// these very bytes sent, where a def reconstructed from a file could not be sent to a
// remote server at all.
ScorchSynthDef : SynthDef {
	var <>bytes;

	*fromBytes { |name, bytes, metadata|
		^super.newCopyArgs(name.asSymbol).bytes_(bytes)
			.metadata_((metadata ?? { () }).copy.put(\shouldNotSend, true))
	}

	asBytes { ^bytes }

	loadReconstructed { |server, completionMsg|
		server.sendMsg("/d_recv", bytes, completionMsg)
	}
}
