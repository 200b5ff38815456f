// Package search implements the Glob and Grep tools in Go, with no external
// binary: the server stays one static program that works where ripgrep is
// not installed.
//
// The code keeps ripgrep's seams, one concern per file:
//
//   - walk.go: the walker shared by both tools. Directory listings are read
//     in parallel ahead of the consumer, but files come out in one
//     deterministic order (depth first, names sorted bytewise), which is
//     the "sorted by path" order of docs/tools.md §6.
//   - ignore.go: .gitignore (nested, with negations), .ignore,
//     .git/info/exclude and the user's global excludes, with ripgrep's
//     precedence. The rules are compiled here on top of doublestar rather
//     than by github.com/sabhiram/go-gitignore, which gets `?`, `[!...]`,
//     patterns with an inner slash and cross-file negation wrong (see
//     ignore_test.go).
//   - override.go and types.go: Grep's `glob` and `type` filters.
//   - matcher.go: the pattern (Go's RE2 regexp) plus a literal prefilter
//     derived from regexp/syntax: the literals every match must contain are
//     found with bytes.IndexByte over the whole buffer, and the regexp only
//     runs on the lines around candidates.
//   - searcher.go: reads a file into a reusable buffer, detects binary
//     files, finds line boundaries only around matches, handles context and
//     multiline, and stops early when only the file name is wanted.
//   - printer.go: merges per-file results in order into the text formats of
//     docs/tools.md §6, keeping only the requested page in memory while counting
//     everything for the totals.
//   - grep.go, glob.go: the tools themselves, descriptions in grep.md and
//     glob.md.
//
// Memory stays bounded whatever the tree size and match count: the walker
// holds a bounded number of listings, a bounded window of files is in
// flight, and only the page of output lines asked for is kept.
package search
