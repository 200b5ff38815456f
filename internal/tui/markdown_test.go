package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestMarkdown_layout(t *testing.T) {
	t.Parallel()
	src := "# Title\n\nSome *italic* and **bold `code` text** with a [link](https://example.com), " +
		"~~gone~~ and a sentence long enough to wrap.\n\n## Steps\n\n1. First\n2. Second\n   - nested\n   - more\n\n" +
		"- [x] done\n- [ ] todo\n\n> quoted\n\n```go\nfunc main() {\n\tx := 42\n}\n```\n\n" +
		"| Name | Size |\n|------|-----:|\n| a.go | 10 |\n| bbbbbb.go | 2000 |\n\n---\n\n![logo](l.png) <b>raw</b>"
	var m markdown
	got := ansi.Strip(m.render(src, 44))
	want := `  # Title

  Some italic and bold code text with a
  link https://example.com, gone and a
  sentence long enough to wrap.

  ## Steps

  1. First
  2. Second
     • nested
     • more

  • [✓] done
  • [ ] todo

  │ quoted

    func main() {
        x := 42
    }

  Name      │ Size
  ──────────┼─────
  a.go      │   10
  bbbbbb.go │ 2000

  ────────────────────────────────────────

  Image: logo → l.png <b>raw</b>`
	if got != want {
		t.Errorf("rendered:\n%s\nwant:\n%s", got, want)
	}
}

func TestMarkdown_styles_stay_on_their_line(t *testing.T) {
	t.Parallel()
	src := "**a bold run of words long enough to be wrapped over several lines of a narrow terminal**\n\n" +
		"```python\ns = \"\"\"one\ntwo\"\"\"  # note\n```\n\n| a | b |\n|---|---|\n| `x` | **y** |"
	var m markdown
	out := m.render(src, 30)
	for _, l := range strings.Split(out, "\n") {
		if w := ansi.StringWidth(l); w > 30 {
			t.Errorf("line %q is %d columns wide, over 30", l, w)
		}
		// Every style opened on a line is reset on it: the UI prints
		// lines after margins and prefixes of its own.
		if open, reset := strings.LastIndex(l, "\x1b["), strings.LastIndex(l, "\x1b[m"); open >= 0 && open != reset {
			t.Errorf("line %q ends inside a style", l)
		}
	}
	if !strings.Contains(out, "\x1b[1ma\x1b[m") || !strings.Contains(out, "\x1b[32m\"\"\"one\x1b[m") ||
		!strings.Contains(out, "\x1b[32mtwo\"\"\"\x1b[m") || !strings.Contains(out, "\x1b[90;3m# note\x1b[m") {
		t.Errorf("bold, a string over two lines or a comment not styled:\n%q", out)
	}
}

func TestMarkdown_wraps_a_word_wider_than_the_line(t *testing.T) {
	t.Parallel()
	var m markdown
	long := strings.Repeat("x", 40) // the line holds 26
	got := ansi.Strip(m.render("see "+long+" end", 30))
	want := "  see\n  " + long[:26] + "\n  " + long[26:] + " end"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestHighlight(t *testing.T) {
	t.Parallel()
	kw := func(w string) string { return hlKeyword.render(w) }
	for _, tc := range []struct {
		lang, code string
		want       []string
	}{
		{"go", "func f() string { return `a\nb` } // c", []string{kw("func"), hlBuiltin.render("string"), kw("return"),
			hlString.render("`a") + "\n" + hlString.render("b`"), hlComment.render("// c")}},
		{"Python", "def f(x=1.5e3):\n    return None  # c", []string{kw("def"), hlNumber.render("1.5e3"), hlBuiltin.render("None"), hlComment.render("# c")}},
		{"ts", "const a: number = 0x1f; /* c */", []string{kw("const"), hlBuiltin.render("number"), hlNumber.render("0x1f"), hlComment.render("/* c */")}},
		{"bash", "for f in *.go; do echo \"$f\" ${#f}; done # c", []string{kw("for"), kw("do"), hlString.render(`"$f"`), hlBuiltin.render("${#f}"), hlComment.render("# c")}},
		{"sql", "SELECT name FROM t -- c", []string{kw("SELECT"), kw("FROM"), hlComment.render("-- c")}},
		{"json", `{"a": true, "n": 12}`, []string{hlString.render(`"a"`), hlBuiltin.render("true"), hlNumber.render("12")}},
		{"diff", "@@ -1 +1 @@\n-old\n+new", []string{sgrRed.render("-old"), sgrGreen.render("+new")}},
		{"html", `<a href="x">t</a>`, []string{hlKeyword.render("<a href="), hlString.render(`"x"`)}},
	} {
		got := highlight(tc.code, tc.lang)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tc.lang, got, w)
			}
		}
		if ansi.Strip(got) != tc.code {
			t.Errorf("%s: the text changed: %q", tc.lang, ansi.Strip(got))
		}
	}
	if got := highlight("func x", "brainfuck"); got != "func x" {
		t.Errorf("a language the table lacks: %q, want the code as it is", got)
	}
}

// A table narrower than its text wraps its cells (no text is cut); one
// that cannot fit at all becomes a list of its rows; a long code line
// wraps inside its block.
func TestMarkdown_wide_table_and_code_line_wrap(t *testing.T) {
	t.Parallel()
	var m markdown
	src := "| Key | Value |\n|---|---|\n| alpha | one two three four five six seven eight nine ten |\n"
	got := ansi.Strip(m.render(src, 30))
	for _, l := range strings.Split(got, "\n") {
		if ansi.StringWidth(l) > 30 {
			t.Errorf("line wider than 30: %q", l)
		}
	}
	if strings.Contains(got, "…") || !strings.Contains(strings.Join(strings.Fields(got), " "), "one two three") ||
		!strings.Contains(got, "ten") || !strings.Contains(got, "│") {
		t.Errorf("the table was not wrapped in its columns:\n%s", got)
	}
	wide := "| A | B | C | D | E | F |\n|---|---|---|---|---|---|\n| aaaaaaaaa | bbbbbbbbb | ccccccccc | ddddddddd | eeeeeeeee | fffffffff |\n"
	got = ansi.Strip(m.render(wide, 30))
	if !strings.Contains(got, "• A: aaaaaaaaa") || !strings.Contains(got, "  F: fffffffff") {
		t.Errorf("a table that cannot fit is not a list:\n%s", got)
	}
	got = ansi.Strip(m.render("```\n"+strings.Repeat("x", 70)+"\n```\n", 30))
	lines := strings.Split(got, "\n")
	if len(lines) != 3 {
		t.Fatalf("the code line is not wrapped in 3 rows:\n%s", got)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "    x") || ansi.StringWidth(l) > 30 {
			t.Errorf("a wrapped code row left its block: %q", l)
		}
	}
}
