package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// treeString lays out a parsed document: each node's kind, and what the
// renderer reads of it (text, alignments, checkbox, link, code).
func treeString(n gast.Node, src []byte) string {
	var b strings.Builder
	_ = gast.Walk(n, func(n gast.Node, entering bool) (gast.WalkStatus, error) {
		if !entering {
			b.WriteString(")")
			return gast.WalkContinue, nil
		}
		fmt.Fprintf(&b, "(%s", n.Kind())
		switch n := n.(type) {
		case *gast.Text:
			fmt.Fprintf(&b, " %q soft=%v hard=%v raw=%v", n.Segment.Value(src), n.SoftLineBreak(), n.HardLineBreak(), n.IsRaw())
		case *gast.AutoLink:
			fmt.Fprintf(&b, " %q %q %d", n.URL(src), n.Label(src), n.AutoLinkType)
		case *east.Table:
			fmt.Fprintf(&b, " %v", n.Alignments)
		case *east.TableCell:
			fmt.Fprintf(&b, " %v", n.Alignment)
		case *east.TaskCheckBox:
			fmt.Fprintf(&b, " %v", n.IsChecked)
		}
		if n.Type() == gast.TypeBlock {
			for i := 0; i < n.Lines().Len(); i++ {
				l := n.Lines().At(i)
				fmt.Fprintf(&b, " [%q]", l.Value(src))
			}
		}
		return gast.WalkContinue, nil
	})
	return b.String()
}

// TestGFMParser_reads_what_goldmarks_extensions_read: the chat's own copy
// of goldmark's table, strikethrough, task list and Linkify parsers, with
// the delimiter row and the task box read by hand and nothing built at
// start, parses every document of a corpus (tables with every alignment,
// escaped pipes in code spans, ragged rows, no delimiter row; ~ and ~~,
// ~~~; boxes checked, unchecked, not at an item's start; links with and
// without protocols, trailing punctuation and parentheses, entities,
// e-mail addresses) into the tree goldmark's extension package makes.
func TestGFMParser_reads_what_goldmarks_extensions_read(t *testing.T) {
	t.Parallel()
	theirs := goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough,
		extension.TaskList, extension.Linkify)).Parser()
	ours := gfmParser()
	docs := []string{
		"| a | b | c | d |\n|:--|--:|:-:|---|\n| 1 | 2 | 3 | 4 |\n| x |\n| 1 | 2 | 3 | 4 | 5 |\n",
		"a | b\n-- | --\n`x \\| y` | z \\| w\n",
		"para line\n| h |\n| - |\n| c |\n",
		"| h | i |\n| :- | -: |\n",
		"| not | a table |\n| -x- | --- |\n",
		"|a|\n|:-:|\n|b|",
		"   | h |\n   |---|\n    | not |\n",
		"| h |\n|- :|\n",
		"~one~ ~~two~~ ~~~three~~~ a~b~c ~~ x ~~",
		"- [ ] open\n- [x] done\n- [X] Done\n- [y] no\n- text [ ] later\n1. [ ]\tnumbered\n\n[ ] not in a list\n",
		"- [ ]\n- [x]  \n",
		"see https://example.com/path?q=1&r=2. and (http://a.example/x_(y)) or www.example.org/z;",
		"ftp://files.example.net/a, https://x.example/&amp; www.x and a@b.example.com. c@d-e.example_ f@g",
		"*http://bold.example* _www.under.example_ ~https://strike.example~",
		"[a link](https://in.link.example) and [http://label.example](u)",
		"mail me at someone@example.com or user.name+tag@sub.example.org.",
		"# heading\n\n> quote with https://q.example\n\n```\n| not | table |\n|---|---|\n```\n",
		"",
	}
	for _, d := range docs {
		src := []byte(d)
		want := treeString(theirs.Parse(text.NewReader(src)), src)
		got := treeString(ours.Parse(text.NewReader(src)), src)
		if got != want {
			t.Errorf("%q:\n got  %s\n want %s", d, got, want)
		}
	}
}

// TestDelimAlignment: each form of a delimiter row's cell, and what is
// none.
func TestDelimAlignment(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		col  string
		want east.Alignment
		ok   bool
	}{
		{"---", east.AlignNone, true}, {" :-- ", east.AlignLeft, true}, {"--:", east.AlignRight, true},
		{"\t:-:\t", east.AlignCenter, true}, {":", east.AlignNone, false}, {"::", east.AlignNone, false},
		{"", east.AlignNone, false}, {"-:-", east.AlignNone, false}, {": --", east.AlignNone, false},
	} {
		got, ok := delimAlignment([]byte(tt.col))
		if got != tt.want || ok != tt.ok {
			t.Errorf("delimAlignment(%q) = %v, %v; want %v, %v", tt.col, got, ok, tt.want, tt.ok)
		}
	}
}
