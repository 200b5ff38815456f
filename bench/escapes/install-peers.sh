#!/bin/sh
# Installs the sandboxes bench/escapes compares agent-mcp with, from their
# registries: Debian's bubblewrap and socat (the floor of the cost table,
# and what the sandbox runtime needs), and the npm packages of Anthropic's
# sandbox runtime (srt) and of Codex (codex sandbox linux) into
# bench/escapes/.cache, where the bench looks for them.
#
#	sh bench/escapes/install-peers.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache="$here/.cache"
if ! command -v bwrap >/dev/null || ! command -v socat >/dev/null || ! command -v rg >/dev/null; then
	sudo=""
	[ "$(id -u)" = 0 ] || sudo=sudo
	$sudo apt-get update -q
	# ripgrep: the sandbox runtime scans for dangerous files with it.
	$sudo apt-get install -y -q bubblewrap socat ripgrep
fi
mkdir -p "$cache"
npm install --prefix "$cache" --no-audit --no-fund --loglevel=error \
	@anthropic-ai/sandbox-runtime@latest @openai/codex@latest
echo "srt:   $("$cache/node_modules/.bin/srt" --version 2>/dev/null || echo '?')"
echo "codex: $("$cache/node_modules/.bin/codex" --version 2>/dev/null || echo '?')"
echo "bwrap: $(bwrap --version)"
