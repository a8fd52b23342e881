# Two commands on a fresh Debian/Ubuntu machine: `make run` and `make test`.
# Both install what is missing first: the apt packages (when apt-get is there),
# then the virtualenv in .venv/.
VENV   := .venv
STAMP  := $(VENV)/.installed
CONFIG ?= config.toml
# What running needs, and all `make run` installs: SuperCollider and JACK (supercollider-server
# also brings libsndfile, which the soundfile wheel falls back on where it bundles none; numpy,
# scipy, pyloudnorm and matplotlib come as wheels), and a C compiler: scorch's own JACK MIDI
# input (midi/io/backends/jack_in.c) is compiled on first use, and without it the router polls
# rtmidi's queue instead (up to 4 ms more before a note sounds after a quiet spell, and about 3 % of a
# core while idle: BENCHMARKS.md, "MIDI").
RUN_APT_PACKAGES := supercollider-server supercollider-language jackd2 gcc libc6-dev
# What only the tests need, installed by `make test` alone: openssh-server/-client, iproute2 and
# nftables (the tests of several hosts run a private sshd, network namespaces and veth pairs,
# and cut or thin their links: docs/hosts.md), chromium (the page's tests drive it), ffmpeg
# (its ebur128 filter is the loudness tests' independent reference).
# openssh-server is installed under a policy-rc.d that denies every service start, and a
# new install's ssh service is disabled after it: scorch's install never starts or enables an
# SSH server (the tests start their own, on their own port and keys).
TEST_APT_PACKAGES := openssh-server openssh-client iproute2 nftables chromium ffmpeg
# nodejs and npm: the official MCP Bundle CLI (@anthropic-ai/mcpb, from npm) that `make
# bundle` and the tests run, installed under build/mcpb (never globally). Installed on
# their own, only when npm is missing: Debian's npm conflicts with a NodeSource nodejs.
NODE_APT_PACKAGES := nodejs npm
MCPB := build/mcpb/node_modules/.bin/mcpb
MCPB_PACKAGE := @anthropic-ai/mcpb@^2.1
POLICY_RC := /usr/sbin/policy-rc.d

.PHONY: run test bench lint handshake system-deps test-deps node-deps clean dist bundle

run: $(STAMP)
	$(VENV)/bin/scorch run --config $(CONFIG)

test: system-deps test-deps $(STAMP) $(MCPB)
	$(VENV)/bin/lint-imports --no-logo
	$(VENV)/bin/pytest $(PYTEST_ARGS)

bench: $(STAMP)
	$(VENV)/bin/python -m bench.all

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy scorch actors midi mcp_server

# What running needs (RUN_APT_PACKAGES), when a command of it is missing.
system-deps:
	@missing=""; \
	for bin in scsynth sclang jackd; do command -v $$bin >/dev/null || missing="yes"; done; \
	if [ "$$(uname)" = Linux ]; then command -v cc >/dev/null || missing="yes"; fi; \
	if [ -n "$$missing" ]; then \
	  if command -v apt-get >/dev/null; then \
	    SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	    echo "installing $(RUN_APT_PACKAGES) with apt-get" >&2; \
	    $$SUDO apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y --no-install-recommends $(RUN_APT_PACKAGES); \
	  elif command -v brew >/dev/null; then \
	    brew install --cask supercollider && brew install jack; \
	  else \
	    echo "scsynth, sclang or jackd missing: install SuperCollider 3.13 and JACK" >&2; exit 1; \
	  fi; \
	fi

# What only the tests need (TEST_APT_PACKAGES), on Linux, when a command of it is missing;
# then Node for the bundle CLI. An ssh service this install brought is left stopped and
# disabled: policy-rc.d refuses every start while apt runs (the package's postinst starts
# sshd through invoke-rc.d and deb-systemd-invoke, which both ask it), the admin's own
# policy-rc.d put back after; `update-rc.d ssh disable` undoes the enabling its postinst
# does regardless (update-rc.d defaults, deb-systemd-helper enable), for sysvinit and, through
# systemctl, for systemd.
test-deps: node-deps
	@if [ "$$(uname)" = Linux ]; then \
	  missing=""; \
	  for bin in ssh ip tc nft ffmpeg; do command -v $$bin >/dev/null || missing="yes"; done; \
	  [ -x /usr/sbin/sshd ] && [ -x /usr/bin/chromium ] || missing="yes"; \
	  if [ -n "$$missing" ]; then \
	    command -v apt-get >/dev/null || { echo "install $(TEST_APT_PACKAGES) (the tests need them)" >&2; exit 1; }; \
	    SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	    fresh=""; dpkg-query -W -f='$${Status}' openssh-server 2>/dev/null | grep -q 'ok installed' || fresh=yes; \
	    saved=""; if [ -e $(POLICY_RC) ]; then saved=$(POLICY_RC).scorch-saved; $$SUDO mv $(POLICY_RC) $$saved; fi; \
	    trap '$$SUDO rm -f $(POLICY_RC); [ -z "'$$saved'" ] || $$SUDO mv '$$saved' $(POLICY_RC)' EXIT; \
	    printf '#!/bin/sh\n# scorch make test: no service starts while its test tools install\nexit 101\n' \
	      | $$SUDO tee $(POLICY_RC) >/dev/null && $$SUDO chmod 755 $(POLICY_RC); \
	    echo "installing $(TEST_APT_PACKAGES) with apt-get (no service started)" >&2; \
	    $$SUDO apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y --no-install-recommends $(TEST_APT_PACKAGES) || exit 1; \
	    if [ -n "$$fresh" ]; then \
	      echo "disabling the ssh service openssh-server enabled: the tests run their own sshd" >&2; \
	      [ ! -e /etc/init.d/ssh ] || $$SUDO update-rc.d ssh disable >/dev/null 2>&1 || true; \
	      ! command -v systemctl >/dev/null || $$SUDO systemctl --root=/ --quiet disable ssh.service ssh.socket 2>/dev/null || true; \
	    fi; \
	  fi; \
	fi

# Node and npm for the MCP Bundle CLI (`make test`, `make bundle`).
node-deps:
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

$(MCPB): | node-deps
	npm install --prefix build/mcpb --no-audit --no-fund '$(MCPB_PACKAGE)'

# The MCP handshake scorch answers before the SDK loads, recorded from the SDK (after a
# change to an operation, the tools or the instructions; the test says when).
handshake: $(STAMP)
	$(VENV)/bin/python -m mcp_server.snapshot

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist
