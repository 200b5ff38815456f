package tui

// GitHub's extensions to CommonMark that the chat renders (tables,
// strikethrough, task lists, bare links), as parser plugins for goldmark.
//
// They are goldmark's own (its extension package, v1.8.2, MIT licence,
// copyright 2019 Yusuke Inuzuka), less the HTML renderers the terminal does
// not use, with one change: nothing is built when the program starts.
// goldmark's extension package compiles Linkify's regular expressions (two
// of them repeat a class 256 times) and the table and task list ones as
// package variables, the largest initialisation in the binary (1.2 ms on a
// quiet machine, 3.9 ms on a loaded one, 264 KB in 2,049 allocations), paid
// by every `serve` and by the sandbox's launcher, which never render
// Markdown. Here the table's delimiter row and the task list's box are
// read by hand, and Linkify's expressions are compiled on the first chat
// render (gfmParser).
//
// goldmark's licence, which covers the parts taken from it:
//
// MIT License
//
// Copyright (c) 2019 Yusuke Inuzuka
//
// Permission is hereby granted, free of charge, to any person obtaining a copy
// of this software and associated documentation files (the "Software"), to deal
// in the Software without restriction, including without limitation the rights
// to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
// copies of the Software, and to permit persons to whom the Software is
// furnished to do so, subject to the following conditions:
//
// The above copyright notice and this permission notice shall be included in all
// copies or substantial portions of the Software.
//
// THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
// IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
// FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
// AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
// LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
// OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
// SOFTWARE.

import (
	"bytes"
	"regexp"
	"sync"

	gast "github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// gfmParser returns goldmark's default parser with the extensions added at
// the priorities goldmark's own Extend methods give them.
func gfmParser() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(append(parser.DefaultInlineParsers(),
			util.Prioritized(strikethroughParser{}, 500),
			util.Prioritized(taskCheckBoxParser{}, 0),
			util.Prioritized(&linkifyParser{}, 999))...),
		parser.WithParagraphTransformers(append(parser.DefaultParagraphTransformers(),
			util.Prioritized(tableParagraphTransformer{}, 200))...),
		parser.WithASTTransformers(util.Prioritized(tableASTTransformer{}, 0)),
	)
}

// escapedPipeCellListKey holds, while a document is parsed, the table
// cells with an escaped pipe inside a code span. A parse context is sized
// for the keys that exist when it is made, so the key is made when the
// program starts (it is a number: nothing is allocated).
var escapedPipeCellListKey = parser.NewContextKey()

type escapedPipeCell struct {
	Cell        *east.TableCell
	Pos         []int
	Transformed bool
}

func isTableDelim(bs []byte) bool {
	if w, _ := util.IndentWidth(bs, 0); w > 3 {
		return false
	}
	allSep := true
	for _, b := range bs {
		if b != '-' {
			allSep = false
		}
		if !(util.IsSpace(b) || b == '-' || b == '|' || b == ':') {
			return false
		}
	}
	return !allSep
}

// delimAlignment reads one cell of a table's delimiter row: `:---`,
// `---:`, `:---:` or `---` between optional white space (goldmark's
// regular expressions `^\s*\:\-+\s*$` and the like, read by hand).
func delimAlignment(col []byte) (east.Alignment, bool) {
	col = bytes.Trim(col, " \t\n\f\r")
	left := len(col) > 0 && col[0] == ':'
	if left {
		col = col[1:]
	}
	right := len(col) > 0 && col[len(col)-1] == ':'
	if right {
		col = col[:len(col)-1]
	}
	if len(col) == 0 || len(bytes.Trim(col, "-")) != 0 {
		return east.AlignNone, false
	}
	switch {
	case left && right:
		return east.AlignCenter, true
	case left:
		return east.AlignLeft, true
	case right:
		return east.AlignRight, true
	}
	return east.AlignNone, true
}

// tableParagraphTransformer turns a paragraph whose second line is a
// delimiter row into a table.
type tableParagraphTransformer struct{}

func (b tableParagraphTransformer) Transform(node *gast.Paragraph, reader text.Reader, pc parser.Context) {
	ppos := node.Pos()
	lines := node.Lines()
	if lines.Len() < 2 {
		return
	}
	for i := 1; i < lines.Len(); i++ {
		alignments := b.parseDelimiter(lines.At(i), reader)
		if alignments == nil {
			continue
		}
		header := b.parseRow(lines.At(i-1), alignments, true, reader, pc)
		if header == nil || len(alignments) != header.ChildCount() {
			return
		}
		table := east.NewTable()
		table.Alignments = alignments
		table.SetPos(ppos)
		table.AppendChild(table, east.NewTableHeader(header))
		for j := i + 1; j < lines.Len(); j++ {
			table.AppendChild(table, b.parseRow(lines.At(j), alignments, false, reader, pc))
		}
		node.Lines().SetSliced(0, i-1)
		node.Parent().InsertAfter(node.Parent(), node, table)
		if node.Lines().Len() == 0 {
			node.Parent().RemoveChild(node.Parent(), node)
		} else {
			last := node.Lines().At(i - 2)
			last.Stop = last.Stop - 1 // trim last newline(\n)
			node.Lines().Set(i-2, last)
		}
	}
}

func (b tableParagraphTransformer) parseRow(segment text.Segment,
	alignments []east.Alignment, isHeader bool, reader text.Reader, pc parser.Context) *east.TableRow {
	npos := segment
	source := reader.Source()
	segment = segment.TrimLeftSpace(source)
	segment = segment.TrimRightSpace(source)
	line := segment.Value(source)
	pos := 0
	limit := len(line)
	row := east.NewTableRow(alignments)
	row.SetPos(npos.Start)
	if len(line) > 0 && line[pos] == '|' {
		pos++
	}
	if len(line) > 0 && line[limit-1] == '|' {
		limit--
	}
	i := 0
	for ; pos < limit; i++ {
		alignment := east.AlignNone
		if i >= len(alignments) {
			if !isHeader {
				return row
			}
		} else {
			alignment = alignments[i]
		}

		var escapedCell *escapedPipeCell
		node := east.NewTableCell()
		node.SetPos(npos.Start + pos - npos.Padding)
		node.Alignment = alignment
		hasBacktick := false
		closure := pos
		for ; closure < limit; closure++ {
			if line[closure] == '`' {
				hasBacktick = true
			}
			if line[closure] == '|' {
				if closure == 0 || line[closure-1] != '\\' {
					break
				} else if hasBacktick {
					if escapedCell == nil {
						escapedCell = &escapedPipeCell{node, []int{}, false}
						escapedList := pc.ComputeIfAbsent(escapedPipeCellListKey,
							func() any {
								return []*escapedPipeCell{}
							}).([]*escapedPipeCell)
						escapedList = append(escapedList, escapedCell)
						pc.Set(escapedPipeCellListKey, escapedList)
					}
					escapedCell.Pos = append(escapedCell.Pos, segment.Start+closure-1)
				}
			}
		}
		seg := text.NewSegment(segment.Start+pos, segment.Start+closure)
		seg = seg.TrimLeftSpace(source)
		seg = seg.TrimRightSpace(source)
		node.Lines().Append(seg)
		row.AppendChild(row, node)
		pos = closure + 1
	}
	for ; i < len(alignments); i++ {
		row.AppendChild(row, east.NewTableCell())
	}
	return row
}

func (b tableParagraphTransformer) parseDelimiter(segment text.Segment, reader text.Reader) []east.Alignment {
	line := segment.Value(reader.Source())
	if !isTableDelim(line) {
		return nil
	}
	cols := bytes.Split(line, []byte{'|'})
	if util.IsBlank(cols[0]) {
		cols = cols[1:]
	}
	if len(cols) > 0 && util.IsBlank(cols[len(cols)-1]) {
		cols = cols[:len(cols)-1]
	}

	var alignments []east.Alignment
	for _, col := range cols {
		a, ok := delimAlignment(col)
		if !ok {
			return nil
		}
		alignments = append(alignments, a)
	}
	return alignments
}

// tableASTTransformer splits the code spans of cells with an escaped pipe
// where the pipe was.
type tableASTTransformer struct{}

func (a tableASTTransformer) Transform(node *gast.Document, reader text.Reader, pc parser.Context) {
	lst := pc.Get(escapedPipeCellListKey)
	if lst == nil {
		return
	}
	pc.Set(escapedPipeCellListKey, nil)
	for _, v := range lst.([]*escapedPipeCell) {
		if v.Transformed {
			continue
		}
		_ = gast.Walk(v.Cell, func(n gast.Node, entering bool) (gast.WalkStatus, error) {
			if !entering || n.Kind() != gast.KindCodeSpan {
				return gast.WalkContinue, nil
			}
			for c := n.FirstChild(); c != nil; {
				next := c.NextSibling()
				if c.Kind() != gast.KindText {
					c = next
					continue
				}
				splitEscapedPipes(c, lst.([]*escapedPipeCell))
				c = next
			}
			return gast.WalkContinue, nil
		})
	}
}

// splitEscapedPipes splits the text node c at each escaped pipe of lst it
// holds.
func splitEscapedPipes(c gast.Node, lst []*escapedPipeCell) {
	parent := c.Parent()
	ts := &c.(*gast.Text).Segment
	n := c
	for _, v := range lst {
		for _, pos := range v.Pos {
			if ts.Start <= pos && pos < ts.Stop {
				segment := n.(*gast.Text).Segment
				n1 := gast.NewRawTextSegment(segment.WithStop(pos))
				n2 := gast.NewRawTextSegment(segment.WithStart(pos + 1))
				parent.InsertAfter(parent, n, n1)
				parent.InsertAfter(parent, n1, n2)
				parent.RemoveChild(parent, n)
				n = n2
				v.Transformed = true
			}
		}
	}
}

// strikethroughDelimiterProcessor matches `~` delimiters.
type strikethroughDelimiterProcessor struct{}

func (p strikethroughDelimiterProcessor) IsDelimiter(b byte) bool {
	return b == '~'
}

func (p strikethroughDelimiterProcessor) CanOpenCloser(opener, closer *parser.Delimiter) bool {
	return opener.Char == closer.Char
}

func (p strikethroughDelimiterProcessor) OnMatch(consumes int) gast.Node {
	return east.NewStrikethrough()
}

// strikethroughParser reads `~text~` and `~~text~~`.
type strikethroughParser struct{}

func (s strikethroughParser) Trigger() []byte {
	return []byte{'~'}
}

func (s strikethroughParser) Parse(parent gast.Node, block text.Reader, pc parser.Context) gast.Node {
	before := block.PrecendingCharacter()
	line, segment := block.PeekLine()
	node := parser.ScanDelimiter(line, before, 1, strikethroughDelimiterProcessor{})
	if node == nil || node.OriginalLength > 2 || before == '~' {
		return nil
	}

	node.Segment = segment.WithStop(segment.Start + node.OriginalLength)
	block.Advance(node.OriginalLength)
	pc.PushDelimiter(node)
	return node
}

func (s strikethroughParser) CloseBlock(parent gast.Node, pc parser.Context) {}

// taskCheckBoxParser reads the `[ ]` or `[x]` that starts a list item.
type taskCheckBoxParser struct{}

func (s taskCheckBoxParser) Trigger() []byte {
	return []byte{'['}
}

func (s taskCheckBoxParser) Parse(parent gast.Node, block text.Reader, pc parser.Context) gast.Node {
	// Given AST structure must be like
	// - List
	//   - ListItem         : parent.Parent
	//     - TextBlock      : parent
	//       (current line)
	if parent.Parent() == nil || parent.Parent().FirstChild() != parent {
		return nil
	}

	if parent.HasChildren() {
		return nil
	}
	if _, ok := parent.Parent().(*gast.ListItem); !ok {
		return nil
	}
	line, _ := block.PeekLine()
	value, n, ok := taskBox(line)
	if !ok {
		return nil
	}
	block.Advance(n)
	return east.NewTaskCheckBox(value == 'x' || value == 'X')
}

func (s taskCheckBoxParser) CloseBlock(parent gast.Node, pc parser.Context) {}

// taskBox reads a task list's box at the start of line: `[`, a space, `x`
// or `X`, `]`, then any white space (goldmark's `^\[([\sxX])\]\s*`, read
// by hand). It returns the character in the box and the length read.
func taskBox(line []byte) (value byte, n int, ok bool) {
	isSpace := func(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\f' || b == '\r' }
	if len(line) < 3 || line[0] != '[' || line[2] != ']' || !(isSpace(line[1]) || line[1] == 'x' || line[1] == 'X') {
		return 0, 0, false
	}
	n = 3
	for n < len(line) && isSpace(line[n]) {
		n++
	}
	return line[1], n, true
}

// linkifyRegexps are Linkify's expressions for links with a protocol and
// links that start with www., compiled on first use.
var linkifyRegexps = sync.OnceValues(func() (url, www *regexp.Regexp) {
	www = regexp.MustCompile(`^www\.[-a-zA-Z0-9@:%._\+~#=]{1,256}\.[a-z]+(?:[/#?][-a-zA-Z0-9@:%_\+.~#!?&/=\(\);,'">\^{}\[\]` + "`" + `]*)?`)
	url = regexp.MustCompile(`^(?:http|https|ftp)://[-a-zA-Z0-9@:%._\+~#=]{1,256}\.[a-z]+(?::\d+)?(?:[/#?][-a-zA-Z0-9@:%_+.~#$!?&/=\(\);,'">\^{}\[\]` + "`" + `]*)?`)
	return url, www
})

// linkifyParser turns text that looks like a URL or an e-mail address
// into a link.
type linkifyParser struct{}

func (s *linkifyParser) Trigger() []byte {
	// ' ' indicates any white spaces and a line head
	return []byte{' ', '*', '_', '~', '('}
}

var (
	protoHTTP  = []byte("http:")
	protoHTTPS = []byte("https:")
	protoFTP   = []byte("ftp:")
	domainWWW  = []byte("www.")
)

func (s *linkifyParser) Parse(parent gast.Node, block text.Reader, pc parser.Context) gast.Node {
	if pc.IsInLinkLabel() {
		return nil
	}
	line, segment := block.PeekLine()
	consumes := 0
	start := segment.Start
	c := line[0]
	// advance if current position is not a line head.
	if c == ' ' || c == '*' || c == '_' || c == '~' || c == '(' {
		consumes++
		start++
		line = line[1:]
	}

	var protocol []byte
	typ := gast.AutoLinkURL
	m := linkifyURL(line)
	if m == nil && bytes.HasPrefix(line, domainWWW) {
		_, www := linkifyRegexps()
		m = www.FindSubmatchIndex(line)
		protocol = []byte("http")
	}
	if m != nil && m[0] != 0 {
		m = nil
	}
	if m != nil {
		m[1] = trimLinkEnd(line, m[0], m[1])
	}
	if m == nil {
		if m = linkifyEmail(line); m == nil {
			return nil
		}
		typ = gast.AutoLinkEmail
	}
	if consumes != 0 {
		s := segment.WithStop(segment.Start + 1)
		gast.MergeOrAppendTextSegment(parent, s)
	}
	i := m[1] - 1
	for ; i > 0; i-- {
		c := line[i]
		switch c {
		case '?', '!', '.', ',', ':', '*', '_', '~':
		default:
			goto endfor
		}
	}
endfor:
	i++
	consumes += i
	block.Advance(consumes)
	n := gast.NewTextSegment(text.NewSegment(start, start+i))
	link := gast.NewAutoLink(typ, n)
	link.Protocol = protocol
	return link
}

// linkifyURL matches a link with a protocol at the start of line.
func linkifyURL(line []byte) []int {
	if bytes.HasPrefix(line, protoHTTP) || bytes.HasPrefix(line, protoHTTPS) || bytes.HasPrefix(line, protoFTP) {
		url, _ := linkifyRegexps()
		return url.FindSubmatchIndex(line)
	}
	return nil
}

// trimLinkEnd drops from a matched link line[start:stop] a final period,
// the closing parentheses it does not open, and an entity reference
// (`&amp;`) at its end.
func trimLinkEnd(line []byte, start, stop int) int {
	switch line[stop-1] {
	case '.':
		stop--
	case ')':
		closing := 0
		for i := stop - 1; i >= start; i-- {
			switch line[i] {
			case ')':
				closing++
			case '(':
				closing--
			}
		}
		if closing > 0 {
			stop -= closing
		}
	case ';':
		i := stop - 2
		for ; i >= start; i-- {
			if util.IsAlphaNumeric(line[i]) {
				continue
			}
			break
		}
		if i != stop-2 {
			if line[i] == '&' {
				stop -= stop - i
			}
		}
	}
	return stop
}

// linkifyEmail matches an e-mail address at the start of line.
func linkifyEmail(line []byte) []int {
	if len(line) > 0 && util.IsPunct(line[0]) {
		return nil
	}
	stop := util.FindEmailIndex(line)
	if stop < 0 {
		return nil
	}
	at := bytes.IndexByte(line, '@')
	m := []int{0, stop, at, stop - 1}
	if bytes.IndexByte(line[m[2]:m[3]], '.') < 0 {
		return nil
	}
	if line[m[1]-1] == '.' {
		m[1]--
	}
	if m[1] < len(line) {
		nextChar := line[m[1]]
		if nextChar == '-' || nextChar == '_' {
			return nil
		}
	}
	return m
}

func (s *linkifyParser) CloseBlock(parent gast.Node, pc parser.Context) {}
