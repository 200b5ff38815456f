package search

import (
	"bytes"
	"encoding/binary"
	"regexp/syntax"
	"slices"
	"unicode/utf8"
)

// A lineDFA decides which lines hold a match of a pattern, scanning a
// buffer of lines once, a byte at a time, with a deterministic automaton
// built lazily from the pattern's compiled program (regexp/syntax.Prog):
// each state is the set of program instructions alive at a position, and
// each transition is computed the first time it is taken, then read from
// a table. This is RE2's approach; Go's regexp has no DFA and runs a
// backtracker or an NFA on every line, which costs tens of nanoseconds a
// byte on a pattern with no literal to narrow the search down.
//
// Semantics are those of Go's regexp run on each line alone (the line
// without its '\n' is the whole text): ^ and $ match at the line's ends,
// \b and \B look at the neighbouring characters (ASCII word characters),
// invalid UTF-8 bytes are each one U+FFFD. Only whether a line matches is
// decided; where the match is (for -o) is left to the regexp.
//
// A lineDFA is not safe for concurrent use: each searcher owns one, built
// over the program the matcher shares.
type lineDFA struct {
	prog *syntax.Prog
	// states[0] is unused, so that 0 in trans means "not computed yet".
	states []dfaState
	index  map[string]int32
	// trans holds, for state s and byte b, trans[s<<8|b]: the next state,
	// 0 when not computed yet, or dfaMatch when the line matches. The
	// '\n' column leads back to the start state, or to dfaMatch when the
	// line just ended matches. The columns of bytes 0x80 and up stay 0:
	// those start a multi-byte rune, decoded on the slow path, so the
	// fast path needs no test of its own for them.
	trans []int32
	// wide caches transitions on non-ASCII runes.
	wide  map[uint64]int32
	start int32
	// anchored: matches must start where the automaton starts (a
	// reverse automaton reading back from a literal); otherwise a match
	// may start anywhere in the line.
	anchored bool
	// back caches the anchored start states by whether the character
	// after the starting point is a word character (for \b).
	back [2]int32
	// resets counts cache flushes (a pattern whose automaton outgrows
	// dfaMaxStates); past dfaMaxResets the caller falls back to regexp.
	resets int

	// Scratch space of closure.
	stack  []uint32
	onSet  []uint32 // sparse set: onSet[pc] == gen when pc is in the set
	gen    uint32
	runes  []uint32
	next   []uint32
	keyBuf []byte
}

// dfaState is one automaton state: the instructions waiting for the next
// character, and what the previous character was (for ^ and \b).
type dfaState struct {
	pcs      []uint32
	atStart  bool // no character of the line consumed yet
	prevWord bool // the previous character is a word character
	eol      int8 // the line matches if it ends here: 0 unknown, 1 yes, 2 no
}

const (
	dfaMatch = -1
	// dfaMaxStates bounds one automaton's cache (its transition table
	// takes 1 KB a state); when full, the cache is flushed.
	dfaMaxStates = 2048
	// dfaMaxResets: a pattern that keeps flushing the cache is left to
	// the regexp.
	dfaMaxResets = 64
)

func newLineDFA(prog *syntax.Prog) *lineDFA {
	d := &lineDFA{prog: prog, onSet: make([]uint32, len(prog.Inst))}
	d.flush()
	return d
}

// flush empties the cache, keeping only the start state.
func (d *lineDFA) flush() {
	d.states = append(d.states[:0], dfaState{})
	d.index = make(map[string]int32)
	d.trans = d.trans[:0]
	d.trans = append(d.trans, make([]int32, 256)...)
	d.wide = make(map[uint64]int32)
	d.back = [2]int32{}
	var pcs []uint32
	if d.anchored {
		pcs = []uint32{uint32(d.prog.Start)}
	}
	d.start = d.intern(pcs, true, false)
}

// intern returns the id of the state, adding it when new.
func (d *lineDFA) intern(pcs []uint32, atStart, prevWord bool) int32 {
	key := d.keyBuf[:0]
	var flags byte
	if atStart {
		flags |= 1
	}
	if prevWord {
		flags |= 2
	}
	key = append(key, flags)
	for _, pc := range pcs {
		key = binary.LittleEndian.AppendUint32(key, pc)
	}
	d.keyBuf = key
	if id, ok := d.index[string(key)]; ok {
		return id
	}
	id := int32(len(d.states))
	d.states = append(d.states, dfaState{pcs: slices.Clone(pcs), atStart: atStart, prevWord: prevWord})
	d.index[string(key)] = id
	d.trans = append(d.trans, make([]int32, 256)...)
	return id
}

// step computes the transition from state s on rune r, or on the line's
// end when r is -1: dfaMatch when a match ends before r, else the next
// state (the start state after a line's end).
func (d *lineDFA) step(s int32, r rune) int32 {
	st := &d.states[s]
	prev := rune(' ')
	switch {
	case st.atStart:
		prev = -1
	case st.prevWord:
		prev = 'a'
	}
	cond := syntax.EmptyOpContext(prev, r)
	if d.closure(st.pcs, cond) {
		return dfaMatch
	}
	if r < 0 {
		return d.start
	}
	d.next = d.next[:0]
	d.gen++
	for _, pc := range d.runes {
		in := &d.prog.Inst[pc]
		if consumes(in, r) && d.onSet[in.Out] != d.gen {
			d.onSet[in.Out] = d.gen
			d.next = append(d.next, in.Out)
		}
	}
	slices.Sort(d.next)
	if len(d.states) >= dfaMaxStates {
		// The caller holds no state id across a step, only the one
		// returned: flushing here is safe.
		d.resets++
		next := slices.Clone(d.next)
		d.flush()
		return d.intern(next, false, syntax.IsWordChar(r))
	}
	return d.intern(d.next, false, syntax.IsWordChar(r))
}

// consumes reports whether the rune instruction in matches r.
func consumes(in *syntax.Inst, r rune) bool {
	switch in.Op {
	case syntax.InstRuneAny:
		return true
	case syntax.InstRuneAnyNotNL:
		return r != '\n'
	case syntax.InstRune1:
		return r == in.Rune[0]
	}
	return in.MatchRune(r)
}

// closure follows the empty transitions from pcs, and from the program's
// start unless anchored (a match may start anywhere), under the empty-width conditions cond,
// collecting the instructions that consume a rune in d.runes. It reports
// whether a match instruction is reached.
func (d *lineDFA) closure(pcs []uint32, cond syntax.EmptyOp) bool {
	d.gen++
	d.runes = d.runes[:0]
	d.stack = d.stack[:0]
	if !d.anchored {
		d.stack = append(d.stack, uint32(d.prog.Start))
	}
	for i := len(pcs) - 1; i >= 0; i-- {
		d.stack = append(d.stack, pcs[i])
	}
	matched := false
	for len(d.stack) > 0 {
		pc := d.stack[len(d.stack)-1]
		d.stack = d.stack[:len(d.stack)-1]
		if d.onSet[pc] == d.gen {
			continue
		}
		d.onSet[pc] = d.gen
		in := &d.prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			d.stack = append(d.stack, in.Arg, in.Out)
		case syntax.InstCapture, syntax.InstNop:
			d.stack = append(d.stack, in.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(in.Arg)&^cond == 0 {
				d.stack = append(d.stack, in.Out)
			}
		case syntax.InstMatch:
			matched = true
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			d.runes = append(d.runes, pc)
		}
	}
	slices.Sort(d.runes)
	return matched
}

// eolMatch reports whether the line matches when it ends in state s.
func (d *lineDFA) eolMatch(s int32) bool {
	st := &d.states[s]
	if st.eol == 0 {
		st.eol = 2
		if d.step(s, -1) == dfaMatch {
			d.states[s].eol = 1
		}
	}
	return d.states[s].eol == 1
}

// wideStep is the transition on a non-ASCII rune, cached in a map.
func (d *lineDFA) wideStep(s int32, r rune) int32 {
	key := uint64(s)<<32 | uint64(uint32(r))
	if n, ok := d.wide[key]; ok {
		return n
	}
	gen := d.resets
	n := d.step(s, r)
	if d.resets == gen { // else s is gone with the flushed cache
		d.wide[key] = n
	}
	return n
}

// find returns the first line of buf[pos:to] that matches, pos being a
// line start; the line is buf[ls:le], le its '\n' (or to). The lines of
// buf[pos:to] end in '\n' but possibly the last.
func (d *lineDFA) find(buf []byte, pos, to int) (ls, le int, ok bool) {
	s := d.start
	i := pos
	for i < to {
		b := buf[i]
		if n := d.trans[int(s)<<8|int(b)]; n > 0 {
			s = n
			i++
			continue
		}
		if b < utf8.RuneSelf {
			n := d.trans[int(s)<<8|int(b)]
			if n == 0 {
				gen := d.resets
				if b == '\n' {
					n = d.start
					if d.eolMatch(s) {
						n = dfaMatch
					}
				} else {
					n = d.step(s, rune(b))
				}
				if n != dfaMatch && d.resets != gen {
					// The cache was flushed: s is gone; do not record.
					s = n
					i++
					continue
				}
				d.trans[int(s)<<8|int(b)] = n
			}
			if n == dfaMatch {
				return d.lineAround(buf, pos, i, to)
			}
			s = n
			i++
			continue
		}
		r, w := utf8.DecodeRune(buf[i:to])
		n := d.wideStep(s, r)
		if n == dfaMatch {
			return d.lineAround(buf, pos, i, to)
		}
		s = n
		i += w
	}
	if to > pos && buf[to-1] != '\n' && d.eolMatch(s) {
		return d.lineAround(buf, pos, to, to)
	}
	return 0, 0, false
}

// lineAround returns the bounds of the line in which a match ended at i
// (i is the line's '\n' when the match ended at the line's end).
func (d *lineDFA) lineAround(buf []byte, pos, i, to int) (int, int, bool) {
	ls := pos + bytes.LastIndexByte(buf[pos:i], '\n') + 1
	le := bytes.IndexByte(buf[i:to], '\n')
	if le < 0 {
		return ls, to, true
	}
	return ls, i + le, true
}

// matchLine reports whether line (without its '\n') matches.
func (d *lineDFA) matchLine(line []byte) bool {
	if len(line) == 0 {
		return d.eolMatch(d.start)
	}
	_, _, ok := d.find(line, 0, len(line))
	return ok
}

// newReverseDFA returns an anchored automaton for prog, the reversed
// program of what precedes a pattern's last literal: matchEndingAt then
// says whether a match ends where the literal starts, reading the line
// backwards from there (ripgrep's "reverse suffix" strategy). Only the
// few characters the pattern needs before its literal are read, not the
// whole line.
func newReverseDFA(prog *syntax.Prog) *lineDFA {
	d := &lineDFA{prog: prog, onSet: make([]uint32, len(prog.Inst)), anchored: true}
	d.flush()
	return d
}

// matchEndingAt reports whether the reversed pattern matches reading
// buf[ls:end] backwards from end, ls being the line's start and buf[end]
// the first character of the literal that follows.
func (d *lineDFA) matchEndingAt(buf []byte, ls, end int) bool {
	r, _ := utf8.DecodeRune(buf[end:])
	word := 0
	if syntax.IsWordChar(r) {
		word = 1
	}
	s := d.back[word]
	if s == 0 {
		s = d.intern([]uint32{uint32(d.prog.Start)}, false, word == 1)
		d.back[word] = s
	}
	for i := end; i > ls; {
		b := buf[i-1]
		var n int32
		if b < utf8.RuneSelf {
			n = d.trans[int(s)<<8|int(b)]
			if n == 0 {
				gen := d.resets
				n = d.step(s, rune(b))
				if d.resets == gen {
					d.trans[int(s)<<8|int(b)] = n
				}
			}
			i--
		} else {
			r, w := utf8.DecodeLastRune(buf[ls:i])
			n = d.wideStep(s, r)
			i -= w
		}
		if n == dfaMatch {
			return true
		}
		if len(d.states[n].pcs) == 0 {
			return false // no match can start further back
		}
		s = n
	}
	return d.eolMatch(s)
}
