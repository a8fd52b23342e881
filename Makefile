# Two commands on a fresh Debian/Ubuntu machine: `make run` and `make test`.
# Both install what is missing first: the apt packages (when apt-get is there),
# then the virtualenv in .venv/.
VENV   := .venv
STAMP  := $(VENV)/.installed
CONFIG ?= config.toml
# supercollider-server also brings libsndfile, which the soundfile wheel falls back on
# where it bundles none; numpy, scipy, pyloudnorm and matplotlib come as wheels.
# openssh-server/-client, iproute2 and nftables: the tests of several hosts run a private sshd,
# network namespaces and veth pairs, and cut or thin their links (docs/hosts.md).
# gcc and libc6-dev: scorch's own JACK MIDI input (midi/jack_in.c) is compiled on first use;
# without a compiler the router falls back to polling rtmidi's queue.
APT_PACKAGES := supercollider-server supercollider-language jackd2 \
                openssh-server openssh-client iproute2 nftables \
                chromium gcc libc6-dev
# nodejs and npm: the official MCP Bundle CLI (@anthropic-ai/mcpb, from npm) that `make
# bundle` and the tests run, installed under build/mcpb (never globally). Installed on
# their own, only when npm is missing: Debian's npm conflicts with a NodeSource nodejs.
NODE_APT_PACKAGES := nodejs npm
MCPB := build/mcpb/node_modules/.bin/mcpb
MCPB_PACKAGE := @anthropic-ai/mcpb@^2.1

.PHONY: run test bench lint handshake system-deps clean dist bundle

run: $(STAMP)
	$(VENV)/bin/scorch run --config $(CONFIG)

test: system-deps $(STAMP) $(MCPB)
	$(VENV)/bin/lint-imports --no-logo
	$(VENV)/bin/pytest $(PYTEST_ARGS)

bench: $(STAMP)
	$(VENV)/bin/python -m bench.all

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy scorch actors midi mcp_server

system-deps:
	@missing=""; \
	for bin in scsynth sclang jackd; do command -v $$bin >/dev/null || missing="yes"; done; \
	if [ "$$(uname)" = Linux ]; then \
	  for bin in ssh ip tc nft cc; do command -v $$bin >/dev/null || missing="yes"; done; \
	  [ -x /usr/sbin/sshd ] && [ -x /usr/bin/chromium ] || missing="yes"; \
	fi; \
	if [ -n "$$missing" ]; then \
	  if command -v apt-get >/dev/null; then \
	    SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	    echo "installing $(APT_PACKAGES) with apt-get" >&2; \
	    $$SUDO apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y --no-install-recommends $(APT_PACKAGES); \
	  elif command -v brew >/dev/null; then \
	    brew install --cask supercollider && brew install jack; \
	  else \
	    echo "scsynth, sclang or jackd missing: install SuperCollider 3.13 and JACK" >&2; exit 1; \
	  fi; \
	fi
	@if ! command -v npm >/dev/null; then \
	  if command -v apt-get >/dev/null; then \
	    SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	    echo "installing $(NODE_APT_PACKAGES) with apt-get" >&2; \
	    $$SUDO apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y --no-install-recommends $(NODE_APT_PACKAGES); \
	  elif command -v brew >/dev/null; then \
	    brew install node; \
	  else \
	    echo "npm missing: install Node.js and npm (the MCP Bundle CLI needs them)" >&2; exit 1; \
	  fi; \
	fi

$(STAMP): pyproject.toml | system-deps
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev,transcribe]'
	# basic-pitch's note model runs on onnxruntime: its own requirements (TensorFlow 2.15,
	# numpy < 1.27) are left out
	$(VENV)/bin/pip install -q --no-deps 'basic-pitch==0.4.0'
	# librosa compiles its numba kernels on first import (about 30 s of a core) and caches
	# them beside its modules: done here, once, and not in the first transcription
	$(VENV)/bin/python -c 'import librosa.util.utils, librosa.core.audio'
	$(VENV)/bin/python -m mcp_server.snapshot
	touch $(STAMP)

# The wheel and the sdist, in dist/ (`uv tool install dist/scorch-*.whl`, or pipx).
dist: $(STAMP)
	rm -rf dist
	$(VENV)/bin/python -m build --no-isolation -o dist .

# The MCP Bundle for Claude Desktop: dist/scorch.mcpb, checked and packed by mcpb.
bundle: dist $(MCPB)
	$(VENV)/bin/python -m mcp_server.bundle build/bundle dist/scorch-*.whl
	$(MCPB) validate build/bundle/manifest.json
	$(MCPB) pack build/bundle dist/scorch.mcpb

$(MCPB): | system-deps
	npm install --prefix build/mcpb --no-audit --no-fund '$(MCPB_PACKAGE)'

# The MCP handshake scorch answers before the SDK loads, recorded from the SDK (after a
# change to an operation, the tools or the instructions; the test says when).
handshake: $(STAMP)
	$(VENV)/bin/python -m mcp_server.snapshot

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist
