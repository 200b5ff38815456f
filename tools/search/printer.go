package search

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// printer merges per-file results, in walk order, into Grep's text. It
// counts everything for the totals but keeps only the page asked for
// (offset, head_limit), so memory is bounded by the page, not the tree.
type printer struct {
	mode          outputMode
	limit, offset int // limit 0: unlimited
	context       bool
	pageFull      atomic.Bool

	files   int // files with matches
	matches int // matching lines, or matches with -o
	entries int // output lines (content) or file lines (count), in total
	page    []string

	newest bestN[fileRank] // files_with_matches: the newest offset+limit files

	unreadable      int    // files that could not be opened or read
	firstUnreadable string // the first of them, in walk order, and why
}

func newPrinter(mode outputMode, limit, offset int, context bool) *printer {
	return &printer{mode: mode, limit: limit, offset: offset, context: context}
}

// pageEnd is the index just past the page, or -1 when unlimited.
func (p *printer) pageEnd() int {
	if p.limit == 0 {
		return -1
	}
	return p.offset + p.limit
}

// emit offers the output line with global index p.entries to the page.
func (p *printer) emit(line string) {
	if p.entries >= p.offset && (p.limit == 0 || p.entries < p.offset+p.limit) {
		p.page = append(p.page, line)
	}
	p.entries++
	if end := p.pageEnd(); end >= 0 && p.entries >= end {
		p.pageFull.Store(true)
	}
}

// add merges the next file's result.
func (p *printer) add(r *fileResult) {
	if r.err != nil {
		p.unreadable++
		if p.unreadable == 1 {
			p.firstUnreadable = r.display + ": " + readError(r.err)
		}
	}
	if !r.matched {
		return
	}
	switch p.mode {
	case modeFiles:
		p.files++
		p.newest.add(fileRank{mtime: r.mtime, path: r.display}, p.pageEnd())
	case modeCount:
		if r.count == 0 {
			return
		}
		p.files++
		p.matches += r.count
		p.emit(fmt.Sprintf("%s:%d", r.display, r.count))
	case modeContent:
		if r.entries == 0 {
			return
		}
		p.files++
		p.matches += r.count
		if p.context && p.entries > 0 {
			p.emit("--")
		}
		start := p.entries
		out := r.out
		for i := 0; i < r.retained; i++ {
			nl := bytes.IndexByte(out, '\n')
			idx := start + i
			if idx >= p.offset && (p.limit == 0 || idx < p.offset+p.limit) {
				p.page = append(p.page, string(out[:nl]))
			}
			out = out[nl+1:]
		}
		p.entries = start + r.entries
		if end := p.pageEnd(); end >= 0 && p.entries >= end {
			p.pageFull.Store(true)
		}
	}
}

// GrepOutput is Grep's structured output. Counts are totals over
// everything that matched; Filenames and Content hold the page shown.
type GrepOutput struct {
	Mode      string   `json:"mode"`
	NumFiles  int      `json:"numFiles"`
	Filenames []string `json:"filenames"`
	Content   string   `json:"content,omitempty"`
	// NumLines is the number of output lines in content mode, in total.
	NumLines int `json:"numLines,omitempty"`
	// NumMatches counts matching lines (occurrences with -o).
	NumMatches    int  `json:"numMatches,omitempty"`
	AppliedLimit  *int `json:"appliedLimit,omitempty"`
	AppliedOffset *int `json:"appliedOffset,omitempty"`
}

// result renders the merged results.
func (p *printer) result() (string, GrepOutput) {
	out := GrepOutput{Filenames: []string{}}
	var body []string
	var total int
	var noun string
	switch p.mode {
	case modeFiles:
		out.Mode, noun, total = "files_with_matches", "files", p.files
		ranks := slices.Clone(p.newest.items)
		slices.SortFunc(ranks, fileRank.compare)
		for i := p.offset; i < len(ranks) && (p.limit == 0 || i < p.offset+p.limit); i++ {
			body = append(body, ranks[i].path)
		}
		out.Filenames = body
	case modeContent:
		out.Mode, noun, total = "content", "lines", p.entries
		body = p.page
		out.Content = strings.Join(body, "\n")
		out.NumLines = p.entries
	case modeCount:
		out.Mode, noun, total = "count", "files", p.entries
		body = p.page
		out.Content = strings.Join(body, "\n")
	}
	out.NumFiles = p.files
	out.NumMatches = p.matches
	cut := p.offset > 0 || (p.limit > 0 && total > p.offset+p.limit)
	if cut {
		out.AppliedLimit, out.AppliedOffset = &p.limit, &p.offset
	}

	var b strings.Builder
	switch {
	case total == 0 && p.mode == modeFiles:
		b.WriteString("No files found")
	case total == 0:
		b.WriteString("No matches found")
	case p.mode == modeFiles:
		fmt.Fprintf(&b, "Found %d %s", p.files, plural(p.files, "file", "files"))
		for _, l := range body {
			b.WriteString("\n")
			b.WriteString(l)
		}
	default:
		b.WriteString(strings.Join(body, "\n"))
	}
	if p.mode == modeCount && total > 0 {
		if len(body) > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "Found %d total %s across %d %s.", p.matches, plural(p.matches, "occurrence", "occurrences"),
			p.files, plural(p.files, "file", "files"))
	}
	if cut && total > 0 {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(pageNote(noun, total, p.offset, len(body), p.limit))
	}
	return b.String(), out
}

// pageNote says which part of the results a page shows and how to get
// the next one.
func pageNote(noun string, total, offset, shown, limit int) string {
	limitText := fmt.Sprintf("head_limit %d", limit)
	if limit == 0 {
		limitText = "no head_limit"
	}
	if shown == 0 {
		return fmt.Sprintf("(Nothing to show at offset %d with %s: there are %d %s in all. Use a smaller offset.)",
			offset, limitText, total, noun)
	}
	note := fmt.Sprintf("(Showing %s %d-%d of %d, with %s and offset %d.", noun, offset+1, offset+shown, total, limitText, offset)
	if offset+shown < total {
		note += fmt.Sprintf(" Call again with offset %d for more.", offset+shown)
	}
	return note + ")"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// fileRank orders files_with_matches: newest modification first, ties by
// path.
type fileRank struct {
	mtime time.Time
	path  string
}

func (a fileRank) compare(b fileRank) int {
	if c := b.mtime.Compare(a.mtime); c != 0 {
		return c
	}
	return strings.Compare(a.path, b.path)
}

// unreadableNote is the line Grep adds when files could not be read, as
// ripgrep says on stderr: how many, and the first with its reason. They
// were not searched, so a match in them is not in the result.
func (p *printer) unreadableNote() string {
	switch p.unreadable {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("\n1 file could not be read (%s) and was not searched.", p.firstUnreadable)
	}
	return fmt.Sprintf("\n%d files could not be read (the first: %s) and were not searched.", p.unreadable, p.firstUnreadable)
}

// readError is why a file could not be read, without its path (the note
// names it as the result does).
func readError(err error) string {
	if errors.Is(err, fs.ErrPermission) {
		return "permission denied"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
