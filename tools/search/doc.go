// Package search implements the Glob and Grep tools in Go, with no external
// binary: the server stays one static program that works where ripgrep is
// not installed.
//
// The code keeps ripgrep's seams, one concern per file:
//
//   - walk.go: the walker shared by both tools. Directory listings are read
//     in parallel ahead of the consumer, but files come out in one
//     deterministic order (depth first, names sorted bytewise), which is
//     the "sorted by path" order of docs/tools.md §6. The consumer pulls
//     (walkIter.next), advancing the traversal on its own goroutine.
//     Glob, which orders its files by modification time itself, walks
//     unordered instead (walkUnordered): workers share a stack of
//     directories, list them unsorted and stat the matches relative to
//     the directory's descriptor.
//   - ignore.go: .gitignore (nested, with negations), .ignore,
//     .git/info/exclude and the user's global excludes, with ripgrep's
//     precedence. The rules are compiled here on top of doublestar and
//     held to git's own answers: testdata/check-ignore.txt records what
//     `git check-ignore` decides on every case of ignore_test.go
//     (ignore_git_test.go; `go test -run TestGitignoreAgreesWithGit
//     -record` asks git again).
//   - override.go and types.go: Grep's `glob` and `type` filters.
//   - matcher.go: the pattern (Go's RE2 regexp) plus a literal prefilter
//     derived from regexp/syntax: the literals every match must contain
//     are found over the whole buffer by testing two of their bytes at
//     every position (32 at a time with AVX2, pair_amd64.s; case-folded
//     for -i), and only the lines around candidates are looked at.
//   - dfa.go: a lazy DFA built from the pattern's program decides which
//     lines match, a byte at a time, with RE2 semantics; Go's regexp is
//     left only the spans of -o and multiline patterns.
//   - searcher.go: reads a file into a reusable buffer, detects binary
//     files, finds line boundaries only around matches, handles context and
//     multiline, and stops early when only the file name is wanted.
//   - printer.go: merges per-file results in order into the text formats of
//     docs/tools.md §6, keeping only the requested page in memory while counting
//     everything for the totals.
//   - grep.go, glob.go: the tools themselves, descriptions in grep.md and
//     glob.md. Grep's workers each own a searcher (buffer, automaton) and
//     take the walk's files sixteen at a time; the printer merges the
//     chunks in walk order (searchTree). Glob's workers each keep the
//     oldest hundred files they saw, merged at the end.
//
// Memory stays bounded whatever the tree size and match count: the walker
// holds a bounded number of listings, a bounded window of files is in
// flight, and only the page of output lines asked for is kept.
package search
