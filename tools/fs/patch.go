package fs

import (
	"bytes"
	"strings"
)

// patchHunk is one hunk of a unified diff, in the shape of Claude Code's
// structuredPatch: line numbers are 1-based, a count of 0 lines gives the
// line before as the start, and each line is prefixed by ' ', '-' or '+'.
type patchHunk struct {
	OldStart int      `json:"oldStart"`
	OldLines int      `json:"oldLines"`
	NewStart int      `json:"newStart"`
	NewLines int      `json:"newLines"`
	Lines    []string `json:"lines"`
}

// Bounds of a structuredPatch kept in an output object; a larger change is
// described by counts only.
const (
	patchContextLines = 3
	patchMaxLines     = 400
	patchMaxChars     = 40000
)

// structuredPatch describes the change from old to new as a single hunk
// spanning the first to the last changed line, with three lines of context
// around it. It works in time linear in the size and without splitting the
// files into lines, so it is cheap on large files; the hunk is not a
// minimal diff when several distant places changed. It returns nil when
// nothing changed or when the hunk would exceed the bounds above.
func structuredPatch(old, new []byte) []patchHunk {
	p := commonPrefix(old, new)
	if p == len(old) && p == len(new) {
		return nil
	}
	s := commonSuffix(old[p:], new[p:])
	eo, en := len(old)-s, len(new)-s

	// Widen the changed region to whole lines. The prefix and suffix are
	// shared, so widening by the same amount fits both files.
	start := bytes.LastIndexByte(old[:p], '\n') + 1
	endsLine := func(b []byte, end int) bool { return end == start || b[end-1] == '\n' }
	if !endsLine(old, eo) || !endsLine(new, en) {
		k := bytes.IndexByte(old[eo:], '\n')
		if k < 0 {
			k = len(old) - eo - 1
		}
		eo += k + 1
		en += k + 1
	}

	// Context lines around the region.
	ctxStart := start
	for range patchContextLines {
		if ctxStart == 0 {
			break
		}
		ctxStart = bytes.LastIndexByte(old[:ctxStart-1], '\n') + 1
	}
	ctxEnd := eo // in old; the same text follows en in new
	for range patchContextLines {
		if ctxEnd >= len(old) {
			break
		}
		k := bytes.IndexByte(old[ctxEnd:], '\n')
		if k < 0 {
			ctxEnd = len(old)
			break
		}
		ctxEnd += k + 1
	}

	before := splitLines(old[ctxStart:start])
	removed := splitLines(old[start:eo])
	added := splitLines(new[start:en])
	after := splitLines(old[eo:ctxEnd])
	if n := len(before) + len(removed) + len(added) + len(after); n > patchMaxLines {
		return nil
	}
	if n := (start - ctxStart) + (eo - start) + (en - start) + (ctxEnd - eo); n > patchMaxChars {
		return nil
	}

	h := patchHunk{
		OldStart: bytes.Count(old[:ctxStart], []byte("\n")) + 1,
		OldLines: len(before) + len(removed) + len(after),
		NewLines: len(before) + len(added) + len(after),
	}
	h.NewStart = h.OldStart
	for _, l := range before {
		h.Lines = append(h.Lines, " "+l)
	}
	for _, l := range removed {
		h.Lines = append(h.Lines, "-"+l)
	}
	for _, l := range added {
		h.Lines = append(h.Lines, "+"+l)
	}
	for _, l := range after {
		h.Lines = append(h.Lines, " "+l)
	}
	if h.OldLines == 0 {
		h.OldStart--
	}
	if h.NewLines == 0 {
		h.NewStart--
	}
	return []patchHunk{h}
}

// splitLines splits text into lines without their "\n" (a trailing "\r"
// is kept: it is part of the file's bytes).
func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(b), "\n")
	return strings.Split(s, "\n")
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	const chunk = 4096
	for i+chunk <= n && bytes.Equal(a[i:i+chunk], b[i:i+chunk]) {
		i += chunk
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix is the length of the longest common suffix of a and b.
func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	const chunk = 4096
	for i+chunk <= n && bytes.Equal(a[len(a)-i-chunk:len(a)-i], b[len(b)-i-chunk:len(b)-i]) {
		i += chunk
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}
