package tui

import (
	"fmt"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// Markdown for the terminal: goldmark parses (CommonMark with GitHub's
// tables, strikethrough, task lists and autolinks) and this file lays the
// tree out in lines of styled text, code blocks through [highlight].
// Glamour did this before; it formats some elements through text/template,
// and text/template in a binary keeps every exported method of every type
// that reaches an interface (the linker cannot tell which ones a template
// calls), the provider SDKs' unused ones included: 37 MB of the binary.

// textStyle is a text style: SGR parameters, e.g. "1;34" (bold blue). The
// colours are the terminal's palette indices, like the rest of the UI's.
// Constants rather than lipgloss styles: nothing of this runs when the
// program starts (`serve` never shows Markdown), and a style is applied
// to a run of text at once.
type textStyle string

// Styles.
const (
	sgrNone      textStyle = ""
	sgrBold      textStyle = "1"
	sgrFaint     textStyle = "2"
	sgrItalic    textStyle = "3"
	sgrUnderline textStyle = "4"
	sgrStrike    textStyle = "9"
	sgrRed       textStyle = "31"
	sgrGreen     textStyle = "32"
	sgrYellow    textStyle = "33"
	sgrBlue      textStyle = "34"
	sgrMagenta   textStyle = "35"
	sgrCyan      textStyle = "36"
	sgrGrey      textStyle = "90"

	mdHeading = sgrBold + ";" + sgrBlue
	mdCode    = sgrYellow
	mdLink    = sgrCyan + ";" + sgrUnderline
	mdMarker  = sgrMagenta
	mdFrame   = sgrFaint
)

// with adds t to s.
func (s textStyle) with(t textStyle) textStyle {
	switch {
	case s == "":
		return t
	case t == "":
		return s
	}
	return s + ";" + t
}

// render styles text, and resets the style after it.
func (s textStyle) render(text string) string {
	if s == "" || text == "" {
		return text
	}
	return "\x1b[" + string(s) + "m" + text + "\x1b[m"
}

// mdMargin is the left margin of rendered Markdown.
const mdMargin = "  "

// markdown renders Markdown for a terminal of a given width.
type markdown struct {
	once   sync.Once
	parser parser.Parser
}

func (m *markdown) render(src string, width int) string {
	m.once.Do(func() {
		m.parser = gfmParser()
	})
	if width < 20 {
		width = 20
	}
	b := []byte(src)
	doc := m.parser.Parse(text.NewReader(b))
	r := mdRenderer{src: b}
	lines := r.blocks(doc, width-2*len(mdMargin))
	for i, l := range lines {
		if l != "" {
			lines[i] = mdMargin + l
		}
	}
	return strings.Join(lines, "\n")
}

// mdRenderer lays out one parsed document.
type mdRenderer struct {
	src []byte
}

// blocks renders n's child blocks, a blank line between two (none between
// the items of a tight list's item).
func (r *mdRenderer) blocks(n ast.Node, width int) []string {
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		lines := r.block(c, width)
		if len(lines) == 0 {
			continue
		}
		if len(out) > 0 && !(c.Kind() == ast.KindTextBlock || c.PreviousSibling().Kind() == ast.KindTextBlock) {
			out = append(out, "")
		}
		out = append(out, lines...)
	}
	return out
}

func (r *mdRenderer) block(n ast.Node, width int) []string {
	switch n := n.(type) {
	case *ast.Heading:
		st := mdHeading
		prefix := strings.Repeat("#", n.Level) + " "
		if n.Level == 1 {
			st = st.with(sgrUnderline)
		}
		return wrapSpans(append([]span{{prefix, st}}, r.inline(n, st)...), width)
	case *ast.Paragraph, *ast.TextBlock:
		return wrapSpans(r.inline(n, sgrNone), width)
	case *ast.FencedCodeBlock:
		return codeLines(r.lines(n), string(n.Language(r.src)), width)
	case *ast.CodeBlock:
		return codeLines(r.lines(n), "", width)
	case *ast.HTMLBlock:
		return strings.Split(strings.TrimRight(r.lines(n), "\n"), "\n")
	case *ast.ThematicBreak:
		return []string{mdFrame.render(strings.Repeat("─", min(width, 40)))}
	case *ast.Blockquote:
		inner := r.blocks(n, width-2)
		for i, l := range inner {
			inner[i] = mdFrame.render("│") + " " + l
		}
		return inner
	case *ast.List:
		return r.list(n, width)
	case *east.Table:
		return r.table(n, width)
	}
	if n.Type() == ast.TypeBlock && n.HasChildren() {
		return r.blocks(n, width)
	}
	return strings.Split(strings.TrimRight(r.lines(n), "\n"), "\n")
}

// lines is a block's source lines as they stand.
func (r *mdRenderer) lines(n ast.Node) string {
	var b strings.Builder
	segs := n.Lines()
	for i := range segs.Len() {
		seg := segs.At(i)
		b.Write(seg.Value(r.src))
	}
	return b.String()
}

// codeLines are a code block's lines, highlighted, indented by two; a
// line wider than width wraps inside the block, under the same indent
// (the terminal would wrap it to the screen's edge, out of the block).
func codeLines(code, lang string, width int) []string {
	// Tabs as four spaces: the UI measures lines, and a tab has no width.
	code = strings.ReplaceAll(strings.TrimRight(code, "\n"), "\t", "    ")
	var out []string
	for _, l := range strings.Split(highlight(code, lang), "\n") {
		if width <= 12 || ansi.StringWidth(l)+2 <= width {
			out = append(out, "  "+l)
			continue
		}
		for _, part := range strings.Split(ansi.Hardwrap(l, width-2, true), "\n") {
			out = append(out, "  "+part)
		}
	}
	return out
}

func (r *mdRenderer) list(n *ast.List, width int) []string {
	var out []string
	num := n.Start
	for item := n.FirstChild(); item != nil; item = item.NextSibling() {
		marker := "• "
		if n.IsOrdered() {
			marker = fmt.Sprintf("%d%c ", num, n.Marker)
			num++
		}
		pad := strings.Repeat(" ", ansi.StringWidth(marker))
		inner := r.blocks(item, width-len(pad))
		if len(inner) == 0 {
			inner = []string{""}
		}
		if len(out) > 0 && !n.IsTight {
			out = append(out, "")
		}
		for i, l := range inner {
			switch {
			case i == 0:
				out = append(out, mdMarker.render(marker)+l)
			case l == "":
				out = append(out, "")
			default:
				out = append(out, pad+l)
			}
		}
	}
	return out
}

// table lays a table out in columns as wide as their widest cell; where
// the terminal is narrower than the table, the widest columns narrow and
// their cells wrap (no text is cut), and a table that cannot fit at all
// is laid out as a list of its rows.
func (r *mdRenderer) table(n *east.Table, width int) []string {
	var rows [][]string
	var header int
	for row := n.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, renderSpans(r.inline(c, sgrNone)))
		}
		if row.Kind() == east.KindTableHeader {
			header = len(rows) + 1
		}
		rows = append(rows, cells)
	}
	cols := 0
	for _, row := range rows {
		cols = max(cols, len(row))
	}
	if cols == 0 {
		return nil
	}
	widths := make([]int, cols)
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	// Narrow the widest column until the table fits (3 columns of frame
	// between two cells), down to tableMinCol.
	for total := sum(widths) + 3*(cols-1); total > width; total-- {
		w := 0
		for i := range widths {
			if widths[i] > widths[w] {
				w = i
			}
		}
		if widths[w] <= tableMinCol {
			return tableAsList(rows, header, width)
		}
		widths[w]--
	}
	sep := mdFrame.render(" │ ")
	var out []string
	for ri, row := range rows {
		cells := make([][]string, cols)
		height := 1
		for i := range cols {
			c := ""
			if i < len(row) {
				c = row[i]
			}
			cells[i] = strings.Split(ansi.Wrap(c, widths[i], ""), "\n")
			height = max(height, len(cells[i]))
		}
		for l := range height {
			parts := make([]string, cols)
			for i := range cols {
				c := ""
				if l < len(cells[i]) {
					c = strings.TrimRight(cells[i][l], " ")
				}
				parts[i] = align(c, widths[i], n.Alignments, i)
			}
			out = append(out, strings.TrimRight(strings.Join(parts, sep), " "))
		}
		if ri+1 == header {
			rule := make([]string, cols)
			for i, w := range widths {
				rule[i] = strings.Repeat("─", w)
			}
			out = append(out, mdFrame.render(strings.Join(rule, "─┼─")))
		}
	}
	return out
}

// tableMinCol is the narrowest a table's column gets before the table is
// laid out as a list instead.
const tableMinCol = 6

// tableAsList lays out a table too wide for the terminal as a list: each
// row an item, each cell on its own line after its column's header.
func tableAsList(rows [][]string, header, width int) []string {
	var names []string
	if header > 0 {
		names = rows[header-1]
	}
	var out []string
	for ri, row := range rows {
		if ri+1 == header {
			continue
		}
		if len(out) > 0 {
			out = append(out, "")
		}
		for i, c := range row {
			line := c
			if i < len(names) && names[i] != "" {
				line = mdHeading.render(ansi.Strip(names[i])+":") + " " + c
			}
			marker := "  "
			if i == 0 {
				marker = mdMarker.render("• ")
			}
			for j, l := range strings.Split(ansi.Wrap(line, max(10, width-2), ""), "\n") {
				if j > 0 {
					marker = "  "
				}
				out = append(out, marker+strings.TrimRight(l, " "))
			}
		}
	}
	return out
}

func align(c string, width int, aligns []east.Alignment, col int) string {
	gap := width - ansi.StringWidth(c)
	if gap <= 0 {
		return c
	}
	a := east.AlignNone
	if col < len(aligns) {
		a = aligns[col]
	}
	switch a {
	case east.AlignRight:
		return strings.Repeat(" ", gap) + c
	case east.AlignCenter:
		return strings.Repeat(" ", gap/2) + c + strings.Repeat(" ", gap-gap/2)
	}
	return c + strings.Repeat(" ", gap)
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

// span is a run of inline text in one style; "\n" alone is a hard break.
type span struct {
	text  string
	style textStyle
}

// inline renders n's inline children in spans, st being the style around
// them (emphasis inside a link is both).
func (r *mdRenderer) inline(n ast.Node, st textStyle) []span {
	var out []span
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			out = append(out, span{string(c.Value(r.src)), st})
			switch {
			case c.HardLineBreak():
				out = append(out, span{"\n", st})
			case c.SoftLineBreak():
				out = append(out, span{" ", st})
			}
		case *ast.String:
			out = append(out, span{string(c.Value), st})
		case *ast.CodeSpan:
			var b strings.Builder
			for t := c.FirstChild(); t != nil; t = t.NextSibling() {
				if seg, ok := t.(*ast.Text); ok {
					b.Write(seg.Value(r.src))
				}
			}
			out = append(out, span{b.String(), mdCode})
		case *ast.Emphasis:
			if c.Level >= 2 {
				out = append(out, r.inline(c, st.with(sgrBold))...)
			} else {
				out = append(out, r.inline(c, st.with(sgrItalic))...)
			}
		case *east.Strikethrough:
			out = append(out, r.inline(c, st.with(sgrStrike))...)
		case *ast.Link:
			label := r.inline(c, st)
			out = append(out, label...)
			if dest := string(c.Destination); dest != "" && plainText(label) != dest {
				out = append(out, span{" ", st}, span{dest, mdLink})
			}
		case *ast.AutoLink:
			out = append(out, span{string(c.URL(r.src)), mdLink})
		case *ast.Image:
			out = append(out, span{"Image: ", st})
			out = append(out, r.inline(c, st)...)
			out = append(out, span{" → ", st}, span{string(c.Destination), mdLink})
		case *ast.RawHTML:
			for i := range c.Segments.Len() {
				seg := c.Segments.At(i)
				out = append(out, span{string(seg.Value(r.src)), st})
			}
		case *east.TaskCheckBox:
			box := "[ ] "
			if c.IsChecked {
				box = "[✓] "
			}
			out = append(out, span{box, mdMarker})
		default:
			out = append(out, r.inline(c, st)...)
		}
	}
	return out
}

func plainText(spans []span) string {
	var b strings.Builder
	for _, s := range spans {
		b.WriteString(s.text)
	}
	return b.String()
}

// renderSpans renders spans on one line.
func renderSpans(spans []span) string {
	var b strings.Builder
	for _, s := range spans {
		if s.text == "\n" {
			b.WriteString(" ")
			continue
		}
		b.WriteString(s.style.render(s.text))
	}
	return b.String()
}

// wrapSpans fills lines of at most width columns with the spans' words,
// cutting a word only when it is wider than a line. Each line is styled
// on its own, so no style runs from one line into the next.
func wrapSpans(spans []span, width int) []string {
	width = max(width, 10)
	// A word may be made of several spans ("**bold**text"); spaces
	// between words collapse to one.
	type token struct {
		parts []span // nil: a space
		w     int
		brk   bool // a hard line break
	}
	var toks []token
	addWord := func(p span) {
		if n := len(toks); n > 0 && toks[n-1].parts != nil {
			toks[n-1].parts = append(toks[n-1].parts, p)
			toks[n-1].w += ansi.StringWidth(p.text)
			return
		}
		toks = append(toks, token{parts: []span{p}, w: ansi.StringWidth(p.text)})
	}
	for _, s := range spans {
		if s.text == "\n" {
			toks = append(toks, token{brk: true})
			continue
		}
		rest := s.text
		for rest != "" {
			i := strings.IndexAny(rest, " \t\n")
			switch {
			case i == 0:
				rest = strings.TrimLeft(rest, " \t\n")
				toks = append(toks, token{})
			case i < 0:
				addWord(span{rest, s.style})
				rest = ""
			default:
				addWord(span{rest[:i], s.style})
				rest = rest[i:]
			}
		}
	}
	var lines []string
	var line []span
	lineW, space := 0, false
	flush := func() {
		lines = append(lines, renderSpans(line))
		line, lineW, space = nil, 0, false
	}
	for _, t := range toks {
		switch {
		case t.brk:
			flush()
			continue
		case t.parts == nil:
			space = lineW > 0
			continue
		}
		if space && lineW+1+t.w > width {
			flush()
		}
		if space {
			line = append(line, span{" ", sgrNone})
			lineW++
		}
		space = false
		if t.w > width-lineW {
			// Wider than a line: cut it.
			cut := strings.Split(ansi.Hardwrap(renderSpans(t.parts), width-lineW, false), "\n")
			for _, c := range cut[:len(cut)-1] {
				line = append(line, span{c, sgrNone})
				flush()
			}
			last := cut[len(cut)-1]
			line, lineW = append(line, span{last, sgrNone}), ansi.StringWidth(last)
			continue
		}
		line = append(line, t.parts...)
		lineW += t.w
	}
	if len(line) > 0 {
		flush()
	}
	return lines
}
