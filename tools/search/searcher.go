package search

import (
	"bytes"
	"errors"
	"io"
	"regexp/syntax"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// outputMode is Grep's output_mode.
type outputMode uint8

const (
	modeFiles outputMode = iota
	modeContent
	modeCount
)

// Searcher limits.
const (
	// readBufferSize is the reusable buffer a file is read into; a file
	// that fits is searched in one piece.
	readBufferSize = 256 << 10
	// keepBufferMax: a buffer grown for a very long line is dropped after
	// the file rather than kept by the worker.
	keepBufferMax = 8 << 20
	// binarySniff is how much of a file's start is checked for NUL bytes:
	// one there means the file is binary and is skipped, as ripgrep does.
	binarySniff = 64 << 10
	// maxLineChars: longer lines are replaced by a marker (docs/tools.md §6).
	maxLineChars = 500
)

// searchOptions say what a search reports.
type searchOptions struct {
	mode          outputMode
	before, after int
	lineNumbers   bool
	onlyMatching  bool
	// withPath prefixes content lines with the file's display path.
	withPath bool
	// retainCap bounds the output lines kept per file (the page end:
	// offset + head_limit); -1 keeps all.
	retainCap int
}

// fileResult is what searching one file produced.
type fileResult struct {
	abs     string
	file    walkFile // as the walk yielded it
	display string
	mtime   time.Time
	matched bool
	// count is the file's matching lines, or its matches with -o.
	count int
	// entries counts the output lines the file produced (content mode),
	// context separators within the file included.
	entries int
	// out holds the first retained entries, each ending in '\n'.
	out      []byte
	retained int
	err      error
}

// searcher searches files one at a time; each worker owns one.
type searcher struct {
	m        *matcher
	opt      searchOptions
	pageFull *atomic.Bool // set by the printer once the page is complete
	buf      []byte
	sc       *scan // prefilter state over the buffer
	lineSc   *scan // prefilter state over one line (match spans)
	// dfa decides which lines match (nil with multiline, or once the
	// pattern's automaton proved too large: the regexp decides then).
	dfa *lineDFA
	// rdfa reads lines back from the pattern's last literal (nil unless
	// the matcher has rprog, or once its automaton proved too large).
	rdfa *lineDFA

	// Per-file state.
	res       *fileResult
	base      int64 // file offset of buf[0]
	lastEnd   int64 // file offset just past the last printed line; -1 before any
	afterLeft int   // after-context lines still to print
	countOff  int64 // newlines before this file offset have been counted
	countLine int   // line number at countOff
}

// readBufs holds read buffers (*[]byte) between searches: a search's
// workers each need one, and allocating them afresh made every search of
// a small tree on many cores allocate (and fault in) a quarter megabyte a
// worker, more where a long line had grown one.
var readBufs = sync.Pool{New: func() any {
	b := make([]byte, readBufferSize)
	return &b
}}

func newSearcher(m *matcher, opt searchOptions, pageFull *atomic.Bool) *searcher {
	s := &searcher{m: m, opt: opt, pageFull: pageFull, buf: *readBufs.Get().(*[]byte)}
	if m.pf != nil {
		s.sc = m.pf.newScan(nil)
		s.lineSc = m.pf.newScan(nil)
	}
	if m.prog != nil {
		s.dfa = newLineDFA(m.prog)
	}
	if m.rprog != nil {
		s.rdfa = newReverseDFA(m.rprog)
	}
	return s
}

// release hands the searcher's read buffer back for another search; the
// searcher must not be used after.
func (s *searcher) release() {
	b := s.buf
	s.buf = nil
	if len(b) <= keepBufferMax {
		readBufs.Put(&b)
	}
}

// searchFile searches the file at abs, filling res.
func (s *searcher) searchFile(abs string, res *fileResult) {
	f, err := openFile(abs)
	if err != nil {
		res.err = err
		return
	}
	s.search(f, res)
}

// search searches the open file f, filling res, and closes f.
func (s *searcher) search(f *rawFile, res *fileResult) {
	var err error
	defer f.Close()
	s.res, s.base, s.lastEnd, s.afterLeft, s.countOff, s.countLine = res, 0, -1, 0, 0, 1
	defer func() {
		s.res = nil
		if len(s.buf) > keepBufferMax {
			s.buf = make([]byte, readBufferSize)
		}
	}()
	if s.m.multiline {
		s.searchWhole(f)
	} else {
		s.searchStream(f)
	}
	if res.matched && s.opt.mode == modeFiles {
		// Only files_with_matches sorts by time, and only matches need it.
		if res.mtime, err = f.ModTime(); err != nil {
			res.err = err
		}
	}
}

// searchStream reads the file through the buffer, searching complete
// lines as they arrive and keeping enough of the previous lines for
// before-context.
func (s *searcher) searchStream(f *rawFile) {
	buf := s.buf
	n, start := 0, 0
	first := true
	for {
		if n == len(buf) {
			keep := s.keepFrom(buf, start)
			if keep == 0 {
				grown := make([]byte, 2*len(buf))
				copy(grown, buf[:n])
				buf, s.buf = grown, grown
			} else {
				s.advanceCount(buf, keep)
				copy(buf, buf[keep:n])
				n -= keep
				start -= keep
				s.base += int64(keep)
			}
		}
		m, err := f.Read(buf[n:])
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			s.res.err = err
			return
		}
		if z := bytes.IndexByte(buf[n:n+m], 0); z >= 0 {
			if first && s.base+int64(n+z) < binarySniff {
				s.dropAll()
				return
			}
			// Binary data after text: search the lines before it, then stop.
			n = max(bytes.LastIndexByte(buf[:n+z], '\n')+1, start)
			eof = true
		} else {
			n += m
		}
		first = false
		to := n
		if !eof {
			to = start + bytes.LastIndexByte(buf[start:n], '\n') + 1
		}
		if to > start {
			if s.region(buf, start, to) {
				return
			}
			start = to
		}
		if eof {
			return
		}
	}
}

// dropAll forgets what was found: the file turned out to be binary.
func (s *searcher) dropAll() {
	r := s.res
	r.matched, r.count, r.entries, r.out, r.retained = false, 0, 0, nil, 0
}

// keepFrom returns where the buffer must be kept from when it is
// refilled: the unprocessed data, and the lines before it that
// before-context may still print.
func (s *searcher) keepFrom(buf []byte, start int) int {
	p := start
	if s.opt.mode == modeContent {
		for k := 0; k < s.opt.before && p > 0; k++ {
			p = bytes.LastIndexByte(buf[:p-1], '\n') + 1
		}
	}
	return p
}

// searchWhole reads the whole file (multiline patterns may span any
// number of lines) and searches it at once.
func (s *searcher) searchWhole(f *rawFile) {
	buf := s.buf[:cap(s.buf)]
	n := 0
	for {
		if n == len(buf) {
			grown := make([]byte, 2*len(buf))
			copy(grown, buf)
			buf, s.buf = grown, grown
		}
		m, err := f.Read(buf[n:])
		n += m
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.res.err = err
			return
		}
	}
	data := buf[:n]
	if z := bytes.IndexByte(data, 0); z >= 0 {
		if z < binarySniff {
			return
		}
		data = data[:bytes.LastIndexByte(data[:z], '\n')+1]
	}
	if len(data) == 0 {
		return
	}
	if s.m.pf != nil {
		s.sc.reset(data)
		if c, _ := s.sc.next(0); c < 0 {
			return
		}
	}
	var locs [][]int
	if s.opt.mode == modeFiles {
		if loc := s.m.re.FindIndex(data); loc != nil {
			locs = [][]int{loc}
		}
	} else {
		locs = s.m.re.FindAllIndex(data, -1)
	}
	pos := 0
	for i := 0; i < len(locs); {
		// A block is a run of matches whose lines overlap.
		ls, le := lineBounds(data, locs[i][0], locs[i][1])
		var spans [][2]int
		for ; i < len(locs); i++ {
			s0, e0 := locs[i][0], locs[i][1]
			bs, be := lineBounds(data, s0, e0)
			if bs > le {
				break
			}
			le = max(le, be)
			if e0 > s0 {
				spans = append(spans, [2]int{s0, e0})
			}
		}
		if s.block(data, pos, ls, le, spans) {
			return
		}
		pos = le + 1
	}
	if s.opt.mode == modeContent {
		s.flushAfter(data, pos, len(data))
	}
}

// lineBounds returns the start of the line holding data[s] and the end
// (the newline's index, or len) of the line holding the match's last byte.
func lineBounds(data []byte, s, e int) (int, int) {
	ls := bytes.LastIndexByte(data[:s], '\n') + 1
	last := s
	if e > s {
		last = e - 1
	}
	if last >= len(data) {
		return ls, len(data)
	}
	le := bytes.IndexByte(data[last:], '\n')
	if le < 0 {
		return ls, len(data)
	}
	return ls, last + le
}

// region searches the complete lines buf[from:to]. It returns true when
// the file needs no more searching.
func (s *searcher) region(buf []byte, from, to int) bool {
	if s.sc != nil {
		s.sc.reset(buf[:to])
	}
	pos := from
	for pos < to {
		ls, le, ok := s.nextMatchingLine(buf, pos, to)
		if !ok {
			break
		}
		var spans [][2]int
		if s.opt.onlyMatching && s.opt.mode != modeFiles {
			for _, sp := range s.m.spans(buf[ls:le], s.lineSc) {
				spans = append(spans, [2]int{ls + sp[0], ls + sp[1]})
			}
			if len(spans) == 0 {
				// Only empty matches: nothing to show with -o, so the
				// line counts as not matching.
				if s.opt.mode == modeContent {
					s.flushAfter(buf, pos, min(le+1, to))
				}
				pos = le + 1
				continue
			}
		}
		if s.block(buf, pos, ls, le, spans) {
			return true
		}
		pos = le + 1
	}
	if s.opt.mode == modeContent {
		s.flushAfter(buf, pos, to)
	}
	return false
}

// nextMatchingLine finds the first line at or after pos (a line start)
// that matches, returning its start and end (newline index or to).
func (s *searcher) nextMatchingLine(buf []byte, pos, to int) (int, int, bool) {
	m := s.m
	if s.dfa != nil && s.dfa.resets > dfaMaxResets {
		s.dfa = nil
	}
	if s.sc == nil && s.dfa != nil {
		return s.dfa.find(buf, pos, to)
	}
	if s.rdfa != nil && s.rdfa.resets > dfaMaxResets {
		s.rdfa = nil
	}
	if s.rdfa != nil {
		// Every match ends with the literal sc finds: read back from each
		// occurrence; pos is a line start.
		ls := pos
		for {
			c, e := s.sc.next(pos)
			if c < 0 || c >= to {
				return 0, 0, false
			}
			if nl := bytes.LastIndexByte(buf[pos:c], '\n'); nl >= 0 {
				ls = pos + nl + 1
			}
			if s.after(buf, e, to) && s.rdfa.matchEndingAt(buf, ls, c) {
				le := bytes.IndexByte(buf[e:to], '\n')
				if le < 0 {
					return ls, to, true
				}
				return ls, e + le, true
			}
			pos = c + 1
		}
	}
	for pos < to {
		ls := pos
		if s.sc != nil {
			c, _ := s.sc.next(pos)
			if c < 0 || c >= to {
				return 0, 0, false
			}
			ls = pos + bytes.LastIndexByte(buf[pos:c], '\n') + 1
			pos = c
		}
		le := bytes.IndexByte(buf[pos:to], '\n')
		if le < 0 {
			le = to
		} else {
			le += pos
		}
		if m.lineExact || s.matchLine(buf[ls:le]) {
			return ls, le, true
		}
		pos = le + 1
	}
	return 0, 0, false
}

// after reports whether the pattern's conditions after its last literal
// (matcher.rafter) hold at buf[e], the literal ending there.
func (s *searcher) after(buf []byte, e, to int) bool {
	want := s.m.rafter
	if want == 0 {
		return true
	}
	prev, _ := utf8.DecodeLastRune(buf[:e])
	next := rune(-1)
	if e < to && buf[e] != '\n' {
		next, _ = utf8.DecodeRune(buf[e:to])
	}
	return syntax.EmptyOpContext(prev, next)&want == want
}

// matchLine reports whether line (without its newline) matches.
func (s *searcher) matchLine(line []byte) bool {
	if s.dfa != nil {
		return s.dfa.matchLine(line)
	}
	return s.m.re.Match(line)
}

// block records a matched block: lines buf[ls:le] (one line unless
// multiline) holding the match spans (absolute; only kept with -o). pos
// is where the previous block ended. It returns true when the file needs
// no more searching.
func (s *searcher) block(buf []byte, pos, ls, le int, spans [][2]int) bool {
	r := s.res
	r.matched = true
	switch s.opt.mode {
	case modeFiles:
		return true
	case modeCount:
		if s.opt.onlyMatching {
			r.count += len(spans)
		} else {
			r.count++
		}
		return false
	}
	if s.opt.onlyMatching {
		r.count += len(spans)
	} else {
		r.count++
	}
	s.flushAfter(buf, pos, ls)
	lineNo := s.lineAt(buf, ls)
	s.printBefore(buf, ls, lineNo)
	for start := ls; start <= le; lineNo++ {
		end := bytes.IndexByte(buf[start:le], '\n')
		if end < 0 {
			end = le
		} else {
			end += start
		}
		if s.opt.onlyMatching {
			first := true
			for _, sp := range spans {
				a, b := max(sp[0], start), min(sp[1], end)
				if a >= b {
					continue
				}
				if first {
					s.separate(start)
					first = false
				}
				s.entry(':', lineNo, buf[a:b])
				s.lastEnd = s.base + int64(end) + 1
			}
		} else {
			s.printLine(buf, start, end, ':', lineNo)
		}
		start = end + 1
	}
	s.afterLeft = s.opt.after
	return false
}

// printBefore prints up to opt.before lines before the line at ls whose
// number is lineNo, not repeating lines already printed.
func (s *searcher) printBefore(buf []byte, ls, lineNo int) {
	if s.opt.before == 0 {
		return
	}
	floor := 0
	if s.lastEnd >= s.base {
		floor = int(s.lastEnd - s.base)
	}
	p, k := ls, 0
	for k < s.opt.before && p > floor {
		p = bytes.LastIndexByte(buf[:p-1], '\n') + 1
		k++
	}
	for ; k > 0; k-- {
		end := p + bytes.IndexByte(buf[p:], '\n')
		s.printLine(buf, p, end, '-', lineNo-k)
		p = end + 1
	}
}

// flushAfter prints pending after-context lines in buf[from:limit].
func (s *searcher) flushAfter(buf []byte, from, limit int) {
	for s.afterLeft > 0 && from < limit {
		end := bytes.IndexByte(buf[from:limit], '\n')
		if end < 0 {
			end = limit
		} else {
			end += from
		}
		s.printLine(buf, from, end, '-', s.lineAt(buf, from))
		s.afterLeft--
		from = end + 1
	}
}

// printLine prints the line buf[start:end], with a group separator first
// when it does not follow the last printed line.
func (s *searcher) printLine(buf []byte, start, end int, sep byte, lineNo int) {
	s.separate(start)
	s.entry(sep, lineNo, buf[start:end])
	s.lastEnd = s.base + int64(end) + 1
}

// separate emits "--" between non-adjacent groups when context is on.
func (s *searcher) separate(start int) {
	if (s.opt.before > 0 || s.opt.after > 0) && s.lastEnd >= 0 && s.base+int64(start) != s.lastEnd {
		s.res.entries++
		if s.retaining() {
			s.res.out = append(s.res.out, "--\n"...)
			s.res.retained++
		}
	}
}

func (s *searcher) retaining() bool {
	r := s.res
	if s.opt.retainCap >= 0 && r.retained >= s.opt.retainCap {
		return false
	}
	return s.pageFull == nil || !s.pageFull.Load()
}

// entry emits one output line: [path sep] [lineNo sep] text.
func (s *searcher) entry(sep byte, lineNo int, text []byte) {
	r := s.res
	r.entries++
	if !s.retaining() {
		return
	}
	r.retained++
	if s.opt.withPath {
		r.out = append(r.out, r.display...)
		r.out = append(r.out, sep)
	}
	if s.opt.lineNumbers {
		r.out = strconv.AppendInt(r.out, int64(lineNo), 10)
		r.out = append(r.out, sep)
	}
	r.out = appendLineText(r.out, text)
	r.out = append(r.out, '\n')
}

// appendLineText appends a line's text, dropping a trailing carriage
// return and replacing lines over maxLineChars characters by a marker.
func appendLineText(out, text []byte) []byte {
	text = bytes.TrimSuffix(text, []byte{'\r'})
	if len(text) > maxLineChars {
		if n := utf8.RuneCount(text); n > maxLineChars {
			out = append(out, "[long line omitted: "...)
			out = strconv.AppendInt(out, int64(n), 10)
			return append(out, " characters]"...)
		}
	}
	return append(out, text...)
}

// lineAt returns the line number of the line starting at buf[pos],
// counting newlines forward from the last position asked about.
func (s *searcher) lineAt(buf []byte, pos int) int {
	if !s.opt.lineNumbers {
		return 0
	}
	off := s.base + int64(pos)
	if off > s.countOff {
		s.countLine += bytes.Count(buf[s.countOff-s.base:pos], []byte{'\n'})
		s.countOff = off
	}
	return s.countLine
}

// advanceCount counts the newlines that are about to leave the buffer.
func (s *searcher) advanceCount(buf []byte, keep int) {
	if s.opt.lineNumbers && s.opt.mode == modeContent && s.countOff < s.base+int64(keep) {
		s.lineAt(buf, keep)
	}
}
