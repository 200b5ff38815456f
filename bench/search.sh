#!/usr/bin/env bash
# Search speed and memory, side by side with ripgrep and fd (issue: Glob and
# Grep as fast as ripgrep). Needs the Debian packages ripgrep and fd-find.
#
#   bash bench/search.sh            # everything (a few minutes)
#   RUNS=3 bash bench/search.sh     # fewer timed runs per row
#
# Rows: a literal, a case-insensitive word, an alternation and a regex with
# a character class, each in files_with_matches, content and count modes,
# plus Glob against fdfind and rg --files; on Go's source tree ($GOROOT/src)
# and on a synthetic tree of 100k files. Grep and Glob are called through a
# real MCP client (go-sdk) against the built binary; times are medians on a
# warm cache; the ratio is ours / theirs.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$HOME/go/bin:$PATH"
RUNS="${RUNS:-5}"
WORK="${AGENT_MCP_BENCH_DIR:-${TMPDIR:-/tmp}/agent-mcp-bench}"
mkdir -p "$WORK"

for tool in rg fdfind; do
  command -v "$tool" >/dev/null || { echo "search.sh: $tool is missing (apt-get install -y ripgrep fd-find)"; exit 1; }
done

echo "== build"
go build -o "$WORK/agent-mcp" .
go build -o "$WORK/searchbench" ./bench/searchbench
rg --version | head -1
fdfind --version

echo
echo "== Go source tree"
"$WORK/searchbench" -bin "$WORK/agent-mcp" -tree "$(go env GOROOT)/src" -runs "$RUNS"

echo
echo "== synthetic tree, 100k files"
"$WORK/searchbench" -bin "$WORK/agent-mcp" -tree "$WORK/tree100k" -gen 100000 -runs "$RUNS"

echo
echo "== go test -bench (in-process)"
go test -run '^$' -bench . -benchtime 5x ./tools/search

echo
echo "== peak memory: Grep matching every line of a 1 GB tree"
AGENT_MCP_BENCH=1 AGENT_MCP_BENCH_MEMTREE="$WORK/tree1g" \
  go test -count=1 -run 'TestGrepMemory1GB' -v ./tools/search | grep -E 'peak RSS|^(--- |ok|FAIL)'
