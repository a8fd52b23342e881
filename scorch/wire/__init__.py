"""The control socket and its wire: envelopes, limits, tokens, the server and its clients."""
