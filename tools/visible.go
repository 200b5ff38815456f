package tools

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Visible writes s for a person to read where s came from a command or a
// model and the reader must not mistake it for anything else: control
// characters (all but tab, newline included) and the bidirectional
// formatting characters that reorder what a terminal shows (U+202A–U+202E,
// U+2066–U+2069, U+200E, U+200F, U+061C) and the Unicode line and
// paragraph separators (U+2028, U+2029) as escapes (\x1b, \r, \n,
// \u202e), and bytes that are not UTF-8 as \xNN. Everything else, a
// backslash too, is left as it is, so a path reads as itself.
func Visible(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == 0x1b:
			b.WriteString(`\e`)
		case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case bidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r < 0x20 && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || bidi(r) {
			return true
		}
		i += size
	}
	return false
}

// bidi reports whether r is a bidirectional formatting character.
func bidi(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c ||
		r == 0x2028 || r == 0x2029 // line and paragraph separators: a new line in some renderers
}

// commandMargin starts every line of a quoted command: what follows it
// is the command's, never the server's own words.
const commandMargin = "  │ "

// QuotedCommand writes a command line for a permission question: each of
// its lines after [commandMargin], made [Visible], so nothing in it can
// read as a line of the question itself; at most max bytes of it.
func QuotedCommand(command string, max int) string {
	cut := ""
	if max > 0 && len(command) > max {
		command, cut = strings.ToValidUTF8(command[:max], ""), "…"
	}
	lines := strings.Split(command, "\n")
	for i, l := range lines {
		lines[i] = commandMargin + Visible(l)
	}
	return strings.Join(lines, "\n") + cut
}

// Subject is what a permission question is about, one line each, first
// in the question: the host and port a command connects to, the URL a
// call fetches, the files it reads and writes; each [Visible].
func (q *PermissionQuestion) Subject() []string {
	var out []string
	if q.URL != "" {
		what := "URL: "
		if q.Command != "" {
			what = "Connects to: "
		}
		out = append(out, what+Visible(q.URL))
	}
	for _, p := range q.Paths {
		verb := "Read: "
		if p.Write {
			verb = "Write: "
		}
		out = append(out, verb+Visible(p.Path))
	}
	return out
}
