// A library SynthDef as scorch compiled it and scsynth got it: its bytes, read back by
// Scorch.readDescs. No graph to rebuild, but `send` (SynthDescLib.send, def.send) sends
// these very bytes, where a def reconstructed from a file could not be sent to a remote
// server at all.
ScorchSynthDef : SynthDef {
	var <>bytes;

	*fromBytes { |name, bytes, metadata|
		^super.newCopyArgs(name.asSymbol).bytes_(bytes).metadata_(metadata ?? { () })
	}

	asBytes { ^bytes }
}
